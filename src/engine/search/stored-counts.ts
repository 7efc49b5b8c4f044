import { getLogger } from '../log/logger';
import { countsFileOf, type LiveRecords, type TextsFile } from '../store/texts';
import { describeError } from '../util/result';
import { chunkTextCounter, type ChunkTextCounts } from './context';
import { readCounts, writeCounts, type SavedCounts } from './counts-file';

/**
 * Token counts of every chunk's text, counted once in the background so that building a
 * question's context looks them up instead of counting the code it shows (the largest part of
 * that stage). Per chunk: the count of its parents' header (`headerOf` its text) and of each of
 * its lines as a context shows it (` text` and a line break). Kept in memory by the record that
 * holds the text in the texts file: a record never changes once written, so a count found for a
 * chunk's current record is its text's count; a chunk saved again has a new record, counted on
 * the next pass, and until then its context counts at question time as before. A rewrite of the
 * texts file moves every record (a new layout): the counts are dropped and counted again. An
 * index's writer saves the counts beside its texts file (counts-file.ts) once a pass has counted
 * an eighth of them or more; the first pass after opening takes back the saved counts of the
 * live records, in file order up to the first one they do not hold, and counts only the rest. The
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
/** The counts are saved again once the records counted since they last were make this share of all. */
const UNSAVED_SHARE = 1 / 8;

export class StoredTokenCounts {
  /** Counted records by offset, ascending, and where their line counts start in `lines`. */
  private offsets = new Float64Array(1024);
  /** Per record: its checksum in the texts file, which a saved count is taken back by. */
  private checks = new Uint32Array(1024);
  private starts = new Uint32Array(1025);
  /** Per record: its header's count; its lines' from its start in `lines`. */
  private headers = new Uint16Array(1024);
  private lines = new Uint8Array(64 * 1024);
  private size = 0;
  /** The texts file's layout the offsets belong to. */
  private layout: number;
  private pass: Promise<void> = Promise.resolve();
  /** Whether the saved counts were looked for (by the first pass). */
  private looked = false;
  /** Records counted since the counts were last saved or taken back. */
  private unsaved = 0;

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

  /**
   * Saves the counts made since they were last saved, however few (a pass saves them itself only
   * once they are an eighth of all), after the passes queued now: for the next opening to take
   * back instead of counting again. Resolves once they are saved, or need not be.
   */
  saveUnsaved(): Promise<void> {
    this.pass = this.pass.then(() => (this.unsaved ? this.save() : undefined));
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

  /**
   * Counts the records not counted yet, over again from the first when the records move
   * meanwhile; the first time, after taking back the saved counts. Saves the counts when enough
   * are new.
   */
  private async countNew(pause: () => Promise<void>): Promise<void> {
    if (!this.looked) {
      this.looked = true;
      await pause();
      await this.takeBackSaved();
    }
    while (!(await this.countPass(pause)));
    if (this.unsaved && this.unsaved >= this.size * UNSAVED_SHARE) await this.save();
  }

  /** Adopts the saved counts of the records that are live in the texts file now, when it has any. */
  private async takeBackSaved(): Promise<void> {
    const file = countsFileOf(this.texts);
    if (!file || this.size) return;
    const layout = this.texts.layout;
    const read = await readCounts(file);
    if (!read.ok) {
      log.warn('token_counts_not_read', { code: read.error.code, error: read.error.message });
      return;
    }
    // a rewrite while the file was read moved the records: the pass counts them all again
    if (!read.value || this.texts.layout !== layout || this.size) return;
    const started = performance.now();
    const saved = read.value;
    const live = this.texts.recordsFrom(0);
    this.layout = layout;
    this.adopt(saved, matchingEntries(saved, live));
    log.info('token_counts_taken_back', {
      records: this.size,
      saved: saved.offsets.length,
      live: live.offsets.length,
      duration_ms: Math.round(performance.now() - started),
    });
  }

  /** Takes the `entries` of `saved` (ascending) as the counted records. */
  private adopt(saved: SavedCounts, entries: readonly number[]): void {
    const lineCount = entries.reduce(
      (sum, entry) => sum + saved.starts[entry + 1]! - saved.starts[entry]!,
      0,
    );
    this.resize(spareFor(entries.length), spareFor(lineCount));
    for (const entry of entries) {
      const start = this.starts[this.size]!;
      const from = saved.starts[entry]!;
      const to = saved.starts[entry + 1]!;
      this.lines.set(saved.lines.subarray(from, to), start);
      this.offsets[this.size] = saved.offsets[entry]!;
      this.checks[this.size] = saved.checks[entry]!;
      this.headers[this.size] = saved.headers[entry]!;
      this.starts[++this.size] = start + to - from;
    }
  }

  /** Saves the counts beside the texts file, when this index writes it; a failure is logged. */
  private async save(): Promise<void> {
    const file = countsFileOf(this.texts);
    if (!file || !this.texts.forWriting || this.texts.layout !== this.layout) return;
    const started = performance.now();
    const size = this.size;
    try {
      const { offsets, checks, starts, headers, lines } = this;
      await writeCounts(file, { offsets, checks, starts, headers, lines }, size);
      this.unsaved = 0;
      log.info('token_counts_saved', {
        records: size,
        duration_ms: Math.round(performance.now() - started),
      });
    } catch (cause) {
      log.warn('token_counts_not_saved', { error: describeError(cause) });
    }
  }

  /** Counts the records not counted yet; false when a rewrite moved them before it was done. */
  private async countPass(pause: () => Promise<void>): Promise<boolean> {
    await pause();
    // after the pause: a write during it may have rewritten the records
    if (this.texts.layout !== this.layout) {
      this.layout = this.texts.layout;
      this.size = 0;
      this.unsaved = 0;
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
      const check = records.checks[i]!;
      if (read.ok) this.add(offset, check, count(read.value));
      else if (read.error.code === 'cancelled')
        return true; // a closed index stops the pass
      else {
        // a damaged record is repaired by the next opening; until then its chunk counts at
        // question time, and the records after it are still counted
        log.warn('token_counts_skipped', { offset, error: read.error.message });
        this.add(offset, check, { header: undefined, lines: [] });
      }
    }
    this.trim();
    log.info('token_counts_caught_up', {
      records: records.offsets.length,
      duration_ms: Math.round(performance.now() - started),
    });
    return true;
  }

  private add(offset: number, check: number, counted: ChunkTextCounts): void {
    if (this.size === this.offsets.length) this.resize(this.size * 2, this.lines.length);
    const start = this.starts[this.size]!;
    const end = start + counted.lines.length;
    if (end > this.lines.length)
      this.resize(this.offsets.length, Math.max(end, this.lines.length * 2));
    this.headers[this.size] = kept(counted.header, HEADER_NOT_KEPT);
    counted.lines.forEach((tokens, i) => (this.lines[start + i] = kept(tokens, LINE_NOT_KEPT)));
    this.offsets[this.size] = offset;
    this.checks[this.size] = check;
    this.starts[++this.size] = end;
    this.unsaved++;
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
      this.checks = copied(new Uint32Array(entries), this.checks, held);
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

/**
 * The entries of `saved` for the live records, in file order, up to the first live record the
 * saved counts do not hold at its offset with its checksum (a pass counts from there on, so every
 * live record is counted once). Both lists are in offset order: one walk along them. Saved
 * entries of records no longer live are passed over.
 */
function matchingEntries(saved: SavedCounts, live: LiveRecords): number[] {
  const entries: number[] = [];
  let entry = 0;
  for (let i = 0; i < live.offsets.length; i++) {
    const offset = live.offsets[i]!;
    while (entry < saved.offsets.length && saved.offsets[entry]! < offset) entry++;
    if (saved.offsets[entry] !== offset || saved.checks[entry] !== live.checks[i]) break;
    entries.push(entry);
  }
  return entries;
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
