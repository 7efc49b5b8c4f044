import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { getLogger } from '../log/logger';
import { writeFileAtomic } from '../util/atomic-file';
import { confineToRoot, isInside, relativePath } from '../util/paths';
import { describeError, fail, ok, type Result } from '../util/result';
import type { CodePatch, FileEdit, PatchRefusal } from './model';

/**
 * Patches become edits in memory, checked, and are written only when the user accepts them. A
 * patch block applies where its `original` occurs exactly once in the file's current text (the
 * editor's unsaved text when the file is open); any block that does not refuses the whole patch,
 * and so does any path outside the workspace: `../`, absolute, or a symlink leading out.
 */

const log = getLogger('fix.apply');

/** The text of workspace files as the user sees them: open editors first, then the disk. */
export class WorkspaceFiles {
  private readonly realRoot: Promise<string>;

  constructor(
    readonly root: string,
    /** Unsaved text of open documents by workspace-relative path. */
    private readonly overlay: ReadonlyMap<string, string> = new Map(),
  ) {
    this.realRoot = fs.realpath(root).catch(() => path.resolve(root));
  }

  /** The absolute path of a workspace file, or why it may not be touched. */
  async locate(file: string): Promise<Result<{ relative: string; absolute: string }>> {
    if (path.isAbsolute(file) || /^[a-zA-Z]:[\\/]/.test(file))
      return fail(
        'outside_workspace',
        `${file} is an absolute path; patches name files relative to the workspace.`,
      );
    const absolute = confineToRoot(this.root, file);
    if (!absolute) return fail('outside_workspace', `${file} is outside the workspace.`);
    const relative = relativePath(path.resolve(this.root), absolute);
    if (!relative || relative === '.')
      return fail('outside_workspace', `${file} names the workspace folder itself, not a file.`);
    if (relative === '.git' || relative.startsWith('.git/'))
      return fail('outside_workspace', `${file} is inside .git, which patches never change.`);
    // a symlink (of the file or any folder above it) must not lead out of the workspace
    const real = await fs.realpath(absolute).catch(() => null);
    if (real && !isInside(await this.realRoot, real))
      return fail('outside_workspace', `${file} is a link to a place outside the workspace.`);
    return ok({ relative, absolute });
  }

  /** The current text of a workspace file. */
  async read(file: string): Promise<Result<{ relative: string; text: string }>> {
    const located = await this.locate(file);
    if (!located.ok) return located;
    const { relative, absolute } = located.value;
    const open = this.overlay.get(relative);
    if (open !== undefined) return ok({ relative, text: open });
    try {
      return ok({ relative, text: await fs.readFile(absolute, 'utf8') });
    } catch (cause) {
      const missing = (cause as NodeJS.ErrnoException).code === 'ENOENT';
      return fail(
        missing ? 'not_found' : 'io_error',
        missing
          ? `${relative} does not exist.`
          : `${relative} cannot be read: ${describeError(cause)}`,
      );
    }
  }
}

/** Where `needle` occurs in `text`, up to two places (enough to tell once from more). */
function occurrences(text: string, needle: string): number[] {
  const found: number[] = [];
  for (
    let at = text.indexOf(needle);
    at >= 0 && found.length < 2;
    at = text.indexOf(needle, at + 1)
  )
    found.push(at);
  return found;
}

function notFound(file: string, original: string, reason: string): PatchRefusal {
  log.warn('patch_original_not_found', {
    file_path: file,
    original_code_first_80_chars: original.slice(0, 80),
    reason,
  });
  return { file, reason };
}

/**
 * Turns patch blocks into edits of whole files, or refuses them all with every reason found:
 * a multi-file patch applies completely or not at all.
 */
export async function planEdits(
  patches: readonly CodePatch[],
  files: WorkspaceFiles,
): Promise<Result<FileEdit[], PatchRefusal[]>> {
  const refusals: PatchRefusal[] = [];
  const byFile = new Map<
    string,
    { text: string; replacements: FileEdit['replacements'][number][] }
  >();
  for (const patch of patches) {
    const read = await files.read(patch.file);
    if (!read.ok) {
      refusals.push(
        read.error.code === 'not_found'
          ? notFound(patch.file, patch.original, read.error.message)
          : { file: patch.file, reason: read.error.message },
      );
      continue;
    }
    const { relative, text } = read.value;
    const found = occurrences(text, patch.original);
    if (found.length !== 1) {
      refusals.push(
        found.length === 0
          ? notFound(
              relative,
              patch.original,
              `The original text was not found in ${relative}; it must be copied exactly from the file's current text.`,
            )
          : {
              file: relative,
              reason: `The original text occurs more than once in ${relative}; include more surrounding lines so it occurs exactly once.`,
            },
      );
      continue;
    }
    const entry = byFile.get(relative) ?? { text, replacements: [] };
    const start = found[0]!;
    const end = start + patch.original.length;
    if (entry.replacements.some((other) => start < other.end && other.start < end)) {
      refusals.push({
        file: relative,
        reason: `Two patch blocks change overlapping text in ${relative}; merge them into one.`,
      });
      continue;
    }
    entry.replacements.push({ start, end, text: patch.replacement });
    byFile.set(relative, entry);
  }
  if (refusals.length) return { ok: false, error: refusals };
  return ok(
    [...byFile].map(([file, { text, replacements }]) => {
      const ordered = [...replacements].sort((a, b) => a.start - b.start);
      return { file, before: text, after: applyReplacements(text, ordered), replacements: ordered };
    }),
  );
}

function applyReplacements(text: string, ordered: FileEdit['replacements']): string {
  let out = '';
  let at = 0;
  for (const replacement of ordered) {
    out += text.slice(at, replacement.start) + replacement.text;
    at = replacement.end;
  }
  return out + text.slice(at);
}

/**
 * Writes accepted edits to the user's files, all or nothing: every file must still hold the text
 * the patch was made from, and a write that fails puts back the files already written.
 */
export async function writeEdits(
  root: string,
  edits: readonly FileEdit[],
): Promise<Result<string[]>> {
  const files = new WorkspaceFiles(root);
  const targets: { edit: FileEdit; absolute: string; mode: number }[] = [];
  for (const edit of edits) {
    const located = await files.locate(edit.file);
    if (!located.ok) return located;
    const current = await fs.readFile(located.value.absolute, 'utf8').catch(() => null);
    if (current !== edit.before)
      return fail(
        'invalid_input',
        `${edit.file} changed since the patch was made (or has unsaved changes); nothing was written.`,
      );
    const { mode } = await fs.stat(located.value.absolute);
    targets.push({ edit, absolute: located.value.absolute, mode });
  }
  const written: (typeof targets)[number][] = [];
  try {
    for (const target of targets) {
      await writeFileAtomic(target.absolute, target.edit.after);
      await fs.chmod(target.absolute, target.mode);
      written.push(target);
    }
  } catch (cause) {
    for (const target of written) await writeFileAtomic(target.absolute, target.edit.before);
    log.error('patch_write_failed', { error: describeError(cause), restored: written.length });
    return fail(
      'io_error',
      `The patch could not be written (nothing was changed): ${describeError(cause)}`,
    );
  }
  log.info('patch_written', { files: targets.map((target) => target.edit.file) });
  return ok(targets.map((target) => target.edit.file));
}
