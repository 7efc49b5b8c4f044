import * as path from 'node:path';

/** Workspace-relative paths always use '/' so stores are portable across platforms. */
export function toPosix(relative: string): string {
  return relative.split(path.sep).join('/');
}

export function relativePath(root: string, absolute: string): string {
  return toPosix(path.relative(root, absolute));
}

/** The folder of a workspace-relative path; '.' for files at the root. */
export function parentDir(relative: string): string {
  const index = relative.lastIndexOf('/');
  return index < 0 ? '.' : relative.slice(0, index);
}

/** The folders holding a workspace-relative file, innermost first, down to `.`. */
export function ancestors(file: string): string[] {
  const out: string[] = [];
  for (let folder = parentDir(file); ; folder = parentDir(folder)) {
    out.push(folder);
    if (folder === '.') return out;
  }
}

export function baseName(relative: string): string {
  return relative.slice(relative.lastIndexOf('/') + 1);
}

/**
 * Resolves a user- or model-supplied path inside the workspace, or returns null when it would
 * leave it ('../', absolute paths elsewhere). Symlinks are checked separately by callers that read.
 */
export function confineToRoot(root: string, requested: string): string | null {
  const normalizedRoot = path.resolve(root);
  const absolute = path.resolve(normalizedRoot, requested);
  return isInside(normalizedRoot, absolute) ? absolute : null;
}

/** Whether `absolute` is `root` or below it; a file named `..notes` is below it, `../notes` is not. */
export function isInside(root: string, absolute: string): boolean {
  const relative = path.relative(root, absolute);
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative);
}
