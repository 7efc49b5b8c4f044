// Fetches the evaluation corpora (pinned Debian and npm packages) into .cache/corpora once, using
// the shared reobtain.sh, which checks every archive's hash. Later runs reuse them.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

export const EVAL_DIR = path.resolve(
  process.env.CODE_ORACLE_EVAL_DIR ?? path.join('..', 'shared', 'eval'),
);
export const CORPUS_ROOT = path.resolve('.cache', 'corpora');

export function ensureCorpora() {
  const corpora = JSON.parse(readFileSync(path.join(EVAL_DIR, 'corpora.json'), 'utf8')).corpora;
  const missing = corpora.filter(
    (corpus) => !existsSync(path.join(CORPUS_ROOT, corpus.extract_dir, corpus.index_subfolder)),
  );
  if (!missing.length) return corpora;
  console.log(`Fetching corpora: ${missing.map((corpus) => corpus.id).join(', ')}`);
  mkdirSync(CORPUS_ROOT, { recursive: true });
  try {
    execFileSync('bash', [path.join(EVAL_DIR, 'reobtain.sh'), CORPUS_ROOT], { stdio: 'inherit' });
  } catch {
    console.error(
      'Could not fetch the corpora. They come from Debian (apt-get download, after `apt-get update`) and the npm registry.',
    );
    process.exit(1);
  }
  return corpora;
}

if (import.meta.url === `file://${process.argv[1]}`) ensureCorpora();
