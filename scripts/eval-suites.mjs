// The two suites search is judged on, as functions for `npm run eval` and `npm run eval:ablate`:
// the line question sets on the five pinned corpora (../shared/eval, recall within 600 lines and
// MRR@10) and the peer suite's development half (../shared/eval/peer, file-level nDCG@10, mean over
// its 7 repositories). Both read the shared folder beside the repository, as CI does.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { CORPUS_ROOT, EVAL_DIR } from './corpora.mjs';

export const PEER_DIR = path.resolve(
  process.env.CODE_ORACLE_PEER_DIR ?? path.join(EVAL_DIR, 'peer'),
);
export const SHIPPED_MODEL = path.resolve(
  process.env.CODE_ORACLE_EVAL_MODEL ?? path.join('models', 'potion-base-2M'),
);
const WORK = path.resolve('.cache', 'eval');

/** `--model` for a run: the shipped model, or none (lexical search only). */
function modelArgument(withModel) {
  return withModel ? SHIPPED_MODEL : 'none';
}

/** A store per model setting, so runs with and without vectors do not rebuild each other's index. */
function homeFor(withModel) {
  return path.resolve('.cache', withModel ? 'eval-home' : 'eval-home-lexical');
}

function answer({ questions, corpora, corpusRoot, out, withModel, ablate, quiet, trace }) {
  mkdirSync(path.dirname(out), { recursive: true });
  execFileSync(
    process.execPath,
    [
      'dist/cli.js',
      'eval',
      '--questions',
      questions,
      '--corpus-root',
      corpusRoot,
      '--corpora',
      corpora,
      '--out',
      out,
      '--model',
      modelArgument(withModel),
      ...(ablate?.length ? ['--ablate', ablate.join(',')] : []),
      ...(trace ? ['--trace'] : []),
      ...(quiet ? [] : ['--baseline']),
    ],
    {
      stdio: quiet ? ['ignore', 'ignore', 'pipe'] : 'inherit',
      env: { ...process.env, CODE_ORACLE_HOME: homeFor(withModel) },
    },
  );
}

/** Where a run's results are written: one file per set, model setting, stages off and tracing. */
export function resultsPath(name, { withModel, ablate = [], trace = false }) {
  const tag = `${name.replace(/\.jsonl$/, '')}-${withModel ? 'model' : 'none'}${ablate.length ? `-${ablate.join('+')}` : ''}${trace ? '-traced' : ''}`;
  return path.join(WORK, `${tag}-results.jsonl`);
}

/**
 * Recall and MRR@10 of one line question set, overall and per category. With `trace`, each
 * result also says where its chunks were found (see `code-oracle eval --trace`).
 */
export function lineScores(
  name,
  questions,
  { withModel, ablate = [], quiet = false, trace = false },
) {
  const out = resultsPath(name, { withModel, ablate, trace });
  answer({
    questions,
    corpora: path.join(EVAL_DIR, 'corpora.json'),
    corpusRoot: CORPUS_ROOT,
    out,
    withModel,
    ablate,
    quiet,
    trace,
  });
  const scored = JSON.parse(
    execFileSync(
      process.execPath,
      [path.join(EVAL_DIR, 'score.mjs'), '--questions', questions, '--results', out, '--json'],
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

/**
 * The peer development half's nDCG@10, mean over repositories. The search's result is a ranked
 * list of files, so each file is one result (its best span's lines), as the suite's scorer expects.
 */
export function peerScore({ withModel, ablate = [], trace = false }) {
  const questionsDir = path.join(WORK, 'peer-questions');
  execFileSync(
    process.execPath,
    [path.join(PEER_DIR, 'to-oracle.mjs'), 'questions', questionsDir],
    {
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const out = resultsPath('peer', { withModel, ablate, trace });
  const tag = path.basename(out).replace(/-results\.jsonl$/, '');
  answer({
    questions: path.join(questionsDir, 'questions.jsonl'),
    corpora: path.join(questionsDir, 'corpora.json'),
    corpusRoot: questionsDir,
    out,
    withModel,
    ablate,
    quiet: true,
    trace,
  });
  const perFile = path.join(WORK, `${tag}-files.jsonl`);
  writeFileSync(
    perFile,
    readFileSync(out, 'utf8')
      .split('\n')
      .filter((line) => line.trim())
      .map((line) => {
        const row = JSON.parse(line);
        const results = row.files.map((file) => ({
          path: file.path,
          startLine: file.ranges[0][0],
          endLine: file.ranges[0][1],
        }));
        return JSON.stringify({ id: row.id, results });
      })
      .join('\n') + '\n',
  );
  const converted = path.join(WORK, `${tag}-scored-input.jsonl`);
  writeFileSync(
    converted,
    execFileSync(process.execPath, [path.join(PEER_DIR, 'to-oracle.mjs'), 'results', perFile], {
      encoding: 'utf8',
    }),
  );
  const summary = path.join(WORK, `${tag}-summary.json`);
  execFileSync(
    process.execPath,
    [path.join(PEER_DIR, 'score.mjs'), '--quiet', '--json', summary, converted],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const [scored] = JSON.parse(readFileSync(summary, 'utf8')).files;
  return round(scored.overall_repo_mean);
}

export function round(value) {
  return Math.round(value * 1000) / 1000;
}
