/**
 * The scale rows' corpora: pinned Debian and npm packages (bench/corpora.json), fetched once into
 * .cache/bench with their sha256 checked, unpacked, and assembled per row into one folder of
 * hard links (a row is several real trees side by side; the 100k row repeats them under other
 * names to reach its size, which the row's note says).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { walkWorkspace } from '../src/engine/index/walk';
import { unwrap } from '../src/engine/util/result';

export interface PackageSpec {
  readonly id: string;
  readonly registry: 'debian' | 'npm';
  readonly package: string;
  readonly version: string;
  readonly archive: string;
  readonly archive_sha256: string;
  readonly extract_dir: string;
  readonly index_subfolder: string;
}

export interface RowSpec {
  readonly id: string;
  readonly corpora: readonly string[];
  /** How many times the corpora are laid side by side (under copy-N/ names beyond the first). */
  readonly copies?: number;
  /** Run only when named on the command line. */
  readonly onDemand?: boolean;
  readonly note: string;
}

interface CorporaFile {
  readonly corpora: readonly PackageSpec[];
  readonly rows: readonly RowSpec[];
}

const BASE = path.resolve('.cache', 'bench');

export function readCorpora(): CorporaFile {
  return JSON.parse(readFileSync(path.resolve('bench', 'corpora.json'), 'utf8')) as CorporaFile;
}

/** The row `rowId` of bench/corpora.json; an error naming it when there is none. */
export function corporaRow(rowId: string): RowSpec {
  const row = readCorpora().rows.find((candidate) => candidate.id === rowId);
  if (!row) throw new Error(`bench/corpora.json has no row ${rowId}`);
  return row;
}

/** The folder of a row's kept store, built once by `--open-search` and reused by later benches. */
export function keptStoreDir(cache: string, rowId: string): string {
  return path.join(cache, 'bench-stores', `${rowId}-kept`);
}

/** Fetches a pinned package once (checking its hash) and returns the folder to index. */
export function packageRoot(spec: PackageSpec): string {
  const root = path.join(BASE, spec.extract_dir, spec.index_subfolder);
  if (existsSync(root)) return root;
  mkdirSync(BASE, { recursive: true });
  const archive = path.join(BASE, spec.archive);
  if (!existsSync(archive)) {
    if (spec.registry === 'debian')
      execFileSync('apt-get', ['download', `${spec.package}=${spec.version}`], {
        cwd: BASE,
        stdio: 'inherit',
      });
    else
      execFileSync('npm', ['pack', `${spec.package}@${spec.version}`], {
        cwd: BASE,
        stdio: ['ignore', 'ignore', 'inherit'],
      });
  }
  const hash = createHash('sha256').update(readFileSync(archive)).digest('hex');
  if (hash !== spec.archive_sha256)
    throw new Error(`${spec.archive}: sha256 ${hash}, expected ${spec.archive_sha256}`);
  const target = path.join(BASE, spec.extract_dir);
  mkdirSync(target, { recursive: true });
  if (spec.registry === 'debian') execFileSync('dpkg-deb', ['-x', archive, target]);
  else execFileSync('tar', ['xzf', archive, '-C', target]);
  return root;
}

/** The files a workspace's walk finds under `root` (none over `maxFileBytes`), with their text. */
export async function readWorkspaceFiles(root: string, maxFileBytes = 1024 * 1024) {
  const walked = unwrap(await walkWorkspace({ root, maxFileBytes }));
  return walked.candidates.map((candidate) => ({
    ...candidate,
    source: readFileSync(path.join(root, candidate.path), 'utf8'),
  }));
}

/** The row's folder: each corpus hard-linked under its id (and again under copy-N/ for copies). */
export function rowRoot(row: RowSpec): string {
  const { corpora } = readCorpora();
  const root = path.join(BASE, 'rows', row.id);
  const done = path.join(root, '.assembled');
  if (existsSync(done)) return root;
  rmSync(root, { recursive: true, force: true });
  for (let copy = 0; copy < (row.copies ?? 1); copy++) {
    for (const id of row.corpora) {
      const spec = corpora.find((corpus) => corpus.id === id);
      if (!spec) throw new Error(`bench/corpora.json: row ${row.id} names unknown corpus ${id}`);
      const source = packageRoot(spec);
      const target = copy ? path.join(root, `copy-${copy + 1}`, id) : path.join(root, id);
      mkdirSync(path.dirname(target), { recursive: true });
      // hard links: the row costs no disk, and files restored after an edit stay byte-equal
      execFileSync('cp', ['-al', source, target]);
    }
  }
  execFileSync('touch', [done]);
  return root;
}
