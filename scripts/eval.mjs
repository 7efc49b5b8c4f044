// `npm run eval`: answers the shared dev questions with the built CLI (next to the BM25 baseline over
// 40-line windows), scores the answers with the shared reference scorer, and fails when a score falls
// below the one recorded in eval/record.json by more than the tolerance. `npm run eval -- --record`
// writes the new scores as the record (raise it as search improves; never lower it to pass).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CORPUS_ROOT, EVAL_DIR, ensureCorpora } from './corpora.mjs';

const TOLERANCE = 0.02;
const RECORD = path.resolve('eval', 'record.json');
const MODEL = path.resolve(process.env.CODE_ORACLE_EVAL_MODEL ?? path.join(EVAL_DIR, '..', 'models', 'potion-base-2M'));
const questions = path.join(EVAL_DIR, 'dev.jsonl');
const results = path.resolve('.cache', 'eval', 'dev-results.jsonl');
mkdirSync(path.dirname(results), { recursive: true });

ensureCorpora();
const env = { ...process.env, CODE_ORACLE_HOME: path.resolve('.cache', 'eval-home') };
execFileSync(process.execPath, ['dist/cli.js', 'eval', '--questions', questions, '--corpus-root', CORPUS_ROOT, '--out', results, '--model', MODEL, '--baseline'], { stdio: 'inherit', env });
const scored = JSON.parse(execFileSync(process.execPath, [path.join(EVAL_DIR, 'score.mjs'), '--questions', questions, '--results', results, '--json'], { encoding: 'utf8' }));

// The groups guarded: the whole set and each category, on recall (the headline) and MRR@10.
const current = Object.fromEntries(
  Object.entries(scored)
    .filter(([group]) => group === 'overall' || group.startsWith('cat:'))
    .map(([group, metrics]) => [group, { recall: round(metrics.recall), mrr: round(metrics.mrr) }]),
);

if (process.argv.includes('--record')) {
  writeFileSync(RECORD, `${JSON.stringify({ questions: 'dev.jsonl', budgetLines: 600, tolerance: TOLERANCE, scores: current }, null, 2)}\n`);
  console.log(`Recorded the scores in ${path.relative(process.cwd(), RECORD)}.`);
  process.exit(0);
}

const record = JSON.parse(readFileSync(RECORD, 'utf8')).scores;
const failures = [];
console.log(`\n${'group'.padEnd(18)}${'recall'.padStart(8)}${'record'.padStart(8)}${'mrr'.padStart(8)}${'record'.padStart(8)}`);
for (const [group, recorded] of Object.entries(record)) {
  const now = current[group] ?? { recall: 0, mrr: 0 };
  console.log(`${group.padEnd(18)}${now.recall.toFixed(3).padStart(8)}${recorded.recall.toFixed(3).padStart(8)}${now.mrr.toFixed(3).padStart(8)}${recorded.mrr.toFixed(3).padStart(8)}`);
  for (const metric of ['recall', 'mrr']) {
    if (now[metric] < recorded[metric] - TOLERANCE) failures.push(`${group} ${metric} ${now[metric].toFixed(3)} < record ${recorded[metric].toFixed(3)} - ${TOLERANCE}`);
  }
}
if (failures.length) {
  console.log(`\nsearch eval: FAIL\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\nsearch eval: ok (every score within the tolerance of its record)');

function round(value) {
  return Math.round(value * 1000) / 1000;
}
