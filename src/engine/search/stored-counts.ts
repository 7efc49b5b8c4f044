import { getLogger } from '../log/logger';
import type { TextsFile } from '../store/texts';
import { describeError } from '../util/result';
import { chunkTextCounter, type ChunkTextCounts } from './context';

/**
 * Token counts of every chunk's text, counted once in the background so that building a
 * question's context looks them up instead of counting the code it shows (the largest part of
 * that stage). Per chunk: the count of its parents' header (`headerOf` its text) and of each of
 * its lines as a context shows it (` text` and a line break). Kept in memory by the record that
 * holds the text in the texts file: a record never changes once written, so a count found for a
 * chunk's current record is its text's count; a chunk saved again has a new record, counted on
 * the next pass, and until then its context counts at question time as before. A rewrite of the
 * texts file moves every record (a new layout): the counts are dropped and counted again. The
 * counts belong to one texts file object, whose records are only appended: a store that reloads
 * (another process's commit, a failed write rolled back) gives the engine a new searcher, and it
 * new counts.
 */
const log = getLogger('search.counts');

/** Counting yields to questions after this long, so none waits behind the pass for longer. */
const SLICE_MS = 8;
/** A line's count of 255 and more is not kept (a rare long line), nor a header's of 65,535: counted when asked. */
const LINE_NOT_KEPT = 255;
const HEADER_NOT_KEPT = 65_535;

export class StoredTokenCounts {
  /** Counted records by offset, ascending, and where their line counts start in `lines`. */
  private offsets = new Float64Array(1024);
  private starts = new Uint32Array(1025);
  /** Per record: its header's count; its lines' from its start in `lines`. */
  private headers = new Uint16Array(1024);
  private lines = new Uint8Array(64 * 1024);
  private size = 0;
  /** The texts file's layout the offsets belong to. */
  private layout: number;
  private pass: Promise<void> = Promise.resolve();

  /** `sliceMs`: how long counting runs before it yields to questions. */
  constructor(
    private readonly texts: TextsFile,
    private readonly sliceMs = SLICE_MS,
  ) {
    this.layout = texts.layout;
  }

  /**
   * Counts the records not counted yet (all of them after a rewrite), in slices that let questions
   * run between them, each slice after `pause` resolves; resolves once every record that is live
   * now is counted. Passes queue; a pass that fails is logged, and the next one goes on from the
   * last record counted.
   */
  catchUp(pause: () => Promise<void>): Promise<void> {
    this.pass = this.pass
      .then(() => this.countNew(pause))
      .catch((cause: unknown) => log.warn('token_counts_failed', { error: describeError(cause) }));
    return this.pass;
  }

  /** Which counted record holds chunk `id`'s current text, or -1 when it is not counted yet. */
  entryOf(id: string): number {
    if (this.texts.layout !== this.layout) return -1;
    const offset = this.texts.recordOf(id);
    if (offset === undefined) return -1;
    return this.search(offset);
  }

  /** The tokens of `headerOf` the entry's text, undefined when not kept. */
  headerTokens(entry: number): number | undefined {
    const count = this.headers[entry]!;
    return count === HEADER_NOT_KEPT ? undefined : count;
  }

  /** The tokens of ` ${line}\n` for the entry's line at `index`, undefined when not kept. */
  lineTokens(entry: number, index: number): number | undefined {
    const at = this.starts[entry]! + index;
    if (index < 0 || at >= this.starts[entry + 1]!) return undefined;
    const count = this.lines[at]!;
    return count === LINE_NOT_KEPT ? undefined : count;
  }

  /** Counts the records not counted yet, over again from the first when the records move meanwhile. */
  private async countNew(pause: () => Promise<void>): Promise<void> {
    while (!(await this.countPass(pause)));
  }

  /** Counts the records not counted yet; false when a rewrite moved them before it was done. */
  private async countPass(pause: () => Promise<void>): Promise<boolean> {
    await pause();
    // after the pause: a write during it may have rewritten the records
    if (this.texts.layout !== this.layout) {
      this.layout = this.texts.layout;
      this.size = 0;
    }
    const layout = this.layout;
    const from = this.size ? this.offsets[this.size - 1]! + 1 : 0;
    const records = this.texts.recordsFrom(from);
    if (!records.offsets.length) return true;
    // loaded only when there is something to count; loading the first time awaits, so check again
    const count = await chunkTextCounter();
    if (this.texts.layout !== layout) return false;
    const started = performance.now();
    let sliceStart = started;
    for (let i = 0; i < records.offsets.length; i++) {
      if (performance.now() - sliceStart > this.sliceMs) {
        await new Promise((resolve) => setImmediate(resolve));
        await pause();
        sliceStart = performance.now();
        // the records moved while this pass waited: what is left to count is all of them again
        if (this.texts.layout !== layout) return false;
      }
      const offset = records.offsets[i]!;
      const read = this.texts.readRecord(offset, records.lengths[i]!);
      if (read.ok) this.add(offset, count(read.value));
      else if (read.error.code === 'cancelled')
        return true; // a closed index stops the pass
      else {
        // a damaged record is repaired by the next opening; until then its chunk counts at
        // question time, and the records after it are still counted
        log.warn('token_counts_skipped', { offset, error: read.error.message });
        this.add(offset, { header: undefined, lines: [] });
      }
    }
    this.trim();
    log.info('token_counts_caught_up', {
      records: records.offsets.length,
      duration_ms: Math.round(performance.now() - started),
    });
    return true;
  }

  private add(offset: number, counted: ChunkTextCounts): void {
    if (this.size === this.offsets.length) this.resize(this.size * 2, this.lines.length);
    const start = this.starts[this.size]!;
    const end = start + counted.lines.length;
    if (end > this.lines.length)
      this.resize(this.offsets.length, Math.max(end, this.lines.length * 2));
    this.headers[this.size] = kept(counted.header, HEADER_NOT_KEPT);
    counted.lines.forEach((tokens, i) => (this.lines[start + i] = kept(tokens, LINE_NOT_KEPT)));
    this.offsets[this.size] = offset;
    this.starts[++this.size] = end;
  }

  /**
   * Cuts the arrays, grown by doubling while a pass added, to what they hold and an eighth more,
   * when more than a quarter is spare: the passes after saves, which add a few records each, then
   * fit without copying every count.
   */
  private trim(): void {
    const lineCount = this.starts[this.size]!;
    if (this.offsets.length > roomFor(this.size) || this.lines.length > roomFor(lineCount))
      this.resize(spareFor(this.size), spareFor(lineCount));
  }

  /** Room for `entries` records and `lineCount` lines, what is held kept. */
  private resize(entries: number, lineCount: number): void {
    const held = this.size;
    if (entries !== this.offsets.length) {
      this.offsets = copied(new Float64Array(entries), this.offsets, held);
      this.headers = copied(new Uint16Array(entries), this.headers, held);
      this.starts = copied(new Uint32Array(entries + 1), this.starts, held + 1);
    }
    if (lineCount !== this.lines.length)
      this.lines = copied(new Uint8Array(lineCount), this.lines, this.starts[held]!);
  }

  /** The entry of the record at `offset`, or -1: a binary search of the ascending offsets. */
  private search(offset: number): number {
    let low = 0;
    let high = this.size - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      const at = this.offsets[middle]!;
      if (at === offset) return middle;
      if (at < offset) low = middle + 1;
      else high = middle - 1;
    }
    return -1;
  }
}

/** The most an array holding `count` values keeps before it is cut (a quarter spare). */
function roomFor(count: number): number {
  return Math.max(1024, Math.ceil(count * 1.25));
}

/** What an array holding `count` values is cut to (an eighth spare). */
function spareFor(count: number): number {
  return Math.max(1024, Math.ceil(count * 1.125));
}

/** `tokens` as kept in a count array whose largest value `notKept` marks a count not kept. */
function kept(tokens: number | undefined, notKept: number): number {
  return tokens === undefined || tokens >= notKept ? notKept : tokens;
}

/** `into` holding the first `count` values of `from`. */
function copied<Values extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(
  into: Values,
  from: Values,
  count: number,
): Values {
  into.set(from.subarray(0, count) as never);
  return into;
}
