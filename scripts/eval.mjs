// `npm run eval`: answers two question sets with the built CLI (next to the BM25 baseline over
// 40-line windows), scores the answers with the shared reference scorer, and fails when a score falls
// below the one recorded in eval/record.json by more than the tolerance. The sets: the shared dev
// questions, and eval/heldout.jsonl, written from the corpora's sources alone after search had been
// tuned on dev (see eval/README.md), which tells how far the dev scores carry over to new questions.
// `npm run eval -- --record` raises the record to any better score (it never lowers one).
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CORPUS_ROOT, EVAL_DIR, ensureCorpora } from './corpora.mjs';

const TOLERANCE = 0.02;
const RECORD = path.resolve('eval', 'record.json');
const MODEL = path.resolve(
  process.env.CODE_ORACLE_EVAL_MODEL ?? path.join('models', 'potion-base-2M'),
);
const SETS = {
  'dev.jsonl': path.join(EVAL_DIR, 'dev.jsonl'),
  'heldout.jsonl': path.resolve('eval', 'heldout.jsonl'),
};

ensureCorpora();
const env = { ...process.env, CODE_ORACLE_HOME: path.resolve('.cache', 'eval-home') };
const current = Object.fromEntries(
  Object.entries(SETS).map(([name, questions]) => [name, answer(name, questions)]),
);

const stored = JSON.parse(readFileSync(RECORD, 'utf8'));
if (process.argv.includes('--record')) {
  const sets = Object.fromEntries(
    Object.entries(current).map(([name, scores]) => [
      name,
      raised(stored.sets[name] ?? {}, scores),
    ]),
  );
  writeFileSync(
    RECORD,
    `${JSON.stringify({ budgetLines: 600, tolerance: TOLERANCE, sets }, null, 2)}\n`,
  );
  console.log(
    `Raised the record in ${path.relative(process.cwd(), RECORD)} to every better score.`,
  );
  process.exit(0);
}

const failures = [];
for (const [name, record] of Object.entries(stored.sets)) {
  console.log(
    `\n${name.padEnd(18)}${'recall'.padStart(8)}${'record'.padStart(8)}${'mrr'.padStart(8)}${'record'.padStart(8)}`,
  );
  for (const [group, recorded] of Object.entries(record)) {
    const now = current[name]?.[group] ?? { recall: 0, mrr: 0 };
    console.log(
      `${group.padEnd(18)}${now.recall.toFixed(3).padStart(8)}${recorded.recall.toFixed(3).padStart(8)}${now.mrr.toFixed(3).padStart(8)}${recorded.mrr.toFixed(3).padStart(8)}`,
    );
    for (const metric of ['recall', 'mrr']) {
      if (now[metric] < recorded[metric] - TOLERANCE)
        failures.push(
          `${name} ${group} ${metric} ${now[metric].toFixed(3)} < record ${recorded[metric].toFixed(3)} - ${TOLERANCE}`,
        );
    }
  }
}
if (failures.length) {
  console.log(`\nsearch eval: FAIL\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\nsearch eval: ok (every score within the tolerance of its record)');

/** Answers one set and scores it: the whole set and each category, on recall (the headline) and MRR@10. */
function answer(name, questions) {
  const results = path.resolve('.cache', 'eval', name.replace(/\.jsonl$/, '-results.jsonl'));
  mkdirSync(path.dirname(results), { recursive: true });
  console.log(`\n== ${name}`);
  execFileSync(
    process.execPath,
    [
      'dist/cli.js',
      'eval',
      '--questions',
      questions,
      '--corpus-root',
      CORPUS_ROOT,
      '--corpora',
      path.join(EVAL_DIR, 'corpora.json'),
      '--out',
      results,
      '--model',
      MODEL,
      '--baseline',
    ],
    { stdio: 'inherit', env },
  );
  const scored = JSON.parse(
    execFileSync(
      process.execPath,
      [path.join(EVAL_DIR, 'score.mjs'), '--questions', questions, '--results', results, '--json'],
      { encoding: 'utf8' },
    ),
  );
  return Object.fromEntries(
    Object.entries(scored)
      .filter(([group]) => group === 'overall' || group.startsWith('cat:'))
      .map(([group, metrics]) => [
        group,
        { recall: round(metrics.recall), mrr: round(metrics.mrr) },
      ]),
  );
}

/** The better of the recorded and the current score of every group and metric. */
function raised(recorded, now) {
  const groups = new Set([...Object.keys(recorded), ...Object.keys(now)]);
  return Object.fromEntries(
    [...groups].map((group) => [
      group,
      {
        recall: Math.max(recorded[group]?.recall ?? 0, now[group]?.recall ?? 0),
        mrr: Math.max(recorded[group]?.mrr ?? 0, now[group]?.mrr ?? 0),
      },
    ]),
  );
}

function round(value) {
  return Math.round(value * 1000) / 1000;
}
