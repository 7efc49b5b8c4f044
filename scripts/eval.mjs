// `npm run eval`: scores search on both suites, with the shipped embedding model and with none,
// and fails when a score falls below the one recorded in eval/record.json by more than the
// tolerance. The suites (see scripts/eval-suites.mjs and eval/README.md):
//   - the line question sets on the five pinned corpora: the shared dev questions and
//     eval/heldout.jsonl (recall within 600 lines and MRR@10, overall and per category);
//   - the peer suite's development half in ../shared/eval/peer (file-level nDCG@10, mean over its
//     7 repositories).
// `npm run eval -- --record` raises the record to any better score (it never lowers one).
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EVAL_DIR, ensureCorpora } from './corpora.mjs';
import { lineScores, peerScore } from './eval-suites.mjs';

const TOLERANCE = 0.02;
const RECORD = path.resolve('eval', 'record.json');
const LINE_SETS = {
  'dev.jsonl': path.join(EVAL_DIR, 'dev.jsonl'),
  'heldout.jsonl': path.resolve('eval', 'heldout.jsonl'),
};
const SETTINGS = [
  { label: 'model', withModel: true },
  { label: 'none', withModel: false },
];

ensureCorpora();
const current = {};
for (const { label, withModel } of SETTINGS) {
  for (const [name, questions] of Object.entries(LINE_SETS)) {
    console.log(`\n== ${name}, model: ${label}`);
    current[`${name}/${label}`] = lineScores(name, questions, { withModel });
  }
  console.log(`\n== peer development half, model: ${label}`);
  current[`peer/${label}`] = { overall: { ndcg: peerScore({ withModel }) } };
}

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
console.log(
  `\n${'set'.padEnd(22)}${'group'.padEnd(18)}${'metric'.padEnd(8)}${'now'.padStart(8)}${'record'.padStart(8)}`,
);
for (const [name, record] of Object.entries(stored.sets)) {
  for (const [group, recorded] of Object.entries(record)) {
    for (const [metric, value] of Object.entries(recorded)) {
      const now = current[name]?.[group]?.[metric] ?? 0;
      console.log(
        `${name.padEnd(22)}${group.padEnd(18)}${metric.padEnd(8)}${now.toFixed(3).padStart(8)}${value.toFixed(3).padStart(8)}`,
      );
      if (now < value - TOLERANCE)
        failures.push(
          `${name} ${group} ${metric} ${now.toFixed(3)} < record ${value.toFixed(3)} - ${TOLERANCE}`,
        );
    }
  }
}
if (failures.length) {
  console.log(`\nsearch eval: FAIL\n  ${failures.join('\n  ')}`);
  process.exit(1);
}
console.log('\nsearch eval: ok (every score within the tolerance of its record)');

/** The better of the recorded and the current score of every group and metric. */
function raised(recorded, now) {
  const groups = new Set([...Object.keys(recorded), ...Object.keys(now)]);
  return Object.fromEntries(
    [...groups].map((group) => {
      const metrics = new Set([
        ...Object.keys(recorded[group] ?? {}),
        ...Object.keys(now[group] ?? {}),
      ]);
      return [
        group,
        Object.fromEntries(
          [...metrics].map((metric) => [
            metric,
            Math.max(recorded[group]?.[metric] ?? 0, now[group]?.[metric] ?? 0),
          ]),
        ),
      ];
    }),
  );
}
