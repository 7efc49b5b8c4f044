// `npm run eval:ablate`: every stage of the ranking stack (src/engine/search/stages.ts) switched off
// in turn, measured on the line dev set (recall within 600 lines, MRR@10; ../shared/eval/dev.jsonl
// over the five corpora) and on the peer suite's development half (file-level nDCG@10, mean over
// repositories; ../shared/eval/peer), each with the shipped model and with none. One table: the
// full stack's scores, then each stage's effect (full minus stage off: positive means it helps).
// `--stages a,b` measures only those; `--json FILE` also writes the numbers.
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { EVAL_DIR, ensureCorpora } from './corpora.mjs';
import { lineScores, peerScore } from './eval-suites.mjs';

const stageSource = readFileSync(path.resolve('src', 'engine', 'search', 'stages.ts'), 'utf8');
const stageKinds = new Map(
  [...stageSource.matchAll(/name: '([\w-]+)',\s*kind: '([\w-]+)'/g)].map((match) => [
    match[1],
    match[2],
  ]),
);
const needsModel = new Set(
  [...stageSource.matchAll(/name: '([\w-]+)',[^}]*needsModel: true/g)].map((match) => match[1]),
);
const allStages = [...stageKinds.keys()];
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const stages = option('--stages')?.split(',') ?? allStages;

ensureCorpora();
const DEV = path.join(EVAL_DIR, 'dev.jsonl');
const SETTINGS = [
  { label: 'model', withModel: true },
  { label: 'none', withModel: false },
];

function measure(ablate) {
  return SETTINGS.map(({ withModel }) => {
    const line = lineScores('dev.jsonl', DEV, { withModel, ablate, quiet: true }).overall;
    return { recall: line.recall, mrr: line.mrr, peer: peerScore({ withModel, ablate }) };
  });
}

const columns = SETTINGS.flatMap(({ label }) => [
  `recall/${label}`,
  `mrr/${label}`,
  `peer/${label}`,
]);
const cells = (scores) => scores.flatMap((score) => [score.recall, score.mrr, score.peer]);
const fmt = (value, signed) =>
  (signed && value > 0 ? '+' : '') + value.toFixed(3).replace(/^-0\.000$/, '0.000');

console.log(
  `\n${'stage'.padEnd(18)}${columns.map((column) => column.padStart(13)).join('')}  verdict`,
);
const full = cells(measure([]));
console.log(`${'full stack'.padEnd(18)}${full.map((value) => fmt(value).padStart(13)).join('')}`);
const rows = [];
for (const stage of stages) {
  const without = cells(measure([stage]));
  const effect = full.map((value, i) => Math.round((value - without[i]) * 1000) / 1000);
  const helps = effect.filter((value) => value > 0).length;
  const hurts = effect.filter((value) => value < 0).length;
  // Keep: helps the line set and the peer set, and hurts neither, with and without a model. A
  // stage that only orders the files list cannot move the line scorer: it must help the peer set
  // in both columns, and the line set must not move.
  const lineHelps = effect.some((value, i) => i % 3 !== 2 && value > 0);
  const peerHelps = effect.some((value, i) => i % 3 === 2 && value > 0);
  // a stage that needs a model cannot move the columns without one: it must help where it can
  const peerHelpsBoth = effect.every(
    (value, i) => i % 3 !== 2 || value > 0 || (needsModel.has(stage) && i >= 3 && value === 0),
  );
  const keep =
    stageKinds.get(stage) === 'file-order'
      ? !hurts && !lineHelps && peerHelpsBoth
      : !hurts && lineHelps && peerHelps;
  const verdict = keep ? 'keep' : `remove (helps ${helps}, hurts ${hurts})`;
  rows.push({ stage, without, effect, verdict });
  console.log(
    `${stage.padEnd(18)}${effect.map((value) => fmt(value, true).padStart(13)).join('')}  ${verdict}`,
  );
}
const json = option('--json');
if (json) writeFileSync(json, `${JSON.stringify({ columns, full, rows }, null, 2)}\n`);
