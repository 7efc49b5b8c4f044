import { execFile } from 'node:child_process';
import { promises as fs, type Dirent } from 'node:fs';
import * as path from 'node:path';
import ignore, { type Ignore } from 'ignore';
import { languageForPath } from '../lang/registry';
import { elapsedMs, getLogger } from '../log/logger';
import { fail, ok, describeError, type Result } from '../util/result';
import { isInside, toPosix } from '../util/paths';
import type { LanguageId } from '../model';

/**
 * Finds the files to index under a folder: `git ls-files` in a git work tree (exact git ignore
 * semantics, fast on huge trees), else a walk that applies every `.gitignore` on the way down.
 * Both apply the same skip rules; every skip is a debug event with its reason.
 */
export type SkipReason =
  | 'ignored'
  | 'excluded'
  | 'path_pattern'
  | 'extension'
  | 'lock_file'
  | 'minified'
  | 'too_large'
  | 'binary'
  | 'utf8_decode_failed'
  | 'symlink_outside'
  | 'symlink_duplicate'
  | 'unreadable';

export interface WalkOptions {
  readonly root: string;
  readonly maxFileBytes: number;
  /** Extra gitignore-style patterns (the editor's `files.exclude`, a CLI flag). */
  readonly exclude?: readonly string[];
  /** Use `git ls-files` when the folder is in a git work tree (default true). */
  readonly useGit?: boolean;
}

export interface Candidate {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly language: LanguageId;
}

export interface WalkResult {
  readonly candidates: Candidate[];
  readonly skipped: Map<SkipReason, number>;
  readonly languages: Map<LanguageId, number>;
  readonly source: 'git' | 'filesystem';
}

/** Folders never indexed: version control, dependencies, caches and build output. */
export const SKIPPED_DIRECTORIES = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  'dist',
  'build',
  '.venv',
  'venv',
  '.tox',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
  '.next',
  '.nuxt',
  '.cache',
]);

const LOCK_FILES = new Set([
  'package-lock.json',
  'yarn.lock',
  'pnpm-lock.yaml',
  'Cargo.lock',
  'poetry.lock',
  'Gemfile.lock',
  'composer.lock',
  'go.sum',
  'Pipfile.lock',
  'bun.lockb',
]);

const log = getLogger('index.walk');

export async function walkWorkspace(options: WalkOptions): Promise<Result<WalkResult>> {
  const started = performance.now();
  const requested = path.resolve(options.root);
  const rootStat = await fs.stat(requested).catch(() => null);
  if (!rootStat) return fail('not_found', `Folder does not exist: ${requested}`);
  if (!rootStat.isDirectory()) return fail('invalid_input', `Not a folder: ${requested}`);
  const root = await fs.realpath(requested);
  log.info('repo_walk_started', { repo_path: root });

  const walk = new Walk(root, options);
  const listed = options.useGit === false ? null : await gitListing(root);
  if (listed) await walk.fromGit(listed);
  else await walk.fromFilesystem();

  const result: WalkResult = {
    candidates: walk.candidates.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    skipped: walk.skipped,
    languages: walk.languages,
    source: listed ? 'git' : 'filesystem',
  };
  log.info('repo_walk_completed', {
    repo_path: root,
    source: result.source,
    total_files: result.candidates.length,
    skipped_files: [...walk.skipped.values()].reduce((a, b) => a + b, 0),
    skipped_by_reason: Object.fromEntries(walk.skipped),
    languages: Object.fromEntries(walk.languages),
    duration_ms: elapsedMs(started),
  });
  return ok(result);
}

class Walk {
  readonly candidates: Candidate[] = [];
  readonly skipped = new Map<SkipReason, number>();
  readonly languages = new Map<LanguageId, number>();
  private readonly exclude: Ignore;
  private readonly seenRealPaths = new Set<string>();
  /** Links are taken last, so a real file is always indexed under its own path. */
  private readonly deferredLinks: { relative: string; absolute: string }[] = [];

  constructor(
    private readonly root: string,
    private readonly options: WalkOptions,
  ) {
    this.exclude = ignore({ allowRelativePaths: true }).add([...(options.exclude ?? [])]);
  }

  skip(relative: string, reason: SkipReason, count = 1): void {
    this.skipped.set(reason, (this.skipped.get(reason) ?? 0) + count);
    if (log.enabled('debug')) log.debug('file_skipped', { file_path: relative, reason });
  }

  /** Applies the rules shared by both listings; records a candidate or a skip. */
  async consider(relative: string, stat: { size: number; mtimeMs: number }): Promise<void> {
    const reason = skipByName(relative, this.exclude);
    if (reason) return this.skip(relative, reason);
    const language = languageForPath(relative);
    if (!language) return this.skip(relative, 'extension');
    if (stat.size > this.options.maxFileBytes) return this.skip(relative, 'too_large');
    this.candidates.push({
      path: relative,
      size: stat.size,
      mtimeMs: Math.floor(stat.mtimeMs),
      language: language.id,
    });
    this.languages.set(language.id, (this.languages.get(language.id) ?? 0) + 1);
  }

  async fromGit(listing: GitListing): Promise<void> {
    if (listing.ignoredEntries)
      this.skip('(git ignored entries)', 'ignored', listing.ignoredEntries);
    for (const relative of listing.files) {
      const absolute = path.join(this.root, relative);
      const stat = await fs.lstat(absolute).catch(() => null);
      if (!stat) continue; // deleted in the working tree but still in git's index
      if (stat.isSymbolicLink()) {
        this.deferredLinks.push({ relative, absolute });
        continue;
      }
      if (!stat.isFile()) continue; // submodules
      this.seenRealPaths.add(absolute);
      await this.consider(relative, stat);
    }
    await this.followLinks();
  }

  async fromFilesystem(): Promise<void> {
    this.seenRealPaths.add(this.root);
    await this.walkDirectory(this.root, '', []);
    await this.followLinks();
  }

  private async followLinks(): Promise<void> {
    for (const link of this.deferredLinks.splice(0))
      await this.considerSymlink(link.relative, link.absolute);
  }

  private async walkDirectory(
    absolute: string,
    relative: string,
    rules: IgnoreLayer[],
  ): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(absolute, { withFileTypes: true });
    } catch (cause) {
      log.warn('directory_unreadable', { directory: relative || '.', error: describeError(cause) });
      return this.skip(relative || '.', 'unreadable');
    }
    const layers = [...rules];
    const gitignore = entries.find((entry) => entry.name === '.gitignore' && entry.isFile());
    if (gitignore) {
      const text = await fs.readFile(path.join(absolute, '.gitignore'), 'utf8').catch(() => '');
      layers.push({ base: relative, matcher: ignore().add(text) });
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const childRelative = relative ? `${relative}/${entry.name}` : entry.name;
      const childAbsolute = path.join(absolute, entry.name);
      if (entry.isSymbolicLink()) {
        if (!isIgnored(layers, childRelative, false))
          this.deferredLinks.push({ relative: childRelative, absolute: childAbsolute });
        continue;
      }
      if (entry.isDirectory()) {
        if (SKIPPED_DIRECTORIES.has(entry.name)) {
          this.skip(`${childRelative}/`, 'path_pattern');
          continue;
        }
        if (isIgnored(layers, childRelative, true)) {
          this.skip(`${childRelative}/`, 'ignored');
          continue;
        }
        if (this.exclude.ignores(`${childRelative}/`)) {
          this.skip(`${childRelative}/`, 'excluded');
          continue;
        }
        await this.walkDirectory(childAbsolute, childRelative, layers);
        continue;
      }
      if (!entry.isFile()) continue;
      if (isIgnored(layers, childRelative, false)) {
        this.skip(childRelative, 'ignored');
        continue;
      }
      const stat = await fs.stat(childAbsolute).catch(() => null);
      if (!stat) {
        this.skip(childRelative, 'unreadable');
        continue;
      }
      this.seenRealPaths.add(childAbsolute);
      await this.consider(childRelative, stat);
    }
  }

  /**
   * A linked file is indexed only when its target lies inside the folder and was not indexed
   * under its own path. Linked folders are never entered: a target inside the folder is walked
   * anyway, one outside it is not the workspace, and a link to an ancestor would loop.
   */
  private async considerSymlink(relative: string, absolute: string): Promise<void> {
    const real = await fs.realpath(absolute).catch(() => null);
    if (!real) return this.skip(relative, 'unreadable');
    if (!isInside(this.root, real)) return this.skip(relative, 'symlink_outside');
    const stat = await fs.stat(real).catch(() => null);
    if (!stat) return this.skip(relative, 'unreadable');
    if (stat.isDirectory() || !this.firstVisit(real))
      return this.skip(relative, 'symlink_duplicate');
    if (stat.isFile()) await this.consider(relative, stat);
  }

  private firstVisit(realPath: string): boolean {
    if (this.seenRealPaths.has(realPath)) return false;
    this.seenRealPaths.add(realPath);
    return true;
  }
}

/**
 * The walker's rules for one path at a time, for changes reported by an editor or file watcher:
 * skip rules, exclusions and every .gitignore from the root down to the file's folder.
 */
export class PathFilter {
  private readonly exclude: Ignore;
  private readonly layers = new Map<string, IgnoreLayer | null>();
  private gitTree: Promise<boolean> | undefined;

  constructor(
    private readonly root: string,
    private readonly options: Pick<WalkOptions, 'exclude' | 'maxFileBytes' | 'useGit'>,
  ) {
    this.exclude = ignore({ allowRelativePaths: true }).add([...(options.exclude ?? [])]);
  }

  /**
   * The files of a batch on disk, judged as the walk judges them: gone (absent from the result),
   * skipped with a reason, or a candidate with its language, size and time. In a git work tree git
   * itself says what is ignored (tracked files never are; .git/info/exclude counts), as `git
   * ls-files` does for the walk; elsewhere the .gitignore files do.
   */
  async checkFiles(
    relatives: readonly string[],
  ): Promise<
    Map<string, { reason: SkipReason } | { language: LanguageId; size: number; mtimeMs: number }>
  > {
    const found = new Map<string, { size: number; mtimeMs: number } | { reason: SkipReason }>();
    for (const relative of relatives) {
      const file = await this.inspect(relative);
      if (file) found.set(relative, file);
    }
    const gitIgnored = await this.ignoredByGit([...found.keys()]);
    const verdicts = new Map<
      string,
      { reason: SkipReason } | { language: LanguageId; size: number; mtimeMs: number }
    >();
    for (const [relative, file] of found) {
      if ('reason' in file) verdicts.set(relative, file);
      else {
        const verdict = await this.check(relative, file.size, gitIgnored);
        verdicts.set(relative, 'reason' in verdict ? verdict : { ...verdict, ...file });
      }
    }
    return verdicts;
  }

  /** Why `relative` is not indexed, or its language. `gitIgnored`, when given, replaces the .gitignore files. */
  async check(
    relative: string,
    size: number,
    gitIgnored: ReadonlySet<string> | null = null,
  ): Promise<{ reason: SkipReason } | { language: LanguageId }> {
    const reason = skipByName(relative, this.exclude);
    if (reason) return { reason };
    if (gitIgnored)
      return gitIgnored.has(relative) ? { reason: 'ignored' } : this.byContent(relative, size);
    const segments = relative.split('/');
    const layers: IgnoreLayer[] = [];
    for (let depth = 0; depth < segments.length; depth++) {
      const folder = segments.slice(0, depth).join('/');
      const layer = await this.layer(folder);
      if (layer) layers.push(layer);
      if (depth > 0 && isIgnored(layers, folder, true)) return { reason: 'ignored' };
    }
    if (isIgnored(layers, relative, false)) return { reason: 'ignored' };
    return this.byContent(relative, size);
  }

  private byContent(
    relative: string,
    size: number,
  ): { reason: SkipReason } | { language: LanguageId } {
    const language = languageForPath(relative);
    if (!language) return { reason: 'extension' };
    if (size > this.options.maxFileBytes) return { reason: 'too_large' };
    return { language: language.id };
  }

  /** A file's size and time; a link only when its target lies inside the folder (as in the walk). */
  private async inspect(
    relative: string,
  ): Promise<{ size: number; mtimeMs: number } | { reason: SkipReason } | null> {
    const absolute = path.join(this.root, relative);
    const link = await fs.lstat(absolute).catch(() => null);
    if (!link) return null;
    if (link.isSymbolicLink()) {
      const real = await fs.realpath(absolute).catch(() => null);
      if (!real) return null;
      if (!isInside(this.root, real)) return { reason: 'symlink_outside' };
    }
    const stat = link.isSymbolicLink() ? await fs.stat(absolute).catch(() => null) : link;
    return stat?.isFile() ? { size: stat.size, mtimeMs: Math.floor(stat.mtimeMs) } : null;
  }

  /**
   * Asks git once whether the folder is a work tree it lists, ahead of the first check: that
   * answer costs two git processes, which a first save would otherwise wait for.
   */
  async warm(): Promise<void> {
    if (this.options.useGit === false) return;
    await this.gitListable();
  }

  private gitListable(): Promise<boolean> {
    this.gitTree ??= gitListable(this.root);
    return this.gitTree;
  }

  /** Which of `relatives` git ignores, or null outside a git work tree (or without git). */
  private async ignoredByGit(relatives: readonly string[]): Promise<Set<string> | null> {
    if (this.options.useGit === false || !relatives.length) return null;
    if (!(await this.gitListable())) return null;
    const output = await run('git', ['check-ignore', '-z', '--stdin'], this.root, {
      input: relatives.join('\0'),
      noMatchIsEmpty: true,
    });
    return output === null ? null : new Set(output.split('\0').filter(Boolean).map(toPosix));
  }

  /** Forgets cached .gitignore files, e.g. after one of them changed. */
  invalidate(): void {
    this.layers.clear();
  }

  private async layer(folder: string): Promise<IgnoreLayer | null> {
    if (this.layers.has(folder)) return this.layers.get(folder)!;
    const text = await fs
      .readFile(path.join(this.root, folder, '.gitignore'), 'utf8')
      .catch(() => null);
    const layer = text === null ? null : { base: folder, matcher: ignore().add(text) };
    this.layers.set(folder, layer);
    return layer;
  }
}

interface IgnoreLayer {
  /** Folder of the .gitignore, relative to the root ('' at the root). */
  readonly base: string;
  readonly matcher: Ignore;
}

/** Git's rule: the deepest .gitignore that has an opinion wins, so negations in subfolders work. */
function isIgnored(
  layers: readonly IgnoreLayer[],
  relative: string,
  isDirectory: boolean,
): boolean {
  for (let i = layers.length - 1; i >= 0; i--) {
    const layer = layers[i]!;
    // A .gitignore governs what lies below its folder, not the folder itself.
    if (layer.base && !relative.startsWith(`${layer.base}/`)) continue;
    const local = layer.base ? relative.slice(layer.base.length + 1) : relative;
    const result = layer.matcher.test(isDirectory ? `${local}/` : local);
    if (result.ignored) return true;
    if (result.unignored) return false;
  }
  return false;
}

function skipByName(relative: string, exclude: Ignore): SkipReason | null {
  const segments = relative.split('/');
  if (segments.slice(0, -1).some((segment) => SKIPPED_DIRECTORIES.has(segment)))
    return 'path_pattern';
  if (exclude.ignores(relative)) return 'excluded';
  const name = segments[segments.length - 1]!;
  if (LOCK_FILES.has(name) || name.endsWith('.lock')) return 'lock_file';
  if (/[.-]min\.[cm]?js$/.test(name)) return 'minified';
  return null;
}

interface GitListing {
  readonly files: string[];
  readonly ignoredEntries: number;
}

/** Whether git decides what is ignored under `root`: a work tree that does not ignore `root` itself. */
async function gitListable(root: string): Promise<boolean> {
  const inside = await run('git', ['rev-parse', '--is-inside-work-tree'], root);
  if (inside?.trim() !== 'true') return false;
  // A folder the enclosing repository ignores was still opened on purpose: walk it instead.
  return (await run('git', ['check-ignore', '-q', '.'], root)) === null;
}

async function gitListing(root: string): Promise<GitListing | null> {
  if (!(await gitListable(root))) return null;
  const listed = await run(
    'git',
    ['ls-files', '-z', '--cached', '--others', '--exclude-standard'],
    root,
  );
  if (listed === null) return null;
  const ignored = await run(
    'git',
    ['ls-files', '-z', '--others', '--ignored', '--exclude-standard', '--directory'],
    root,
  );
  return {
    files: [...new Set(listed.split('\0').filter(Boolean).map(toPosix))],
    ignoredEntries: ignored ? ignored.split('\0').filter(Boolean).length : 0,
  };
}

/**
 * A git command's output, or null when it fails. `input` goes in on stdin (NUL-separated paths
 * fit a batch of any size); `noMatchIsEmpty` takes exit code 1 as an empty answer, which is how
 * `git check-ignore` says nothing is ignored.
 */
function run(
  command: string,
  args: string[],
  cwd: string,
  options: { input?: string; noMatchIsEmpty?: boolean } = {},
): Promise<string | null> {
  return new Promise((resolve) => {
    const child = execFile(
      command,
      args,
      { cwd, maxBuffer: 512 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout) => {
        if (error && !(options.noMatchIsEmpty && error.code === 1)) {
          log.debug('git_unavailable', {
            command: `${command} ${args[0]}`,
            error: describeError(error),
          });
          resolve(null);
        } else resolve(stdout);
      },
    );
    if (options.input !== undefined) child.stdin?.end(options.input);
  });
}
