/**
 * What a user could do without Code Oracle, measured beside it in the same run: SQLite FTS5 over
 * 40-line windows (the `sqlite3` command, one process answering every query with `.timer on`) and
 * ripgrep reading every file (`rg`, one process per query).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { queryWords, type BenchQuery } from './scale-queries';

const WINDOW_LINES = 40;

export interface BaselineTimes {
  readonly p50Ms: number;
  readonly p95Ms: number;
}

/** Whether a command runs here; the bench names what is missing instead of failing. */
export function available(command: string): boolean {
  return spawnSync(command, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Builds an FTS5 table of 40-line windows and times every query against it (the build is not timed). */
export function fts5Times(
  files: readonly { path: string; source: string }[],
  queries: readonly BenchQuery[],
  workDir: string,
): BaselineTimes {
  rmSync(workDir, { recursive: true, force: true });
  mkdirSync(workDir, { recursive: true });
  const csv = path.join(workDir, 'windows.csv');
  const rows: string[] = [];
  for (const file of files) {
    const lines = file.source.split('\n');
    for (let start = 0; start < lines.length; start += WINDOW_LINES)
      rows.push(
        [file.path, String(start + 1), lines.slice(start, start + WINDOW_LINES).join('\n')]
          .map(csvField)
          .join(','),
      );
  }
  writeFileSync(csv, `${rows.join('\n')}\n`);
  const database = path.join(workDir, 'windows.db');
  execFileSync('sqlite3', [
    database,
    'CREATE VIRTUAL TABLE windows USING fts5(path UNINDEXED, start UNINDEXED, body);',
    '.mode csv',
    `.import ${csv} windows`,
  ]);
  const script = [
    '.timer on',
    '.output /dev/null',
    ...queries.map((query) => {
      const match = queryWords(query.text)
        .map((word) => `"${word.replace(/"/g, '""')}"`)
        .join(' OR ');
      return `SELECT path, start FROM windows WHERE windows MATCH '${match.replace(/'/g, "''")}' ORDER BY rank LIMIT 10;`;
    }),
  ].join('\n');
  // one warm-up pass brings the table into the page cache, as a user's second query would find it
  runSqlite(database, script);
  const output = runSqlite(database, script);
  const times = [...output.matchAll(/Run Time: real ([\d.]+)/g)].map(
    (match) => Number(match[1]) * 1000,
  );
  if (times.length !== queries.length)
    throw new Error(`sqlite3 timed ${times.length} of ${queries.length} queries`);
  return summarise(times);
}

function runSqlite(database: string, script: string): string {
  return execFileSync('sqlite3', [database], { input: script, encoding: 'utf8' });
}

/** Times ripgrep over the whole tree per query: its words as fixed strings, any of them. */
export function ripgrepTimes(root: string, queries: readonly BenchQuery[]): BaselineTimes {
  const times: number[] = [];
  for (const query of queries) {
    const words = queryWords(query.text).filter((word) => word.length >= 4);
    const patterns = (words.length ? words : queryWords(query.text)).slice(0, 4);
    const started = performance.now();
    spawnSync(
      'rg',
      ['-i', '-l', '-F', '--no-messages', ...patterns.flatMap((p) => ['-e', p]), '.'],
      {
        cwd: root,
        stdio: 'ignore',
      },
    );
    times.push(performance.now() - started);
  }
  return summarise(times);
}

function csvField(value: string): string {
  return `"${value.replace(/"/g, '""')}"`;
}

export function summarise(times: readonly number[]): BaselineTimes {
  return { p50Ms: round(percentile(times, 0.5)), p95Ms: round(percentile(times, 0.95)) };
}

export function percentile(values: readonly number[], share: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * share))]!;
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
