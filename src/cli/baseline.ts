import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_MAX_FILE_BYTES } from '../engine/engine';
import { walkWorkspace } from '../engine/index/walk';
import { STOP_WORDS } from '../engine/search/preprocess';
import type { ResultSpan } from './scoring';

/**
 * The baseline every evaluation prints beside our score: BM25 over fixed 40-line windows of every
 * source file, words split on non-alphanumerics only (as SQLite FTS5's default tokenizer does),
 * the question's words OR-ed together. It knows nothing of code structure.
 */
const WINDOW = 40;
const K1 = 1.2;
const B = 0.75;

interface Window {
  readonly path: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly terms: Map<string, number>;
  readonly length: number;
}

export class WindowBaseline {
  private constructor(
    private readonly windows: Window[],
    private readonly documentFrequency: Map<string, number>,
    private readonly averageLength: number,
  ) {}

  static async build(root: string): Promise<WindowBaseline> {
    const walked = await walkWorkspace({
      root,
      maxFileBytes: DEFAULT_MAX_FILE_BYTES,
      useGit: false,
    });
    if (!walked.ok) throw new Error(walked.error.message);
    const windows: Window[] = [];
    for (const candidate of walked.value.candidates) {
      const lines = (await fs.readFile(path.join(root, candidate.path), 'utf8')).split('\n');
      for (let start = 0; start < lines.length; start += WINDOW) {
        const words = words_(lines.slice(start, start + WINDOW).join('\n'));
        const terms = new Map<string, number>();
        for (const word of words) terms.set(word, (terms.get(word) ?? 0) + 1);
        windows.push({
          path: candidate.path,
          startLine: start + 1,
          endLine: Math.min(lines.length, start + WINDOW),
          terms,
          length: words.length,
        });
      }
    }
    const documentFrequency = new Map<string, number>();
    for (const window of windows)
      for (const term of window.terms.keys())
        documentFrequency.set(term, (documentFrequency.get(term) ?? 0) + 1);
    const averageLength =
      windows.reduce((sum, window) => sum + window.length, 0) / Math.max(1, windows.length);
    return new WindowBaseline(windows, documentFrequency, averageLength);
  }

  search(question: string, limit = 50): ResultSpan[] {
    const terms = [...new Set(words_(question))].filter((term) => !STOP_WORDS.has(term));
    const total = this.windows.length;
    const scored = this.windows.map((window) => {
      let score = 0;
      for (const term of terms) {
        const tf = window.terms.get(term);
        if (!tf) continue;
        const df = this.documentFrequency.get(term)!;
        const idf = Math.log(1 + (total - df + 0.5) / (df + 0.5));
        score +=
          (idf * tf * (K1 + 1)) / (tf + K1 * (1 - B + (B * window.length) / this.averageLength));
      }
      return { window, score };
    });
    return scored
      .filter((entry) => entry.score > 0)
      .sort((a, b) => b.score - a.score)
      .slice(0, limit)
      .map(({ window }) => ({
        path: window.path,
        startLine: window.startLine,
        endLine: window.endLine,
      }));
  }
}

function words_(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}
