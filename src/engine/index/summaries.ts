import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import type { LlmClient } from '../llm/client';
import { getLogger } from '../log/logger';
import { writeFileAtomic } from '../util/atomic-file';
import { describeError } from '../util/result';
import type { Chunk } from '../model';

/**
 * Summaries of long functions, written when a model is configured:
 * the chunk's content becomes the summary — what search embeds and shows at first — and its body
 * is kept whole for answers that need it. Summaries are kept by the hash of the body, so saving a
 * file does not summarise its unchanged functions again. A failed call leaves the function as it
 * was (logged), never the index unfinished.
 */
/** What the model returns for a long function: 5–10 precise sentences. */
export const FunctionSummary = z.object({ summary: z.string().min(40) });

export const FUNCTION_SUMMARY_PROMPT = `You summarise one function of a codebase for a search index and for readers who will not see its body.
Write 5 to 10 sentences that are technically precise. You must include:
- what the function does;
- every parameter, with its type;
- the return value and its type;
- the exceptions it raises;
- its key algorithms;
- its external dependencies (modules, services);
- its side effects (database writes, API calls, file I/O, changed state).
Do not omit parameters or return types; a vague summary sends searches to the wrong code.`;

export class Summarizer {
  private cache: Map<string, string> | null = null;
  private dirty = false;
  calls = 0;

  constructor(
    private readonly llm: LlmClient,
    private readonly file: string,
  ) {}

  static forStore(llm: LlmClient, storeDir: string): Summarizer {
    return new Summarizer(llm, path.join(storeDir, 'summaries.json'));
  }

  /** The chunks with every flagged, not yet summarised function summarised (others unchanged). */
  async summarize(chunks: readonly Chunk[], signal?: AbortSignal): Promise<Chunk[]> {
    const cache = await this.load();
    const out: Chunk[] = [];
    for (const chunk of chunks) {
      if (
        chunk.level !== 'function' ||
        chunk.originalLineCount === null ||
        chunk.isSummarized ||
        signal?.aborted
      ) {
        out.push(chunk);
        continue;
      }
      const key = hash(chunk.content);
      const summary = cache.get(key) ?? (await this.write(chunk, signal));
      if (!summary) {
        out.push(chunk);
        continue;
      }
      if (!cache.has(key)) {
        cache.set(key, summary);
        this.dirty = true;
      }
      out.push({ ...chunk, content: summary, fullContent: chunk.content, isSummarized: true });
    }
    await this.save();
    return out;
  }

  private async write(chunk: Chunk, signal?: AbortSignal): Promise<string | null> {
    this.calls++;
    log.info('summarization_call', {
      file_path: chunk.filePath,
      function_name: [chunk.className, chunk.functionName].filter(Boolean).join('.'),
      line_count: chunk.originalLineCount,
      llm_backend: this.llm.backend,
      llm_model: this.llm.model,
    });
    const result = await this.llm.complete({
      system: FUNCTION_SUMMARY_PROMPT,
      prompt: `File: ${chunk.filePath}\n\n${chunk.content}`,
      schema: FunctionSummary,
      schemaName: 'FunctionSummary',
      ...(signal ? { signal } : {}),
    });
    if (result.ok) return result.value.summary.trim();
    log.warn('summarization_failed', {
      file_path: chunk.filePath,
      function_name: chunk.functionName,
      error: result.error.message,
    });
    return null;
  }

  private async load(): Promise<Map<string, string>> {
    if (this.cache) return this.cache;
    try {
      this.cache = new Map(
        Object.entries(JSON.parse(await fs.readFile(this.file, 'utf8')) as Record<string, string>),
      );
    } catch (cause) {
      if ((cause as NodeJS.ErrnoException).code !== 'ENOENT')
        log.warn('summaries_unreadable', { file_path: this.file, error: describeError(cause) });
      this.cache = new Map();
    }
    return this.cache;
  }

  private async save(): Promise<void> {
    if (!this.dirty || !this.cache) return;
    await writeFileAtomic(this.file, JSON.stringify(Object.fromEntries(this.cache)));
    this.dirty = false;
  }
}

const log = getLogger('index.summaries');

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 32);
}
