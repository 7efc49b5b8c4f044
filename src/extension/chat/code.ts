import { promises as fs } from 'node:fs';
import type { Citation } from '../../engine/answer/model';
import { confineToRoot } from '../../engine/util/paths';

/** The chat shows this many lines of a place at most; it opens the file for the rest. */
export const MAX_CODE_LINES = 40;
const MAX_FILE_BYTES = 2 * 1024 * 1024;

/**
 * Each citation's lines (up to MAX_CODE_LINES), read from the workspace folder; null for a place
 * outside the folder or a file that cannot be read (the chat then shows the link alone).
 */
export async function citedCode(
  root: string,
  citations: readonly Citation[],
): Promise<(string | null)[]> {
  const files = new Map<string, Promise<string[] | null>>();
  const linesOf = (relative: string) => {
    let lines = files.get(relative);
    if (!lines) {
      lines = readLines(root, relative);
      files.set(relative, lines);
    }
    return lines;
  };
  return Promise.all(
    citations.map(async (citation) => {
      const lines = await linesOf(citation.path);
      if (!lines || citation.startLine < 1 || citation.startLine > lines.length) return null;
      const end = Math.min(citation.endLine, citation.startLine + MAX_CODE_LINES - 1, lines.length);
      return lines.slice(citation.startLine - 1, end).join('\n');
    }),
  );
}

async function readLines(root: string, relative: string): Promise<string[] | null> {
  const absolute = confineToRoot(root, relative);
  if (!absolute) return null;
  try {
    const stat = await fs.stat(absolute);
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return null;
    return (await fs.readFile(absolute, 'utf8')).split(/\r?\n/);
  } catch {
    // A file deleted or moved since it was indexed: the citation stays a link without code.
    return null;
  }
}
