import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../../src/engine/engine';
import { storeSnapshot } from '../helpers/snapshot';

/**
 * What the reliability campaign needs: its sizes (short for CI, long on demand), a seeded random
 * source, generated workspaces and their random edits, and the CLI run as a real process.
 */
const LONG = process.env.RELIABILITY === 'long';

function size(name: string, short: number, long: number): number {
  const value = Number(process.env[`RELIABILITY_${name}`]);
  return Number.isFinite(value) && value > 0 ? value : LONG ? long : short;
}

export const SIZES = {
  files: size('FILES', 120, 1500),
  kills: size('KILLS', 3, 20),
  edits: size('EDITS', 100, 1000),
  branchFiles: size('BRANCH_FILES', 300, 5000),
  concurrent: size('CONCURRENT', 6, 50),
  saves: size('SAVES', 200, 2000),
  fuzz: size('FUZZ', 1000, 10000),
};

export const SEED = Number(process.env.RELIABILITY_SEED ?? 20261124);

export const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

/** mulberry32: small, seeded, good enough to pick files and moments. */
export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  int(below: number): number {
    return Math.floor(this.next() * below);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** A Python module that calls its neighbour, raises, documents itself: facts, calls, chunks. */
export function pythonModule(index: number, total: number, variant = 0): string {
  const next = (index + 1) % total;
  return (
    `from .mod${next} import f${next}\n\n\n` +
    `class Worker${index}:\n    """Keeps the state of step ${index} (variant ${variant})."""\n\n` +
    `    def run(self, x):\n        return f${index}(x) + ${variant}\n\n\n` +
    `def f${index}(x):\n    """Turns ${index} into ${next} for ledger ${variant}."""\n` +
    `    if x < 0:\n        raise ValueError("negative input to f${index}")\n` +
    `    return f${next}(x - 1) + ${variant}\n`
  );
}

export function pythonTree(files: number, folders = 12): Record<string, string> {
  const tree: Record<string, string> = {};
  for (let i = 0; i < files; i++) tree[`pkg${i % folders}/mod${i}.py`] = pythonModule(i, files);
  return tree;
}

/** Files under `root` (relative, posix), skipping dot folders. */
export function listFiles(root: string, under = ''): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(path.join(root, under), { withFileTypes: true })) {
    if (entry.name.startsWith('.')) continue;
    const relative = under ? `${under}/${entry.name}` : entry.name;
    if (entry.isDirectory()) out.push(...listFiles(root, relative));
    else out.push(relative);
  }
  return out.sort();
}

export interface Edits {
  readonly changed: string[];
  readonly removed: string[];
}

/**
 * Random edits of a generated tree: rewrites, deletes (sometimes a folder's last file), renames
 * into other folders, new files. Returns the paths touched, as an editor would report them.
 */
export function randomEdits(root: string, random: Random, count: number): Edits {
  const changed: string[] = [];
  const removed: string[] = [];
  for (let i = 0; i < count; i++) {
    const files = listFiles(root).filter((file) => file.endsWith('.py'));
    const op = random.int(10);
    const file = random.pick(files);
    const index = Number(/mod(\d+)/.exec(file)?.[1] ?? random.int(1000));
    if (op < 5 || files.length < 20) {
      writeFileSync(path.join(root, file), pythonModule(index, 1000, random.int(1_000_000)));
      changed.push(file);
    } else if (op < 7) {
      rmSync(path.join(root, file));
      removed.push(file);
    } else if (op < 9) {
      const target = `pkg${random.int(16)}/mod${index}_${random.int(1_000_000)}.py`;
      mkdirSync(path.dirname(path.join(root, target)), { recursive: true });
      renameSync(path.join(root, file), path.join(root, target));
      removed.push(file);
      changed.push(target);
    } else {
      const target = `new${random.int(4)}/mod${random.int(1_000_000)}.py`;
      mkdirSync(path.dirname(path.join(root, target)), { recursive: true });
      writeFileSync(path.join(root, target), pythonModule(random.int(1000), 1000, random.int(9)));
      changed.push(target);
    }
  }
  return { changed, removed };
}

export interface CliRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

export function spawnCli(args: readonly string[]): ChildProcess {
  return spawn(process.execPath, [CLI, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, CODE_ORACLE_HOME: process.env.CODE_ORACLE_HOME ?? '' },
  });
}

export function finished(child: ChildProcess): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  return new Promise((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })),
  );
}

export function runCli(args: readonly string[]): Promise<CliRun> {
  return finished(spawnCli(args));
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Bytes under a folder. */
export function folderBytes(folder: string): number {
  let total = 0;
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const full = path.join(folder, entry.name);
    total += entry.isDirectory() ? folderBytes(full) : statSync(full).size;
  }
  return total;
}

export function journalOpen(storeDir: string): boolean {
  return existsSync(path.join(storeDir, 'pending.json'));
}

/** Queries whose top ten must agree between an updated index and a fresh one. */
export const QUERIES = [
  'negative input',
  'turns into ledger',
  'Worker state run',
  'ValueError',
  'f12',
  'which function raises for a negative value',
  'keeps the state of step',
  'mod3 import',
];

/** The index's content and the top ten of every query: what "equals a fresh index" means. */
export async function observable(engine: Engine): Promise<unknown> {
  const results: Record<string, string[]> = {};
  for (const query of QUERIES) {
    const result = await engine.search({ query });
    if (!result.ok) throw new Error(result.error.message);
    results[query] = result.value.spans
      .slice(0, 10)
      .map((span) => `${span.path}:${span.startLine}-${span.endLine}`);
  }
  return { store: await storeSnapshot(engine), results };
}
