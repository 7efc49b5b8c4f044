import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { getLogger } from '../log/logger';
import { isInside } from '../util/paths';
import { describeError, fail, ok, type Result } from '../util/result';

/**
 * Reading workspace files on a model's behalf: only relative paths that stay inside the folder,
 * also after symbolic links are followed; each file read once per run and kept.
 */
const MAX_FILE_BYTES = 2 * 1024 * 1024;

const log = getLogger('answer.files');

export class WorkspaceFiles {
  private readonly cache = new Map<string, string[]>();
  private realRoot: Promise<string> | null = null;

  constructor(private readonly root: string) {}

  /** The lines of `relative` (a path inside the workspace), from the cache after the first read. */
  async lines(
    relative: string,
  ): Promise<Result<{ path: string; lines: readonly string[]; cached: boolean }>> {
    const checked = await this.resolve(relative);
    if (!checked.ok) return checked;
    const { absolute, normalized } = checked.value;
    const cached = this.cache.get(normalized);
    if (cached) return ok({ path: normalized, lines: cached, cached: true });
    try {
      const stat = await fs.stat(absolute);
      if (!stat.isFile()) return fail('invalid_input', `${normalized} is not a file.`);
      if (stat.size > MAX_FILE_BYTES)
        return fail(
          'invalid_input',
          `${normalized} is ${Math.round(stat.size / 1024)} KB, too large to read.`,
        );
      const text = await fs.readFile(absolute, 'utf8');
      if (text.includes('\u0000')) return fail('invalid_input', `${normalized} is a binary file.`);
      const lines = text
        .replace(/\r\n/g, '\n')
        .replace(/^\uFEFF/, '')
        .replace(/\n$/, '')
        .split('\n');
      this.cache.set(normalized, lines);
      return ok({ path: normalized, lines, cached: false });
    } catch (cause) {
      log.warn('read_file_failed', { path: normalized, error: describeError(cause) });
      return fail('not_found', `Cannot read ${normalized}: ${describeError(cause)}.`);
    }
  }

  private async resolve(
    relative: string,
  ): Promise<Result<{ absolute: string; normalized: string }>> {
    const trimmed = relative.trim().replace(/\\/g, '/');
    if (!trimmed) return fail('invalid_input', 'Give a file path relative to the workspace.');
    if (path.isAbsolute(trimmed) || /^[A-Za-z]:/.test(trimmed))
      return this.refuse(
        relative,
        'absolute paths are not allowed; give a path relative to the workspace',
      );
    const normalized = path.posix.normalize(trimmed).replace(/^\.\//, '');
    if (normalized === '..' || normalized.startsWith('../'))
      return this.refuse(relative, 'the path leaves the workspace');
    this.realRoot ??= fs.realpath(this.root);
    const root = await this.realRoot;
    const absolute = path.join(root, normalized);
    let real: string;
    try {
      real = await fs.realpath(absolute);
    } catch (cause) {
      log.warn('read_file_failed', { path: normalized, error: describeError(cause) });
      return fail('not_found', `No file ${normalized} in the workspace.`);
    }
    if (!isInside(root, real))
      return this.refuse(relative, 'a symbolic link leads outside the workspace');
    return ok({ absolute: real, normalized });
  }

  private refuse(relative: string, reason: string): Result<never> {
    log.warn('read_file_refused', { path: relative, reason });
    return fail('outside_workspace', `Cannot read ${relative}: ${reason}.`);
  }
}
