// `npm run eval:callers`: answers the shared "who calls X?" cases with the built CLI, scores them
// with the shared reference scorer and fails below precision 0.95 or recall 0.95.
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import * as path from 'node:path';
import { CORPUS_ROOT, EVAL_DIR, ensureCorpora } from './corpora.mjs';

const THRESHOLD = { precision: 0.95, recall: 0.95 };
const cases = path.join(EVAL_DIR, 'callers-dev.jsonl');
const results = path.resolve('.cache', 'eval', 'callers-results.jsonl');
mkdirSync(path.dirname(results), { recursive: true });

ensureCorpora();
const env = { ...process.env, CODE_ORACLE_HOME: path.resolve('.cache', 'eval-home-callers') };
execFileSync(
  process.execPath,
  [
    'dist/cli.js',
    'eval',
    '--callers',
    cases,
    '--corpus-root',
    CORPUS_ROOT,
    '--out',
    results,
    '--model',
    'none',
  ],
  { stdio: 'inherit', env },
);
const scored = JSON.parse(
  execFileSync(
    process.execPath,
    [path.join(EVAL_DIR, 'score.mjs'), '--callers', cases, '--results', results, '--json'],
    { encoding: 'utf8' },
  ),
);
execFileSync(
  process.execPath,
  [path.join(EVAL_DIR, 'score.mjs'), '--callers', cases, '--results', results],
  { stdio: 'inherit' },
);
const { precision, recall } = scored.overall;
const failed = precision < THRESHOLD.precision || recall < THRESHOLD.recall;
console.log(
  `callers eval: precision ${precision.toFixed(3)} (min ${THRESHOLD.precision}), recall ${recall.toFixed(3)} (min ${THRESHOLD.recall}): ${failed ? 'FAIL' : 'ok'}`,
);
process.exit(failed ? 1 : 0);
