// `node scripts/eval-misses.mjs` (after `npm run build`): where search loses its
// points, by mechanism. Runs the line dev set and the peer development half with the shipped model
// and with none, each question traced (`code-oracle eval --trace`), and prints for each setting the
// recall each mechanism loses on the line set (overall and per category) and the nDCG@10 each
// loses on the peer half (mean over repositories). The mechanisms are in scripts/eval-mechanisms.mjs.
// `--json FILE` also writes the numbers, and each missed gold line of the line set (question, path,
// line, mechanism), to read the misses of one mechanism one by one. `--peer-only` leaves out the
// line set: a change to the files list's order alone cannot move it (its questions are scored on
// the spans, not on the files).
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { EVAL_DIR, ensureCorpora } from './corpora.mjs';
import { lineScores, PEER_DIR, peerScore, resultsPath } from './eval-suites.mjs';
import { LINE_MECHANISMS, lineMisses, PEER_MECHANISMS, peerMisses } from './eval-mechanisms.mjs';

const BUDGET_LINES = 600;
const DEV = path.join(EVAL_DIR, 'dev.jsonl');
const readRows = (file) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line));

ensureCorpora();
const { loadBench } = await import(pathToFileURL(path.join(PEER_DIR, 'lib.mjs')).href);
const { repos } = loadBench(PEER_DIR);
const report = {};
const peerOnly = process.argv.includes('--peer-only');

for (const { label, withModel } of [
  { label: 'model', withModel: true },
  { label: 'none', withModel: false },
]) {
  const line = peerOnly
    ? null
    : lineScores('dev.jsonl', DEV, { withModel, quiet: true, trace: true }).overall;
  const peer = peerScore({ withModel, trace: true });
  report[label] = {
    ...(line && { line: lineTable(resultsPath('dev.jsonl', { withModel, trace: true })) }),
    peer: peerTable(resultsPath('peer', { withModel, trace: true })),
  };
  print(label, line, peer, report[label]);
}
const json = process.argv.includes('--json') && process.argv[process.argv.indexOf('--json') + 1];
if (json) writeFileSync(json, `${JSON.stringify(report, null, 2)}\n`);

/** Recall lost per mechanism (mean over questions), overall and per category, and each missed gold line. */
function lineTable(resultsFile) {
  const questions = readRows(DEV);
  const results = new Map(readRows(resultsFile).map((row) => [row.id, row]));
  const overall = {};
  const byCategory = {};
  const lines = [];
  for (const question of questions) {
    const result = results.get(question.id);
    if (!result) throw new Error(`no result for ${question.id} in ${resultsFile}`);
    const inCategory = questions.filter((other) => other.category === question.category).length;
    for (const { path: goldPath, line, share, mechanism } of lineMisses(
      question,
      result,
      BUDGET_LINES,
    )) {
      overall[mechanism] = (overall[mechanism] ?? 0) + share / questions.length;
      const category = (byCategory[question.category] ??= {});
      category[mechanism] = (category[mechanism] ?? 0) + share / inCategory;
      lines.push({ id: question.id, path: goldPath, line, mechanism });
    }
  }
  return { overall, byCategory, lines };
}

/** nDCG@10 lost per mechanism (mean over repositories) and the number of targets it holds. */
function peerTable(resultsFile) {
  const results = new Map(readRows(resultsFile).map((row) => [row.id, row]));
  const lost = {};
  const targets = {};
  for (const info of repos.values()) {
    const root = info.benchmarkRoot ? `${info.benchmarkRoot.replace(/\/$/, '')}/` : '';
    info.tasks.forEach((task, i) => {
      const result = results.get(`semble-${info.name}-${i}`);
      if (!result) throw new Error(`no result for ${info.name} query ${i} in ${resultsFile}`);
      const relative = task.targets.map((target) => ({
        ...target,
        path: target.path.startsWith(root) ? target.path.slice(root.length) : target.path,
      }));
      for (const { loss, mechanism } of peerMisses(relative, result)) {
        lost[mechanism] = (lost[mechanism] ?? 0) + loss / info.tasks.length / repos.size;
        targets[mechanism] = (targets[mechanism] ?? 0) + 1;
      }
    });
  }
  return { lost, targets };
}

function print(label, line, peer, { line: lineLost, peer: peerLost }) {
  const row = (text, value) => console.log(`  ${text.padEnd(82)}${value}`);
  console.log(`\n== model: ${label}`);
  if (line) printLine(line, lineLost, row);
  console.log(`peer dev half: nDCG@10 ${peer.toFixed(3)}; nDCG lost by mechanism (targets)`);
  for (const [key, text] of Object.entries(PEER_MECHANISMS))
    row(text, `${(peerLost.lost[key] ?? 0).toFixed(3)} (${peerLost.targets[key] ?? 0})`);
}

function printLine(line, lineLost, row) {
  console.log(`line dev: recall ${line.recall.toFixed(3)}; recall lost by mechanism`);
  for (const [key, text] of Object.entries(LINE_MECHANISMS))
    row(text, (lineLost.overall[key] ?? 0).toFixed(3));
  console.log('  recall lost per category:');
  for (const [category, lost] of Object.entries(lineLost.byCategory))
    console.log(
      `    ${category.padEnd(13)} ${Object.entries(lost)
        .map(([key, value]) => `${key} ${value.toFixed(3)}`)
        .join(', ')}`,
    );
}
