import type { CallSite, CodeFact, LanguageId, SymbolKind } from '../model';
import { NameTable } from './names';

/** Numbers per call site in the arena: name, receiver, line, receiver type and kind. */
const FIELDS = 4;

/**
 * Every fact's call sites, packed: four numbers per site in one arena (names, receivers and
 * receiver types as numbers of the graph's name table), found by the fact's slot. A million call sites
 * as objects held about 64 MB of heap at 10k files; here they take 16 bytes each. The room of a
 * replaced or removed fact's sites is reclaimed when the arena would otherwise grow.
 */
export class CallTable {
  private arena = new Int32Array(64);
  private used = 0;
  private abandoned = 0;
  /** Where each slot's sites start in the arena, -1 for a slot holding none. */
  private start = new Int32Array(1024).fill(-1);
  private count = new Int32Array(1024);
  /** The fact each slot's sites belong to: a fact no longer in the graph has none to read. */
  private readonly owners: (object | undefined)[] = [];

  constructor(private readonly names = new NameTable()) {}

  /** Stores `calls` as the sites of `slot`, owned by `owner`, replacing any it held. */
  set(slot: number, calls: readonly CallSite[], owner: object): void {
    this.remove(slot);
    this.grow(slot);
    this.owners[slot] = owner;
    if (!calls.length) return;
    this.reserve(calls.length * FIELDS);
    let at = this.used;
    this.start[slot] = at;
    this.count[slot] = calls.length;
    for (const call of calls) {
      this.arena[at] = this.id(call.name);
      this.arena[at + 1] = call.receiver === null ? -1 : this.id(call.receiver);
      this.arena[at + 2] = call.line;
      const type = call.receiverType === undefined ? 0 : this.id(call.receiverType) + 1;
      this.arena[at + 3] = type * 2 + (call.kind === 'reference' ? 1 : 0);
      at += FIELDS;
    }
    this.used = at;
  }

  remove(slot: number): void {
    this.owners[slot] = undefined;
    if (slot >= this.start.length || this.start[slot]! < 0) return;
    this.abandoned += this.count[slot]! * FIELDS;
    this.start[slot] = -1;
    this.count[slot] = 0;
  }

  ownedBy(slot: number, owner: object): boolean {
    return this.owners[slot] === owner;
  }

  /** How many sites `slot` holds. */
  size(slot: number): number {
    return slot < this.count.length ? this.count[slot]! : 0;
  }

  /** Site `index` of `slot`, as a fresh object. */
  at(slot: number, index: number): CallSite {
    const at = this.start[slot]! + index * FIELDS;
    const receiver = this.arena[at + 1]!;
    const typeAndKind = this.arena[at + 3]!;
    const type = typeAndKind >> 1;
    return {
      name: this.names.at(this.arena[at]!),
      receiver: receiver < 0 ? null : this.names.at(receiver),
      line: this.arena[at + 2]!,
      ...(type ? { receiverType: this.names.at(type - 1) } : {}),
      ...(typeAndKind & 1 ? { kind: 'reference' as const } : {}),
    };
  }

  /** The called name of site `index` of `slot`, without building the site. */
  nameAt(slot: number, index: number): string {
    return this.names.at(this.nameIdAt(slot, index));
  }

  /** The number of the called name of site `index` of `slot` in the name table. */
  nameIdAt(slot: number, index: number): number {
    return this.arena[this.start[slot]! + index * FIELDS]!;
  }

  lineAt(slot: number, index: number): number {
    return this.arena[this.start[slot]! + index * FIELDS + 2]!;
  }

  all(slot: number): CallSite[] {
    const out: CallSite[] = [];
    for (let index = 0; index < this.size(slot); index++) out.push(this.at(slot, index));
    return out;
  }

  private id(value: string): number {
    return this.names.id(value);
  }

  /**
   * Makes room for `sites` more sites at once, exactly: opening a store adds every fact's sites
   * in one update, and an arena grown by doubling would hold up to twice what they need.
   */
  reserveSites(sites: number): void {
    this.reserve(sites * FIELDS, 1);
  }

  /**
   * Room for `size` more numbers. Growing by a quarter (not doubling) keeps the spare room of a
   * million sites small; each growth copies the arena, which a save rarely needs.
   */
  private reserve(size: number, growth = 1.25): void {
    if (this.used + size <= this.arena.length) return;
    if (this.abandoned >= this.used / 2) this.pack();
    if (this.used + size <= this.arena.length) return;
    const length = Math.max(this.used + size, Math.ceil(this.arena.length * growth));
    const arena = new Int32Array(length);
    arena.set(this.arena.subarray(0, this.used));
    this.arena = arena;
  }

  /** Moves the sites of every slot end to end, leaving out the room of replaced ones. */
  private pack(): void {
    const arena = new Int32Array(Math.max(64, this.used - this.abandoned));
    let at = 0;
    for (let slot = 0; slot < this.start.length; slot++) {
      const from = this.start[slot]!;
      if (from < 0) continue;
      const size = this.count[slot]! * FIELDS;
      arena.set(this.arena.subarray(from, from + size), at);
      this.start[slot] = at;
      at += size;
    }
    this.arena = arena;
    this.used = at;
    this.abandoned = 0;
  }

  private grow(slot: number): void {
    if (slot < this.start.length) return;
    const size = Math.max(slot + 1, this.start.length * 2);
    const start = new Int32Array(size).fill(-1);
    start.set(this.start);
    this.start = start;
    const count = new Int32Array(size);
    count.set(this.count);
    this.count = count;
  }
}

/**
 * A fact as the graph holds it: every field of the fact it was given, its call sites read from
 * the graph's call table when asked (each time as fresh objects; none once the fact has left the
 * graph, its slot then being another fact's).
 */
export class StoredFact implements CodeFact {
  readonly id: string;
  readonly path: string;
  readonly language: LanguageId;
  readonly qualifiedName: string;
  readonly name: string;
  readonly kind: SymbolKind;
  readonly className: string | null;
  readonly parent: string | null;
  readonly startLine: number;
  readonly endLine: number;
  readonly signature: string;
  readonly docstring: string | null;
  readonly raises: readonly string[];
  readonly errorStrings: readonly string[];
  readonly mutates: readonly string[];
  readonly imports: CodeFact['imports'];
  readonly bases: readonly string[];
  readonly chunkId: string | null;
  readonly #table: CallTable;
  readonly #slot: number;

  constructor(fact: CodeFact, table: CallTable, slot: number) {
    this.id = fact.id;
    this.path = fact.path;
    this.language = fact.language;
    this.qualifiedName = fact.qualifiedName;
    this.name = fact.name;
    this.kind = fact.kind;
    this.className = fact.className;
    this.parent = fact.parent;
    this.startLine = fact.startLine;
    this.endLine = fact.endLine;
    this.signature = fact.signature;
    this.docstring = fact.docstring;
    this.raises = fact.raises;
    this.errorStrings = fact.errorStrings;
    this.mutates = fact.mutates;
    this.imports = fact.imports;
    this.bases = fact.bases;
    this.chunkId = fact.chunkId;
    this.#table = table;
    this.#slot = slot;
  }

  get calls(): readonly CallSite[] {
    return this.#table.ownedBy(this.#slot, this) ? this.#table.all(this.#slot) : [];
  }
}
