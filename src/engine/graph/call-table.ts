import type { CallSite, CodeFact, LanguageId, SymbolKind } from '../model';
import { GROWTH, IntLists } from './int-lists';
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
  /** Each slot's sites, FIELDS numbers a site. */
  private readonly sites = new IntLists();
  /** The fact each slot's sites belong to: a fact no longer in the graph has none to read. */
  private readonly owners: (object | undefined)[] = [];

  constructor(private readonly names = new NameTable()) {}

  /** Stores `calls` as the sites of `slot`, owned by `owner`, replacing any it held. */
  set(slot: number, calls: readonly CallSite[], owner: object): void {
    this.remove(slot);
    this.owners[slot] = owner;
    this.sites.write(slot, calls.length * FIELDS, (arena, start) => {
      let at = start;
      for (const call of calls) {
        arena[at] = this.id(call.name);
        arena[at + 1] = call.receiver === null ? -1 : this.id(call.receiver);
        arena[at + 2] = call.line;
        const type = call.receiverType === undefined ? 0 : this.id(call.receiverType) + 1;
        arena[at + 3] = type * 2 + (call.kind === 'reference' ? 1 : 0);
        at += FIELDS;
      }
    });
  }

  /**
   * Stores the sites of `fact` as those of `slot`, owned by `owner`: copied as the numbers they are
   * when another table on this one's names holds them (facts gathered in `PendingFacts`), without
   * building a site or looking a name up.
   */
  setSitesOf(slot: number, fact: CodeFact, owner: object): void {
    const held = fact instanceof StoredFact ? StoredFact.sitesOf(fact) : null;
    if (!held || held.table === this || held.table.names !== this.names)
      return this.set(slot, fact.calls, owner);
    this.remove(slot);
    this.owners[slot] = owner;
    this.sites.set(slot, held.table.sites.get(held.slot));
  }

  /** How many call sites `fact` has, counted without building them when a table holds them. */
  static sitesIn(fact: CodeFact): number {
    if (!(fact instanceof StoredFact)) return fact.calls.length;
    const { table, slot } = StoredFact.sitesOf(fact);
    return table.size(slot);
  }

  remove(slot: number): void {
    this.owners[slot] = undefined;
    this.sites.clear(slot);
  }

  /** Whether this table numbers the names of its sites in `names`. */
  numbersNamesIn(names: NameTable): boolean {
    return this.names === names;
  }

  ownedBy(slot: number, owner: object): boolean {
    return this.owners[slot] === owner;
  }

  /** How many sites `slot` holds. */
  size(slot: number): number {
    return this.sites.sizeOf(slot) / FIELDS;
  }

  /** Site `index` of `slot`, as a fresh object. */
  at(slot: number, index: number): CallSite {
    const at = index * FIELDS;
    const receiver = this.sites.valueAt(slot, at + 1);
    const typeAndKind = this.sites.valueAt(slot, at + 3);
    const type = typeAndKind >> 1;
    return {
      name: this.names.at(this.sites.valueAt(slot, at)),
      receiver: receiver < 0 ? null : this.names.at(receiver),
      line: this.sites.valueAt(slot, at + 2),
      ...(type ? { receiverType: this.names.at(type - 1) } : {}),
      ...(typeAndKind & 1 ? { kind: 'reference' as const } : {}),
    };
  }

  /** Whether site `index` of `slot` names its target as a value instead of calling it. */
  isReferenceAt(slot: number, index: number): boolean {
    return (this.sites.valueAt(slot, index * FIELDS + 3) & 1) === 1;
  }

  /** The called name of site `index` of `slot`, without building the site. */
  nameAt(slot: number, index: number): string {
    return this.names.at(this.nameIdAt(slot, index));
  }

  /** The number of the called name of site `index` of `slot` in the name table. */
  nameIdAt(slot: number, index: number): number {
    return this.sites.valueAt(slot, index * FIELDS);
  }

  lineAt(slot: number, index: number): number {
    return this.sites.valueAt(slot, index * FIELDS + 2);
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
   * Makes room for `sites` more sites at once: into an empty table with little spare room (opening
   * a store adds every fact's sites in one update, and an arena grown by a quarter there would
   * hold a quarter more than they need), growing by a quarter otherwise, so that saves copy every
   * site rarely, not each time.
   */
  reserveSites(sites: number): void {
    this.sites.reserve(sites * FIELDS, this.sites.size ? GROWTH : 1);
  }
}

/**
 * What the facts of one file share: its path and language, and the graph's call table. One record
 * per file instead of three fields on each of 200k facts at 10k files (about 3 MB).
 */
export interface FactFile {
  readonly path: string;
  readonly language: LanguageId;
  readonly table: CallTable;
}

/**
 * A fact's lists. Two in three facts have none (at 10k files): those share `NO_LISTS`, and a fact
 * holds one field for its lists instead of five (the others pay a 64-byte record).
 */
interface FactLists {
  readonly raises: readonly string[];
  readonly errorStrings: readonly string[];
  readonly mutates: readonly string[];
  readonly imports: CodeFact['imports'];
  readonly bases: readonly string[];
}

const NO_LIST: readonly never[] = Object.freeze([]);
const NO_LISTS: FactLists = Object.freeze({
  raises: NO_LIST,
  errorStrings: NO_LIST,
  mutates: NO_LIST,
  imports: NO_LIST,
  bases: NO_LIST,
});

/** The fact's lists in one record, or the shared empty one when it has none. */
function factLists(fact: CodeFact): FactLists {
  const { raises, errorStrings, mutates, imports, bases } = fact;
  if (!raises.length && !errorStrings.length && !mutates.length && !imports.length && !bases.length)
    return NO_LISTS;
  return { raises, errorStrings, mutates, imports, bases };
}

/**
 * A fact as the graph holds it: every field of the fact it was given, its call sites read from
 * the graph's call table when asked (each time as fresh objects; none once the fact has left the
 * graph, its slot then being another fact's). Its path and language are its file's, its lists
 * one record: each field kept on 200k facts at 10k files costs 1.7 MB of heap.
 */
export class StoredFact implements CodeFact {
  readonly qualifiedName: string;
  readonly name: string;
  readonly kind: SymbolKind;
  readonly className: string | null;
  readonly parent: string | null;
  readonly startLine: number;
  readonly endLine: number;
  readonly signature: string;
  readonly docstring: string | null;
  readonly chunkId: string | null;
  readonly #file: FactFile;
  readonly #lists: FactLists;
  readonly #slot: number;
  /**
   * How the id follows from the path and qualified name: 0 `path::qualifiedName`, n `…#n` (a
   * name defined again in one file), or the id itself when it has another form. Ids are made
   * when asked: kept, 200k of them held 16 MB of heap at 10k files. A fact gathered in
   * `PendingFacts` keeps its id as given until a graph has taken it (see `settleId`): the graph
   * taking it reads the id several times, and an id made each time is a new string to hash.
   */
  #idForm: number | string;

  /** `file` must hold the fact's own path and language; `keepId`: see `#idForm`. */
  constructor(fact: CodeFact, file: FactFile, slot: number, keepId = false) {
    this.#idForm = keepId ? fact.id : idForm(fact);
    this.qualifiedName = fact.qualifiedName;
    this.name = fact.name;
    this.kind = fact.kind;
    this.className = fact.className;
    this.parent = fact.parent;
    this.startLine = fact.startLine;
    this.endLine = fact.endLine;
    this.signature = fact.signature;
    this.docstring = fact.docstring;
    this.chunkId = fact.chunkId;
    this.#file = file;
    this.#lists = factLists(fact);
    this.#slot = slot;
  }

  get path(): string {
    return this.#file.path;
  }

  get language(): LanguageId {
    return this.#file.language;
  }

  get raises(): readonly string[] {
    return this.#lists.raises;
  }

  get errorStrings(): readonly string[] {
    return this.#lists.errorStrings;
  }

  get mutates(): readonly string[] {
    return this.#lists.mutates;
  }

  get imports(): CodeFact['imports'] {
    return this.#lists.imports;
  }

  get bases(): readonly string[] {
    return this.#lists.bases;
  }

  /** The graph slot `fact` was stored in. */
  static slotOf(fact: StoredFact): number {
    return fact.#slot;
  }

  /** Makes `fact` keep its id as every fact a graph holds keeps it, not as given (see `#idForm`). */
  static settleId(fact: StoredFact): void {
    fact.#idForm = idForm(fact);
  }

  /** The file record `fact` shares with its file's other facts (path, language, call table). */
  static fileOf(fact: StoredFact): FactFile {
    return fact.#file;
  }

  /** Where `fact`'s call sites are held: its table, at its slot (none once it has left it). */
  static sitesOf(fact: StoredFact): { readonly table: CallTable; readonly slot: number } {
    const table = fact.#file.table;
    return { table: table.ownedBy(fact.#slot, fact) ? table : EMPTY_TABLE, slot: fact.#slot };
  }

  get id(): string {
    const form = this.#idForm;
    if (typeof form === 'string') return form;
    const id = `${this.path}::${this.qualifiedName}`;
    return form ? `${id}#${form}` : id;
  }

  /** Whether `id` is this fact's, compared piece by piece instead of making the id. */
  hasId(id: string): boolean {
    const form = this.#idForm;
    if (typeof form === 'string') return id === form;
    const { path, qualifiedName } = this;
    const end = path.length + 2 + qualifiedName.length;
    const suffix = form ? `#${form}` : '';
    return (
      id.length === end + suffix.length &&
      id.startsWith(path) &&
      id.startsWith('::', path.length) &&
      id.startsWith(qualifiedName, path.length + 2) &&
      id.endsWith(suffix)
    );
  }

  get calls(): readonly CallSite[] {
    const table = this.#file.table;
    return table.ownedBy(this.#slot, this) ? table.all(this.#slot) : [];
  }
}

/** A table holding no sites: where a fact that has left its table finds its (none). */
const EMPTY_TABLE = new CallTable();

/**
 * Facts on their way into a graph. An indexer's run gathers every parsed file's facts and the
 * graph takes them all at once when parsing is done. Held as the parse worker sent them (at 1k
 * files 57k facts and 310k call sites as objects near the end of parsing, each name its own
 * string), they were much of a cold index's peak memory. Here they are held as the graph holds its
 * facts, the call sites packed four numbers each in the graph's own name table, so that the graph
 * copies them as they are (`CallTable.setSitesOf`).
 */
export class PendingFacts {
  private table: CallTable;
  private files = new Map<string, FactFile>();
  private held: StoredFact[] = [];

  constructor(private readonly names: NameTable) {
    this.table = new CallTable(names);
  }

  add(fact: CodeFact): void {
    let file = this.files.get(fact.path);
    if (!file) {
      file = { path: fact.path, language: fact.language, table: this.table };
      this.files.set(fact.path, file);
    }
    const slot = this.held.length;
    const stored = new StoredFact(fact, file, slot, true);
    this.table.set(slot, fact.calls, stored);
    this.held.push(stored);
  }

  /**
   * The facts gathered, in the order they were added, given up: once the graph has taken them they
   * are garbage, not memory held through the rest of the run (its writes, where its memory peaks).
   */
  take(): readonly CodeFact[] {
    const facts = this.held;
    this.table = new CallTable(this.names);
    this.files = new Map();
    this.held = [];
    return facts;
  }
}

/**
 * The call table `facts` were gathered in (see `PendingFacts`), when every one of them is a
 * gathered fact of that one table, on the name table `names`, fact `at` in slot `at` of it; null
 * otherwise. A new graph given such facts takes them and their table as they are: copying them
 * held both copies at once while an index opened (a million facts and their call sites at 100k
 * files, about 150 MB of the opening's peak).
 */
export function gatheredTable(facts: readonly CodeFact[], names: NameTable): CallTable | null {
  const first = facts[0];
  if (!(first instanceof StoredFact)) return null;
  const table = StoredFact.fileOf(first).table;
  if (!table.numbersNamesIn(names)) return null;
  for (let at = 0; at < facts.length; at++) {
    const fact = facts[at]!;
    if (!(fact instanceof StoredFact) || StoredFact.fileOf(fact).table !== table) return null;
    if (StoredFact.slotOf(fact) !== at || !table.ownedBy(at, fact)) return null;
  }
  return table;
}

/** A fact's id as `StoredFact` keeps it: see `StoredFact.#idForm`. */
function idForm(fact: CodeFact): number | string {
  const base = `${fact.path}::${fact.qualifiedName}`;
  if (fact.id === base) return 0;
  const repeat = fact.id.startsWith(`${base}#`) ? fact.id.slice(base.length + 1) : '';
  // only the form the indexer writes (`#2`, `#3`, …) is rebuilt from a number
  return /^[1-9]\d{0,8}$/.test(repeat) && Number(repeat) > 1 ? Number(repeat) : fact.id;
}
