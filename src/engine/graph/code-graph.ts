import { fnv1a } from '../util/hash';
import { MODULE_QUALIFIED_NAME, type CallSite, type CodeFact, type ImportBinding } from '../model';
import { languageById } from '../lang/registry';
import type { LanguageSpec } from '../lang/spec';
import { CallTable, gatheredTable, PendingFacts, StoredFact, type FactFile } from './call-table';
import { ImportAliases } from './import-aliases';
import { IntLists } from './int-lists';
import { KeyTable } from './key-table';
import { ModuleMap } from './modules';
import { NameTable } from './names';
import { factHash, type SavedCalls } from './saved-calls';
import { SlotsById } from './slots-by-id';
import { SlotsByKey } from './slots-by-key';
import { normalizeIdentifier } from '../text/tokenize';

/**
 * The code-facts graph: every definition with its calls resolved to definitions, and the inverse
 * (`calledBy`). Resolution is import-aware: lexical scope, the file itself, its imports (followed
 * through re-exports), the package, the class hierarchy for `self`/`this`; a name defined exactly
 * once in the workspace is the last resort. Updates re-resolve only calls that could change.
 */
export type Resolution =
  'scope' | 'file' | 'import' | 'package' | 'class' | 'type' | 'module' | 'unique';

/** Every resolution, by the number a resolved call is stored with. */
const RESOLUTIONS: readonly Resolution[] = [
  'scope',
  'file',
  'import',
  'package',
  'class',
  'type',
  'module',
  'unique',
];
const RESOLUTION_NUMBER = new Map(RESOLUTIONS.map((how, number) => [how, number]));
/** A stored call is `site index × RESOLUTION_SPAN + resolution number`. */
const RESOLUTION_SPAN = 8;
/**
 * The version of how calls resolve, part of the key saved calls are kept under (see
 * saved-calls.ts): a change to resolution that can resolve a call otherwise must raise it, or an
 * index opened after it would take calls resolved the old way.
 */
export const RESOLVER_VERSION = 1;

export interface ResolvedCall {
  readonly callerId: string;
  readonly targetId: string;
  readonly site: CallSite;
  readonly how: Resolution;
}

/** A call site naming a definition that resolution could not settle, and why. */
export interface PossibleCall {
  readonly callerId: string;
  readonly site: CallSite;
  readonly reason: string;
}

export interface GraphChange {
  /** Facts whose incoming calls changed (their `calledBy` must be rewritten). */
  readonly changedTargets: Set<string>;
}

/**
 * Method names of built-in types: a call like `x.get()` on a receiver of unknown type is never
 * guessed to be the workspace's only `get`. A receiver whose type is known resolves whatever the
 * name, and an unresolved one is still reported as a possible caller.
 */
const BUILTIN_METHODS = new Set([
  'get',
  'set',
  'pop',
  'keys',
  'values',
  'items',
  'update',
  'append',
  'extend',
  'insert',
  'remove',
  'clear',
  'copy',
  'count',
  'index',
  'sort',
  'reverse',
  'join',
  'split',
  'strip',
  'lstrip',
  'rstrip',
  'replace',
  'format',
  'startswith',
  'endswith',
  'lower',
  'upper',
  'encode',
  'decode',
  'find',
  'read',
  'write',
  'flush',
  'seek',
  'tell',
  'readline',
  'readlines',
  'writelines',
  'close',
  'open',
  'add',
  'discard',
  'setdefault',
  'popitem',
  'push',
  'shift',
  'unshift',
  'slice',
  'splice',
  'map',
  'filter',
  'reduce',
  'forEach',
  'indexOf',
  'includes',
  'toString',
  'call',
  'apply',
  'bind',
  'then',
  'catch',
  'finally',
  'has',
  'delete',
  'entries',
  'concat',
  'trim',
  'test',
  'exec',
  'match',
  'toLowerCase',
  'toUpperCase',
  'charCodeAt',
  'substring',
  'substr',
  'startsWith',
  'endsWith',
  'some',
  'every',
  'fill',
  'assign',
  'create',
  'freeze',
  'stringify',
  'parse',
  'log',
  'error',
  'warn',
  'info',
  'debug',
  'emit',
  'on',
  'once',
  'off',
  'send',
  'end',
  'next',
  'resolve',
  'reject',
  'all',
  'race',
  'flat',
  'flatMap',
  'from',
  'of',
  'isArray',
  'hasOwnProperty',
  'valueOf',
  'toJSON',
  'length',
  'size',
  'default',
  'run',
  'start',
  'stop',
]);

/** Bases that give a class no methods a caller would mistake for the class's own. */
const NEUTRAL_BASES = new Set([
  'object',
  'ABC',
  'Generic',
  'Protocol',
  'NamedTuple',
  'TypedDict',
  'Enum',
  'Exception',
  'BaseException',
]);

/** Receivers that are language built-ins, never user objects. */
const BUILTIN_RECEIVERS = new Set([
  'JSON',
  'Math',
  'Object',
  'Array',
  'Promise',
  'console',
  'Number',
  'String',
  'Symbol',
  'Reflect',
  'Date',
  'process',
  'Buffer',
  'window',
  'document',
  'Error',
  'Map',
  'Set',
  'RegExp',
  'Boolean',
  'BigInt',
  'Intl',
]);

/** `super()` in Python, `super` in JavaScript and TypeScript: start the lookup at the base classes. */
const SUPER_RECEIVERS = new Set(['super()', 'super']);

const MAX_BASE_DEPTH = 6;
const MAX_REEXPORT_DEPTH = 4;

/** A file's definitions; the lookups by name are the graph's key tables, keyed by the file. */
interface FileFacts {
  /** What its facts share (path, language, the call table): facts that leave keep it, not this. */
  readonly shared: FactFile;
  readonly facts: CodeFact[];
  /** Every parent-less definition of a name, in source order, for names defined more than once. */
  sameNamed: Map<string, CodeFact[]> | undefined;
  module: CodeFact | undefined;
  /** The name of its first top-level definition (-1 for none): what a default import names. */
  firstTopLevel: number;
}

export class CodeGraph {
  /**
   * Every fact by slot, and each fact's slot by id (in the order facts were added, which is the
   * order `allFacts` keeps). Resolved calls name their callers and targets by slot, so they are
   * two numbers each instead of an object, a map entry and an array per call.
   */
  private readonly slots: (StoredFact | undefined)[] = [];
  private readonly slotById = new SlotsById();
  /** Slots no resolved call names any more, free for new facts. */
  private readonly freeSlots: number[] = [];
  /** Slots of facts removed by the update under way: freed when it ends, once no call names them. */
  private releasing: number[] = [];
  /**
   * The ids of the facts the update under way added, by slot: the strings it was given, so that
   * the ids its bookkeeping holds (every fact's, when a store opens) are not made again.
   */
  private addedIds: (string | undefined)[] = [];
  private readonly byFile = new Map<string, FileFacts>();
  /**
   * Slots by the numbers of a file's path and names, so resolution never scans a file's
   * definitions: by qualified name (file, the name's hash, a turn among names of one hash);
   * top-level definitions (file, name);
   * methods (file, class, name); functions nested in another definition (file, parent, name).
   * A later definition of a key replaces an earlier one, as it does when the module runs.
   */
  private readonly byQualifiedName = new KeyTable();
  private readonly topLevels = new KeyTable();
  private readonly members = new KeyTable();
  private readonly nested = new KeyTable();
  /** Top-level definitions of every folder (folder, name): a Go package sees all of them. */
  private readonly folderTopLevel = new KeyTable();
  /** The names the indexes below are keyed by, numbered; the call table numbers its names here too. */
  private readonly names = new NameTable();
  private readonly byName = new SlotsByKey();
  /** By name without case or separators: `getuserbyid` for `get_user_by_id` and `getUserById`. */
  private readonly byLooseName = new SlotsByKey();
  private readonly callersByName = new SlotsByKey();
  /** The other names imports give defined names: their callers are listed under those. */
  private readonly aliases = new ImportAliases();
  /** Definitions by the exception types they raise (as written, without a module). */
  private readonly raisersByType = new SlotsByKey();
  /** Each caller's resolved calls by its slot: pairs of target slot and stored call. */
  private readonly outgoing = new IntLists();
  /**
   * The calls into each definition by its slot: pairs of caller slot and stored call, one
   * caller's calls together, callers in the order they were (last) resolved.
   */
  private readonly incoming = new IntLists();
  private readonly modules: ModuleMap;
  /** Every fact's call sites; a new graph opened on gathered facts takes theirs (see `open`). */
  private callTable = new CallTable(this.names);

  constructor(rootPackage: string) {
    this.modules = new ModuleMap(rootPackage);
  }

  get size(): number {
    return this.slotById.size;
  }

  fact(id: string): CodeFact | undefined {
    const slot = this.slotOf(id);
    return slot === undefined ? undefined : this.slots[slot];
  }

  /** The id of the fact in `slot`, as given if the update under way added it. */
  private idOf(slot: number): string {
    return this.addedIds[slot] ?? this.slots[slot]!.id;
  }

  /** The slot of the fact with this id. */
  private slotOf(id: string): number | undefined {
    return this.slotById.find(stringHash(id), (slot) => this.slots[slot]!.hasId(id));
  }

  /**
   * The slot of `fact`: its own when the graph holds it there (a fact `factsInFile` gave), found by
   * its id otherwise. A folder's summary asks this of every definition of the folder's files after
   * each save, where making and hashing each id took ~6 ms at 100k files.
   */
  private slotOfFact(fact: CodeFact): number | undefined {
    if (fact instanceof StoredFact) {
      const slot = StoredFact.slotOf(fact);
      if (this.slots[slot] === fact) return slot;
    }
    return this.slotOf(fact.id);
  }

  factsInFile(path: string): readonly CodeFact[] {
    return this.byFile.get(path)?.facts ?? [];
  }

  factByQualifiedName(path: string, qualifiedName: string): CodeFact | undefined {
    const file = this.pathNumber(path);
    if (file === undefined) return undefined;
    const hash = stringHash(qualifiedName);
    for (let turn = 0; ; turn++) {
      const slot = this.byQualifiedName.get(file, hash, turn);
      if (slot < 0) return undefined;
      if (this.slots[slot]!.qualifiedName === qualifiedName) return this.slots[slot];
    }
  }

  nestedIn(path: string, parent: string, name: string): CodeFact | undefined {
    return this.lookUp(this.nested, path, parent, name);
  }

  /** A top-level definition anywhere in `folder` (Go packages span the files of a folder). */
  topLevelInFolder(folder: string, name: string): CodeFact | undefined {
    return this.lookUp(this.folderTopLevel, folder, name);
  }

  /**
   * The fact a key table holds under the numbers of a path (or folder) and one or two names; a
   * string never seen keys nothing.
   */
  private lookUp(
    table: KeyTable,
    path: string,
    name: string,
    member?: string,
  ): CodeFact | undefined {
    // most lookups miss (a scope with no nested functions, a name the file does not define):
    // each number is looked for only while the ones before it were found
    const a = this.pathNumber(path);
    if (a === undefined) return undefined;
    const b = this.names.find(name);
    if (b === undefined) return undefined;
    const c = member === undefined ? 0 : this.names.find(member);
    if (c === undefined) return undefined;
    const slot = table.get(a, b, c);
    return slot < 0 ? undefined : this.slots[slot];
  }

  /** The number of a path, remembered for the next lookup: resolution asks about one file at a time. */
  private pathNumber(path: string): number | undefined {
    if (path === this.lastPath) return this.lastPathNumber;
    const number = this.names.find(path);
    // a path not yet numbered may be numbered by the next definition added
    if (number !== undefined) {
      this.lastPath = path;
      this.lastPathNumber = number;
    }
    return number;
  }
  private lastPath: string | undefined;
  private lastPathNumber: number | undefined;

  files(): IterableIterator<string> {
    return this.byFile.keys();
  }

  allFacts(): CodeFact[] {
    const slots = this.slotById.slots();
    const out = new Array<CodeFact>(slots.length);
    for (let at = 0; at < slots.length; at++) out[at] = this.slots[slots[at]!]!;
    return out;
  }

  /** Resolved calls of `id` (a function named as a value is a reference, not a call). */
  callers(id: string): readonly ResolvedCall[] {
    return this.incomingOf(id).filter((call) => call.site.kind !== 'reference');
  }

  /**
   * How many of `fact`'s resolved calls come from functions outside file `path`, counted without
   * building the calls: a folder's summary ranks its definitions by this after every save, and
   * building every call of every definition of the folder took ~10 ms of the first save at 10k files.
   */
  callersOutside(fact: CodeFact, path: string): number {
    return this.countCallers(fact, (callerSlot) => this.slots[callerSlot]!.path !== path);
  }

  /**
   * How many resolved calls (references aside) name `fact`: `callers(fact.id).length`, counted
   * without building the calls. Analyses of the whole graph ask this of every fact.
   */
  callerCount(fact: CodeFact): number {
    return this.countCallers(fact, () => true);
  }

  /** How many of `fact`'s resolved calls (references aside) come from a caller `accept` takes. */
  private countCallers(fact: CodeFact, accept: (callerSlot: number) => boolean): number {
    const slot = this.slotOfFact(fact);
    const calls = slot === undefined ? undefined : this.incoming.get(slot);
    let count = 0;
    for (let at = 0; calls && at < calls.length; at += 2) {
      const callerSlot = calls[at]!;
      const site = Math.floor(calls[at + 1]! / RESOLUTION_SPAN);
      if (accept(callerSlot) && !this.callTable.isReferenceAt(callerSlot, site)) count++;
    }
    return count;
  }

  /** The facts `fact` calls, as `callees(fact.id)` lists them, without building the calls. */
  calledFacts(fact: CodeFact): CodeFact[] {
    const slot = this.slotOfFact(fact);
    const calls = slot === undefined ? undefined : this.outgoing.get(slot);
    const out: CodeFact[] = [];
    for (let at = 0; calls && at < calls.length; at += 2)
      if (!this.callTable.isReferenceAt(slot!, Math.floor(calls[at + 1]! / RESOLUTION_SPAN)))
        out.push(this.slots[calls[at]!]!);
    return out;
  }

  /**
   * Strongly connected components of the calls graph (references aside) with two or more members,
   * found from `facts` (Tarjan). The walk reads each fact's calls as the numbers the graph holds
   * and keeps its marks in arrays by slot and its own stack of frames: with maps keyed by fact
   * and a call per step, a million facts at 100k files took seconds, and a chain of calls ten
   * thousand deep overflowed the engine's stack. Components come in the order they close, each
   * in the order its members were reached.
   */
  callCycles(facts: readonly CodeFact[]): CodeFact[][] {
    const order = new Int32Array(this.slots.length).fill(-1);
    const low = new Int32Array(this.slots.length);
    const onStack = new Uint8Array(this.slots.length);
    const stack: number[] = [];
    const frames: { slot: number; calls: Int32Array; at: number }[] = [];
    const cycles: CodeFact[][] = [];
    let counter = 0;
    const enter = (slot: number) => {
      order[slot] = low[slot] = counter++;
      stack.push(slot);
      onStack[slot] = 1;
      frames.push({ slot, calls: this.outgoing.get(slot), at: 0 });
    };
    for (const fact of facts) {
      const root = this.slotOfFact(fact);
      if (root === undefined || order[root]! >= 0) continue;
      enter(root);
      while (frames.length) {
        const frame = frames[frames.length - 1]!;
        if (frame.at < frame.calls.length) {
          const target = frame.calls[frame.at]!;
          const site = Math.floor(frame.calls[frame.at + 1]! / RESOLUTION_SPAN);
          frame.at += 2;
          if (this.callTable.isReferenceAt(frame.slot, site)) continue;
          if (order[target]! < 0) enter(target);
          else if (onStack[target]) low[frame.slot] = Math.min(low[frame.slot]!, order[target]!);
          continue;
        }
        frames.pop();
        const { slot } = frame;
        if (low[slot] === order[slot]) {
          const component: CodeFact[] = [];
          let member: number;
          do {
            member = stack.pop()!;
            onStack[member] = 0;
            component.push(this.slots[member]!);
          } while (member !== slot);
          if (component.length > 1) cycles.push(component.reverse());
        }
        // what the caller's frame does once the call returns
        const caller = frames[frames.length - 1];
        if (caller) low[caller.slot] = Math.min(low[caller.slot]!, low[slot]!);
      }
    }
    return cycles;
  }

  /**
   * How many different names `fact`'s call sites call (references aside): the size of the set of
   * `callSites(fact)`'s names, counted from the call table's numbers without building the sites.
   */
  calledNameCount(fact: CodeFact): number {
    const slot = this.slotOfFact(fact);
    // a fact the graph does not hold as given has its own sites, not the table's
    if (slot === undefined || this.slots[slot] !== fact)
      return new Set(callSites(fact).map((call) => call.name)).size;
    const names: number[] = [];
    const sites = this.callTable.size(slot);
    for (let index = 0; index < sites; index++) {
      if (this.callTable.isReferenceAt(slot, index)) continue;
      const name = this.callTable.nameIdAt(slot, index);
      if (!names.includes(name)) names.push(name);
    }
    return names.length;
  }

  /** Places that name `id` as a value: passed as a callback, put in a handler table, a decorator. */
  references(id: string): readonly ResolvedCall[] {
    return this.incomingOf(id).filter((call) => call.site.kind === 'reference');
  }

  /**
   * Calls naming `id` that resolved to nothing, kept with the reason: a receiver of unknown type,
   * a name defined more than once, a method its class does not define. Calls resolution knows go
   * elsewhere (another definition, a library, a built-in type) are not possible callers.
   */
  possibleCallers(id: string): PossibleCall[] {
    const target = this.fact(id);
    if (!target || target.kind === 'module') return [];
    const out: PossibleCall[] = [];
    for (const slot of this.callersByName.get(this.names.find(target.name))) {
      const caller = this.slots[slot]!;
      const callerId = caller.id;
      const resolved = new Set<number>();
      const calls = this.outgoing.get(slot);
      for (let at = 1; at < calls.length; at += 2)
        resolved.add(Math.floor(calls[at]! / RESOLUTION_SPAN));
      let context: CallContext | undefined;
      caller.calls.forEach((site, index) => {
        if (site.name !== target.name || site.kind === 'reference' || resolved.has(index)) return;
        context ??= new CallContext(this, caller);
        const reason = context.unresolvedReason(site, target);
        if (reason) out.push({ callerId, site, reason });
      });
    }
    return out;
  }

  private incomingOf(id: string): ResolvedCall[] {
    const slot = this.slotOf(id);
    const calls = slot === undefined ? undefined : this.incoming.get(slot);
    const out: ResolvedCall[] = [];
    for (let at = 0; calls && at < calls.length; at += 2)
      out.push(this.resolvedCall(calls[at]!, slot!, calls[at + 1]!));
    return out;
  }

  /** What `id` calls (functions it names as values are references, not calls). */
  callees(id: string): readonly ResolvedCall[] {
    const slot = this.slotOf(id);
    const calls = slot === undefined ? undefined : this.outgoing.get(slot);
    const out: ResolvedCall[] = [];
    for (let at = 0; calls && at < calls.length; at += 2) {
      const call = this.resolvedCall(slot!, calls[at]!, calls[at + 1]!);
      if (call.site.kind !== 'reference') out.push(call);
    }
    return out;
  }

  /** A stored call as the object callers, callees and references hand out. */
  private resolvedCall(callerSlot: number, targetSlot: number, stored: number): ResolvedCall {
    const caller = this.slots[callerSlot]!;
    return {
      callerId: caller.id,
      targetId: this.slots[targetSlot]!.id,
      site: this.callTable.at(callerSlot, Math.floor(stored / RESOLUTION_SPAN)),
      how: RESOLUTIONS[stored % RESOLUTION_SPAN]!,
    };
  }

  /** Definitions with a call naming `name` (`f()`, `obj.f()`, `new f()`), resolved or not. */
  factsCalling(name: string): CodeFact[] {
    return this.factsIn(this.callersByName, name);
  }

  /** Definitions raising exception type `type` (as the code names it), in the order they were added. */
  factsRaising(type: string): CodeFact[] {
    return this.factsIn(this.raisersByType, type);
  }

  /** The facts an index holds under `key`, in its order. */
  private factsIn(index: SlotsByKey, key: string): CodeFact[] {
    return index.get(this.names.find(key)).map((slot) => this.slots[slot]!);
  }

  /** Definitions with this simple name (`ensure_sync`) or qualified name (`Flask.ensure_sync`). */
  definitionsNamed(name: string): CodeFact[] {
    return this.someDefinitionsNamed(name, () => true, Infinity);
  }

  /**
   * The first `limit` of `definitionsNamed(name)` that `accept` takes, looked through only until
   * they are found: at 100k files a common name (`get`, `close`) has thousands of definitions,
   * and a caller asking whether a name is distinctive needs to see a few of them.
   */
  someDefinitionsNamed(
    name: string,
    accept: (fact: CodeFact) => boolean,
    limit: number,
  ): CodeFact[] {
    const simple = name.slice(name.lastIndexOf('.') + 1);
    const found: CodeFact[] = [];
    for (const slot of this.byName.get(this.names.find(simple))) {
      if (found.length >= limit) break;
      const fact = this.slots[slot]!;
      const named =
        simple === name || fact.qualifiedName === name || fact.qualifiedName.endsWith(`.${name}`);
      if (named && accept(fact)) found.push(fact);
    }
    return found;
  }

  /**
   * The smallest definition in `path` (not the module) holding lines `start` to `end`, among
   * those `accept` takes: the one a line of code belongs to.
   */
  innermostAt(
    path: string,
    start: number,
    end = start,
    accept: (fact: CodeFact) => boolean = () => true,
  ): CodeFact | undefined {
    let best: CodeFact | undefined;
    for (const fact of this.factsInFile(path)) {
      if (fact.kind === 'module' || fact.startLine > start || end > fact.endLine || !accept(fact))
        continue;
      if (!best || fact.endLine - fact.startLine < best.endLine - best.startLine) best = fact;
    }
    return best;
  }

  /** Definitions whose name, without case or separators, is `normalized`. */
  definitionsLooselyNamed(normalized: string): CodeFact[] {
    return this.factsIn(this.byLooseName, normalized);
  }

  /** A place to gather facts for a later `update`, held as this graph holds them. */
  pending(): PendingFacts {
    return new PendingFacts(this.names);
  }

  /**
   * Replaces the facts of `removedPaths` with `added` and re-resolves every call that could change.
   * A definition that comes back with the same id and shape (a saved file whose functions only
   * changed inside) keeps its callers: only new, removed or reshaped definitions, and changed
   * imports, send the calls naming them to be resolved again.
   */
  update(removedPaths: Iterable<string>, added: readonly CodeFact[]): GraphChange {
    // made once a removed fact asks for its replacement: a first index (200k facts at 10k files)
    // removes none
    let addedById: Map<string, CodeFact> | undefined;
    const replacementOf = (id: string) =>
      (addedById ??= new Map(added.map((fact) => [fact.id, fact]))).get(id);
    /** Definitions coming back unchanged in shape keep their slot, and with it their callers. */
    const keptSlots = new Map<string, number>();
    const touchedNames = new Set<string>();
    /** Callers of removed definitions, by id: a caller removed and added again may change slot. */
    const callersOfRemoved = new Set<string>();
    const tracker = new IncomingTracker();
    const unresolved = new Map<number, Set<number>>();
    const replacedModules = new Set<string>();
    const importedByNewFiles = new Set<string>();

    for (const path of removedPaths) {
      const file = this.byFile.get(path);
      for (const fact of file?.facts ?? []) {
        const id = fact.id;
        const slot = this.slotOf(id);
        if (slot === undefined) continue;
        const replacement = replacementOf(id);
        if (replacement && sameShape(fact, replacement)) keptSlots.set(id, slot);
        else {
          touchedNames.add(fact.name);
          // Its callers resolve again below; unresolving them records what they took away.
          // (callers already let go of their calls in this update no longer count as its callers)
          const calls = this.incoming.get(slot);
          for (let at = 0; at < calls.length; at += 2)
            if (this.outgoing.has(calls[at]!)) callersOfRemoved.add(this.idOf(calls[at]!));
          this.incoming.clear(slot);
        }
        if (fact.qualifiedName === MODULE_QUALIFIED_NAME) {
          const next = replacement?.imports ?? [];
          for (const name of changedImportNames(fact.imports, next)) touchedNames.add(name);
          replacedModules.add(id);
        }
        this.unresolveOutgoing(slot, tracker, unresolved);
        this.removeFact(fact, slot, keptSlots.has(id));
      }
      if (file) this.dropFileLookups(path, file);
      this.byFile.delete(path);
      this.modules.remove(path);
    }
    this.flushRemovals();
    this.callTable.reserveSites(added.reduce((sites, fact) => sites + CallTable.sitesIn(fact), 0));
    const addedSlots: number[] = [];
    for (const fact of added) {
      addedSlots.push(this.addFact(fact, keptSlots.get(fact.id)));
      if (!keptSlots.has(fact.id)) touchedNames.add(fact.name);
      // A new file's imports can complete a chain of re-exports other files' calls go through.
      if (fact.qualifiedName === MODULE_QUALIFIED_NAME && !replacedModules.has(fact.id))
        for (const name of changedImportNames([], fact.imports)) importedByNewFiles.add(name);
    }
    // Callers by slot from here on (every fact now has its slot): kept by id, each of a first
    // index's 200k facts (at 10k files) was put in a set by its id and found again by hashing it.
    const affectedCallers = new Set<number>();
    for (const id of callersOfRemoved) {
      const slot = this.slotOf(id);
      if (slot !== undefined) affectedCallers.add(slot);
    }
    for (const name of touchedNames)
      for (const slot of this.callersNamed(name)) affectedCallers.add(slot);
    for (const slot of addedSlots) affectedCallers.add(slot);
    // after the rest, so the order callers resolve in (and are listed in) is the same as before
    for (const name of importedByNewFiles)
      for (const slot of this.callersNamed(name)) affectedCallers.add(slot);

    // Every affected caller lets go of its calls before any resolves again, so each target's
    // callers are filtered once, however many of them changed.
    const callers = [...affectedCallers];
    for (const slot of callers) this.unresolveOutgoing(slot, tracker, unresolved);
    // Each target's calls are written once, after every caller resolved: its kept calls, then the
    // new ones. (Written after the drop as well, a save of a file calling common functions
    // appended their whole lists to the arena twice, and the arena was packed twice as often.)
    const called = this.keptIncoming(unresolved);
    // two numbers per resolved call at most, a site resolving to one definition at most
    this.outgoing.reserve(
      2 * callers.reduce((sites, slot) => sites + this.callTable.size(slot), 0),
    );
    for (const slot of callers) this.resolveOutgoing(slot, tracker, called);
    let room = 0;
    for (const [target, calls] of called) room += this.incoming.roomFor(target, calls.length);
    this.incoming.reserve(room);
    for (const [target, calls] of called) this.incoming.set(target, calls);
    this.endUpdate();
    return { changedTargets: tracker.changed() };
  }

  /**
   * Adds the facts of an index being opened to this new graph with `saved`, the calls a graph
   * resolved for exactly these facts (see saved-calls.ts), and takes them instead of resolving
   * every call again. When they do not fit these facts (another count, a fact they do not name,
   * two facts of one hash, a number out of range) nothing is taken and the calls are resolved
   * afresh, as `update` does. Says whether the saved calls were taken.
   */
  open(facts: readonly CodeFact[], saved: SavedCalls | null): boolean {
    // only a graph that never held a fact gives fact `at` slot `at` (no slot is free to reuse)
    const slots = saved && !this.slots.length ? slotsOfSaved(facts, saved) : null;
    if (!saved || !slots) {
      this.update([], facts);
      return false;
    }
    // facts gathered for this graph are taken as they are, each already in its slot of the table
    // it becomes this graph's; others are copied in
    const gathered = gatheredTable(facts, this.names);
    if (gathered) this.callTable = gathered;
    else
      this.callTable.reserveSites(
        facts.reduce((sites, fact) => sites + CallTable.sitesIn(fact), 0),
      );
    for (const fact of facts) this.addFact(fact, undefined, gathered !== null);
    adoptLists(this.outgoing, slots, saved.outgoingSizes, saved.outgoing);
    adoptLists(this.incoming, slots, saved.incomingSizes, saved.incoming);
    this.endUpdate();
    // the ids kept for the take-in (a million strings at 100k files) are made when asked from now on
    if (gathered) for (const fact of facts) StoredFact.settleId(fact as StoredFact);
    return true;
  }

  /**
   * Every resolved call, for saving (see saved-calls.ts): facts numbered in the order `allFacts`
   * lists them, each list in the order it is held.
   */
  resolvedCalls(): SavedCalls {
    const slots = [...this.slotById.slots()];
    const numberOf = new Int32Array(this.slots.length).fill(-1);
    slots.forEach((slot, number) => (numberOf[slot] = number));
    const hashes = Float64Array.from(slots, (slot) => factHash(this.idOf(slot)));
    const [outgoingSizes, outgoing] = numberedLists(this.outgoing, slots, numberOf);
    const [incomingSizes, incoming] = numberedLists(this.incoming, slots, numberOf);
    return { hashes, outgoingSizes, outgoing, incomingSizes, incoming };
  }

  /** What every update ends with: freed slots released, spare room given back. */
  private endUpdate(): void {
    this.incoming.trim();
    this.outgoing.trim();
    for (const slot of this.releasing) {
      this.slots[slot] = undefined;
      this.callTable.remove(slot);
    }
    this.freeSlots.push(...this.releasing);
    this.releasing = [];
    this.addedIds = [];
    for (const index of [this.byName, this.byLooseName, this.callersByName, this.raisersByType])
      index.trim();
  }

  /** The callers of `name`: those calling it by name and those calling a name imports give it. */
  private *callersNamed(name: string): Generator<number> {
    yield* this.callersByName.get(this.names.find(name));
    for (const alias of this.aliases.of(name))
      yield* this.callersByName.get(this.names.find(alias));
  }

  /**
   * Adds `given` (in the slot of a fact of its id, else `keptSlot` or a free one) and says where.
   * `taken`: `given` is a fact of this graph's call table already, in the slot it gets here, and is
   * held as it is (see `open`).
   */
  private addFact(given: CodeFact, keptSlot: number | undefined, taken = false): number {
    const hash = stringHash(given.id);
    const held = this.slotById.find(hash, (slot) => this.slots[slot]!.hasId(given.id));
    const slot = held ?? keptSlot ?? this.freeSlots.pop() ?? this.slots.length;
    let file = this.byFile.get(given.path);
    if (!file) {
      const shared = taken
        ? StoredFact.fileOf(given as StoredFact)
        : { path: given.path, language: given.language, table: this.callTable };
      file = { shared, facts: [], sameNamed: undefined, module: undefined, firstTopLevel: -1 };
      this.byFile.set(given.path, file);
      this.modules.add(given.path, given.language);
    }
    const fact = taken ? (given as StoredFact) : new StoredFact(given, file.shared, slot);
    if (!taken) this.callTable.setSitesOf(slot, given, fact);
    this.slots[slot] = fact;
    this.addedIds[slot] = given.id;
    this.slotById.add(slot, hash);
    file.facts.push(fact);
    const path = this.names.id(fact.path);
    const name = this.names.id(fact.name);
    // A later definition of a name replaces an earlier one, as it does when the module runs.
    this.setQualifiedName(path, fact.qualifiedName, slot);
    if (fact.qualifiedName === MODULE_QUALIFIED_NAME) {
      file.module = fact;
      this.aliases.add(fact.imports);
    } else if (fact.kind === 'method' && fact.className)
      this.members.set(path, this.names.id(fact.className), name, slot);
    else if (fact.parent === null && fact.className === null) {
      const earlier = this.topLevels.get(path, name);
      if (earlier >= 0) {
        file.sameNamed ??= new Map();
        const all = file.sameNamed.get(fact.name) ?? [this.slots[earlier]!];
        all.push(fact);
        all.sort((a, b) => a.startLine - b.startLine);
        file.sameNamed.set(fact.name, all);
      }
      this.topLevels.set(path, name, 0, slot);
      if (file.firstTopLevel < 0) file.firstTopLevel = name;
      this.folderTopLevel.set(this.names.id(folderOf(fact.path)), name, 0, slot);
    } else if (fact.parent !== null) this.nested.set(path, this.names.id(fact.parent), name, slot);
    if (fact.qualifiedName !== MODULE_QUALIFIED_NAME) {
      this.byName.add(name, slot);
      this.byLooseName.add(this.names.id(normalizeIdentifier(fact.name)), slot);
    }
    // a definition's sites of one name follow each other here: the index keeps it once
    const sites = this.callTable.size(slot);
    for (let index = 0; index < sites; index++)
      this.callersByName.add(this.callTable.nameIdAt(slot, index), slot);
    for (const type of fact.raises) this.raisersByType.add(this.names.id(type), slot);
    return slot;
  }

  /**
   * Takes a removed fact out of every index. Its slot stays taken until the update ends (its
   * callers' calls still name it until they resolve again), for good when `keepSlot` says the
   * same definition comes back in it.
   */
  private removeFact(fact: CodeFact, slot: number, keepSlot: boolean): void {
    this.slotById.remove(slot);
    if (!keepSlot) this.releasing.push(slot);
    const folder = this.names.id(folderOf(fact.path));
    const name = this.names.id(fact.name);
    if (this.folderTopLevel.get(folder, name) === slot) this.folderTopLevel.delete(folder, name);
    this.byName.remove(name, slot);
    this.byLooseName.remove(this.names.id(normalizeIdentifier(fact.name)), slot);
    for (let index = 0; index < this.callTable.size(slot); index++)
      this.callersByName.remove(this.callTable.nameIdAt(slot, index), slot);
    for (const type of fact.raises) this.raisersByType.remove(this.names.id(type), slot);
    if (fact.qualifiedName === MODULE_QUALIFIED_NAME) this.aliases.remove(fact.imports);
  }

  /**
   * Files its definition under its qualified name's hash: the first turn free or holding the same
   * qualified name (a later definition replaces an earlier one) takes it.
   */
  private setQualifiedName(path: number, qualifiedName: string, slot: number): void {
    const hash = stringHash(qualifiedName);
    for (let turn = 0; ; turn++) {
      const held = this.byQualifiedName.get(path, hash, turn);
      if (held < 0 || this.slots[held]!.qualifiedName === qualifiedName) {
        this.byQualifiedName.set(path, hash, turn, slot);
        return;
      }
    }
  }

  /** Takes a removed file's definitions out of the lookups keyed by its path. */
  private dropFileLookups(filePath: string, file: FileFacts): void {
    const path = this.names.id(filePath);
    for (const fact of file.facts) {
      const name = this.names.id(fact.name);
      const hash = stringHash(fact.qualifiedName);
      for (let turn = 0; this.byQualifiedName.get(path, hash, turn) >= 0; turn++)
        this.byQualifiedName.delete(path, hash, turn);
      this.topLevels.delete(path, name);
      if (fact.className !== null) this.members.delete(path, this.names.id(fact.className), name);
      if (fact.parent !== null) this.nested.delete(path, this.names.id(fact.parent), name);
    }
  }

  /** Applies the removals `removeFact` made from the name indexes. */
  private flushRemovals(): void {
    this.byName.flush();
    this.byLooseName.flush();
    this.callersByName.flush();
    this.raisersByType.flush();
  }

  /**
   * Forgets the calls of the caller in `slot`; which targets lose which callers is gathered in
   * `unresolved`, for `dropIncoming` to apply to each target once.
   */
  private unresolveOutgoing(
    slot: number,
    tracker: IncomingTracker,
    unresolved: Map<number, Set<number>>,
  ): void {
    const calls = this.outgoing.get(slot);
    if (!calls.length) return;
    // the view stays valid while it is read: clearing a list moves nothing
    this.outgoing.clear(slot);
    const callerId = this.idOf(slot);
    for (let at = 0; at < calls.length; at += 2) {
      const target = calls[at]!;
      let callers = unresolved.get(target);
      if (!callers) unresolved.set(target, (callers = new Set()));
      callers.add(slot);
      tracker.removed(
        callerId,
        this.idOf(target),
        this.callTable.lineAt(slot, Math.floor(calls[at + 1]! / RESOLUTION_SPAN)),
      );
    }
  }

  /**
   * Each target's incoming calls without those of the given callers, by target, to be stored once
   * the callers have resolved again (targets that hold no calls are left out).
   */
  private keptIncoming(unresolved: Map<number, Set<number>>): Map<number, number[]> {
    const kept = new Map<number, number[]>();
    for (const [target, callers] of unresolved) {
      const calls = this.incoming.get(target);
      if (!calls.length) continue;
      const left: number[] = [];
      for (let at = 0; at < calls.length; at += 2)
        if (!callers.has(calls[at]!)) left.push(calls[at]!, calls[at + 1]!);
      kept.set(target, left);
    }
    return kept;
  }

  /**
   * Resolves the calls of the caller in `slot`. The calls into each target reached are gathered
   * in `called` (after its kept calls there, or its stored calls), to be stored once every caller
   * has resolved.
   */
  private resolveOutgoing(
    slot: number,
    tracker: IncomingTracker,
    called: Map<number, number[]>,
  ): void {
    const caller = this.slots[slot]!;
    const callerId = this.idOf(slot);
    const resolved: number[] = [];
    const context = new CallContext(this, caller);
    caller.calls.forEach((site, index) => {
      const target = context.resolve(site);
      // A name passed as a value is a reference only where scope, imports or the class say so.
      if (!target || (site.kind === 'reference' && target.how === 'unique')) return;
      const targetSlot = StoredFact.slotOf(target.fact as StoredFact);
      const stored = index * RESOLUTION_SPAN + RESOLUTION_NUMBER.get(target.how)!;
      resolved.push(targetSlot, stored);
      tracker.added(callerId, this.idOf(targetSlot), site.line);
      let incoming = called.get(targetSlot);
      if (!incoming) called.set(targetSlot, (incoming = Array.from(this.incoming.get(targetSlot))));
      incoming.push(slot, stored);
    });
    this.outgoing.set(slot, resolved);
  }

  /** Files an import binding's module refers to. */
  resolveModule(fromPath: string, spec: LanguageSpec, specifier: string): string[] {
    return this.modules.resolve(fromPath, spec.moduleSystem, specifier);
  }

  /** The top-level definition named `name` in a file (a function or class). */
  topLevel(path: string, name: string): CodeFact | undefined {
    return this.lookUp(this.topLevels, path, name);
  }

  /**
   * The parent-less definition of `name` in effect at `line` when a file defines it more than
   * once: the nearest one that starts before the line, else the first. Undefined when the name is
   * defined once.
   */
  sameNamedAt(path: string, name: string, line: number): CodeFact | undefined {
    const all = this.byFile.get(path)?.sameNamed?.get(name);
    if (!all) return undefined;
    return all.filter((fact) => fact.startLine <= line).pop() ?? all[0];
  }

  moduleFact(path: string): CodeFact | undefined {
    return this.byFile.get(path)?.module;
  }

  /** The method (or owner-assigned function) `name` of class/owner `className` in `path`. */
  member(path: string, className: string, name: string): CodeFact | undefined {
    return this.lookUp(this.members, path, className, name);
  }

  uniqueDefinition(name: string, accept: (fact: CodeFact) => boolean): CodeFact | undefined {
    let found: CodeFact | undefined;
    for (const slot of this.byName.get(this.names.find(name))) {
      const fact = this.slots[slot]!;
      if (!accept(fact)) continue;
      if (found) return undefined;
      found = fact;
    }
    return found;
  }

  /** Resolves an imported name to its definition, following re-exports and wildcard imports. */
  resolveImported(
    fromPath: string,
    binding: ImportBinding,
    depth = 0,
  ): CodeFact | 'module' | undefined {
    const language = this.byFile.get(fromPath)?.facts[0]?.language;
    if (!language) return undefined;
    const spec = languageById(language);
    const files = this.resolveModule(fromPath, spec, binding.module);
    if (!files.length) return undefined;
    if (binding.imported === null) return 'module';
    const name = binding.imported === 'default' ? null : binding.imported;
    for (const file of files) {
      const found = name ? this.exported(file, name, depth) : this.defaultExport(file);
      if (found) return found;
    }
    // `from package import submodule`
    if (
      name &&
      spec.moduleSystem === 'python' &&
      this.resolveModule(fromPath, spec, submodule(binding.module, name)).length
    ) {
      return 'module';
    }
    return undefined;
  }

  /** A name as another module sees it: defined there, or re-exported from somewhere else. */
  exported(path: string, name: string, depth = 0): CodeFact | undefined {
    const own = this.topLevel(path, name);
    if (own) return own;
    if (depth >= MAX_REEXPORT_DEPTH) return undefined;
    const module = this.moduleFact(path);
    for (const binding of module?.imports ?? []) {
      if (binding.local === name && binding.imported !== null) {
        const found = this.resolveImported(path, binding, depth + 1);
        if (found && found !== 'module') return found;
      }
      if (binding.kind === 'wildcard') {
        const spec = languageById(module!.language);
        for (const file of this.resolveModule(path, spec, binding.module)) {
          const found = this.exported(file, name, depth + 1);
          if (found) return found;
        }
      }
    }
    return undefined;
  }

  private defaultExport(path: string): CodeFact | undefined {
    const file = this.byFile.get(path);
    if (!file || file.firstTopLevel < 0) return undefined;
    const slot = this.topLevels.get(this.names.id(path), file.firstTopLevel);
    return slot < 0 ? undefined : this.slots[slot];
  }

  isBuiltinMethod(name: string): boolean {
    return BUILTIN_METHODS.has(name);
  }

  /** How many definitions carry this simple name. */
  countNamed(name: string): number {
    return this.byName.count(this.names.find(name));
  }
}

/** What a type expression names: a workspace class, a type from elsewhere, or nothing known. */
type TypeTarget = CodeFact | 'external' | undefined;

const TYPE_KINDS = new Set(['class', 'interface', 'struct', 'trait']);

/** Wrappers whose argument is the value's type (`Optional[Foo]`, `Promise<Foo>`). */
const TRANSPARENT_WRAPPERS = new Set([
  'Optional',
  'Annotated',
  'Final',
  'ClassVar',
  'Type',
  'type',
  'Promise',
  'Readonly',
  'NonNullable',
  'Awaitable',
  'Coroutine',
]);

/** Annotations that say nothing about the value's class. */
const UNINFORMATIVE_TYPES = new Set(['Any', 'any', 'unknown', 'object', 'Object', 'T', 'Self']);

/** Built-in and library type names whose methods are never the workspace's. */
const BUILTIN_TYPES = new Set([
  'str',
  'int',
  'float',
  'bool',
  'bytes',
  'list',
  'dict',
  'set',
  'tuple',
  'List',
  'Dict',
  'Set',
  'Tuple',
  'Sequence',
  'Mapping',
  'Iterable',
  'Iterator',
  'Callable',
  'string',
  'number',
  'boolean',
  'Array',
  'ReadonlyArray',
  'Record',
  'Function',
  ...BUILTIN_RECEIVERS,
]);

/** The return annotation in a signature: `def f(…) -> Foo`, `f(…): Foo`, `(…): Foo =>`. */
function returnAnnotation(signature: string): string | null {
  const python = /\)\s*->\s*(.+?)\s*$/.exec(signature);
  if (python) return python[1]!;
  const script = /\)\s*:\s*([^()]+?)\s*(=>)?\s*$/.exec(signature);
  return script ? script[1]! : null;
}

/**
 * A type annotation reduced to the one class it names: quotes, `Optional[…]`, `X | None`,
 * `Promise<…>` and type arguments removed. Null when it names none or several.
 */
export function typeName(text: string): string | null {
  let type = text.trim();
  for (let step = 0; step < 6; step++) {
    const before = type;
    type = type.replace(/^(['"`])(.*)\1$/, '$2').trim();
    const parts = splitTopLevel(type, '|').filter(
      (part) => !['None', 'null', 'undefined', 'void'].includes(part),
    );
    if (parts.length !== 1) return null;
    type = parts[0]!;
    const wrapped = /^([\w$.]+)\s*[[<](.*)[\]>]$/.exec(type);
    if (wrapped) {
      const outer = wrapped[1]!.slice(wrapped[1]!.lastIndexOf('.') + 1);
      if (outer === 'Union') {
        type = splitTopLevel(wrapped[2]!, ',').join('|');
        continue;
      }
      type = TRANSPARENT_WRAPPERS.has(outer) ? splitTopLevel(wrapped[2]!, ',')[0]! : wrapped[1]!;
    }
    if (type === before) break;
  }
  return /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(type) ? type : null;
}

function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if ('[<({'.includes(char)) depth++;
    else if (']>)}'.includes(char)) depth--;
    else if (char === separator && depth === 0) {
      parts.push(text.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(text.slice(start).trim());
  return parts.filter(Boolean);
}

/** Resolution of the calls of one definition, with its file, scope chain and class in view. */
class CallContext {
  private readonly spec: LanguageSpec;
  private readonly scopeChain: CodeFact[];
  private readonly classContext: string | null;

  constructor(
    private readonly graph: CodeGraph,
    private readonly caller: CodeFact,
  ) {
    this.spec = languageById(caller.language);
    this.scopeChain = this.ancestors();
    this.classContext =
      caller.kind === 'class'
        ? caller.qualifiedName
        : ([caller, ...this.scopeChain].find((fact) => fact.className)?.className ?? null);
  }

  resolve(site: CallSite): { fact: CodeFact; how: Resolution } | undefined {
    if (site.receiver === null) return this.resolveBare(site.name, site.line);
    if (this.isSelf(site)) return this.resolveSelf(site);
    return this.resolveQualified(site);
  }

  /** `self.m()`, `super().m()`, or a call through a local holding the current object (`var self = this`). */
  private isSelf(site: CallSite): boolean {
    const receiver = site.receiver!;
    return (
      this.spec.selfNames.includes(receiver) ||
      SUPER_RECEIVERS.has(receiver) ||
      (!!site.receiverType && this.spec.selfNames.includes(site.receiverType))
    );
  }

  private resolveBare(name: string, line: number): { fact: CodeFact; how: Resolution } | undefined {
    // Functions nested in the caller or its enclosing functions.
    for (const scope of [this.caller, ...this.scopeChain]) {
      if (scope.kind === 'class') continue;
      const nested = this.graph.nestedIn(this.caller.path, scope.qualifiedName, name);
      if (nested) return { fact: nested, how: 'scope' };
    }
    const local = this.fileLevel(name, line);
    if (local) return { fact: local, how: 'file' };
    const imported = this.fromImports(name);
    if (imported) return { fact: imported, how: 'import' };
    const samePackage = this.fromPackage(name);
    if (samePackage) return { fact: samePackage, how: 'package' };
    if (this.importsName(name)) return undefined; // imported from outside the workspace
    const unique = this.graph.uniqueDefinition(
      name,
      (fact) => fact.parent === null && fact.className === null && fact.kind !== 'module',
    );
    return unique ? { fact: unique, how: 'unique' } : undefined;
  }

  /**
   * A file-level definition of `name`. In Python a later definition replaces an earlier one; in
   * JavaScript and TypeScript two parent-less functions of one name live in different anonymous
   * callbacks (a module cannot declare both), so a call sees the one declared nearest before it.
   */
  private fileLevel(name: string, line: number): CodeFact | undefined {
    const scoped =
      this.spec.moduleSystem === 'ecmascript'
        ? this.graph.sameNamedAt(this.caller.path, name, line)
        : undefined;
    return scoped ?? this.graph.topLevel(this.caller.path, name);
  }

  private resolveSelf(site: CallSite): { fact: CodeFact; how: Resolution } | undefined {
    if (this.classContext) {
      const startAtBases = SUPER_RECEIVERS.has(site.receiver!);
      const found = this.methodInHierarchy(
        this.caller.path,
        this.classContext,
        site.name,
        startAtBases,
        0,
      );
      if (found) return { fact: found, how: 'class' };
    }
    // `super().m()` names a base's method: when the bases are not the workspace's, it is theirs.
    return SUPER_RECEIVERS.has(site.receiver!) ? undefined : this.uniqueMethod(site.name);
  }

  private resolveQualified(site: CallSite): { fact: CodeFact; how: Resolution } | undefined {
    const receiver = site.receiver!;
    // An imported module or class is what it is, whatever it was assigned from (`require(…)`).
    if (site.receiverType && !this.binding(receiver)) {
      const type = this.resolveType(site.receiverType, 0);
      if (type === 'external') return undefined;
      if (type) {
        const method = this.methodInHierarchy(type.path, type.qualifiedName, site.name, false, 0);
        return method ? { fact: method, how: 'type' } : undefined;
      }
      // The file states a type the index cannot reduce to one class (a union, a protocol, a
      // call it cannot follow): the workspace's only method of that name is no safe guess.
      return undefined;
    }
    if (receiver === '<expr>') return this.uniqueMethod(site.name);
    // `sys.stdout.flush()`: an attribute of a library module is the library's.
    if (receiver.includes('.') && this.isExternalName(receiver)) return undefined;
    const binding = this.binding(receiver);
    if (
      BUILTIN_RECEIVERS.has(receiver) &&
      !binding &&
      !this.graph.topLevel(this.caller.path, receiver)
    )
      return undefined;
    if (binding) {
      // A module outside the workspace: nothing of ours is called through it.
      if (!this.graph.resolveModule(this.caller.path, this.spec, binding.module).length)
        return undefined;
      const target = this.graph.resolveImported(this.caller.path, binding);
      if (target === 'module') {
        const specifier =
          binding.imported && binding.kind === 'named'
            ? submodule(binding.module, binding.imported)
            : binding.module;
        const files = this.graph.resolveModule(this.caller.path, this.spec, specifier);
        if (this.spec.moduleSystem === 'go') {
          const found = files[0]
            ? this.graph.topLevelInFolder(folderOf(files[0]), site.name)
            : undefined;
          return found ? { fact: found, how: 'module' } : undefined;
        }
        for (const file of files) {
          const found = this.graph.exported(file, site.name);
          if (found) return { fact: found, how: 'module' };
          // Java's `import a.b.C` names a class file: `C.m()` calls a member of its class C.
          const importedClass = this.graph.topLevel(file, binding.local);
          const method =
            importedClass &&
            this.methodInHierarchy(file, importedClass.qualifiedName, site.name, false, 0);
          if (method) return { fact: method, how: 'class' };
        }
        return undefined;
      }
      if (target && target.kind === 'class') {
        const method = this.methodInHierarchy(
          target.path,
          target.qualifiedName,
          site.name,
          false,
          0,
        );
        if (method) return { fact: method, how: 'class' };
      }
    }
    const localClass = this.graph.topLevel(this.caller.path, receiver);
    if (localClass) {
      const method = this.graph.member(localClass.path, localClass.qualifiedName, site.name);
      if (method) return { fact: method, how: 'class' };
    }
    const ownerMethod = this.graph.member(this.caller.path, receiver, site.name);
    if (ownerMethod) return { fact: ownerMethod, how: 'class' };
    return this.uniqueMethod(site.name);
  }

  /** What a type expression or a call's result (`Foo()`, `self.make()`) is, one call deep. */
  private resolveType(expression: string, depth: number): TypeTarget {
    if (expression.endsWith('()')) {
      const callee = expression.slice(0, -2);
      const dot = callee.lastIndexOf('.');
      const site: CallSite = {
        name: callee.slice(dot + 1),
        receiver: dot < 0 ? null : callee.slice(0, dot),
        line: 0,
      };
      // Python's `cls.__new__(cls)` makes an instance of the class without running `__init__`.
      if (site.name === '__new__' && site.receiver && this.spec.moduleSystem === 'python')
        return this.spec.selfNames.includes(site.receiver)
          ? this.ownClass()
          : this.classNamed(this.caller.path, site.receiver);
      const resolved = this.resolve(site);
      if (!resolved)
        return this.isExternalName(site.receiver ?? site.name) ? 'external' : undefined;
      if (TYPE_KINDS.has(resolved.fact.kind)) return resolved.fact;
      const returned = depth === 0 ? returnAnnotation(resolved.fact.signature) : null;
      return returned ? this.typeFrom(resolved.fact, returned) : undefined;
    }
    const name = typeName(expression);
    if (!name || UNINFORMATIVE_TYPES.has(name)) {
      return /^(Self|this)$/.test(name ?? '') ? this.ownClass() : undefined;
    }
    return this.classNamed(this.caller.path, name);
  }

  /** A return annotation read where its function is defined (its names are that file's). */
  private typeFrom(fact: CodeFact, annotation: string): TypeTarget {
    const name = typeName(annotation);
    if (!name) return undefined;
    if (/^(Self|this)$/.test(name) && fact.className)
      return this.graph.factByQualifiedName(fact.path, fact.className);
    if (UNINFORMATIVE_TYPES.has(name)) return undefined;
    return this.classNamed(fact.path, name);
  }

  private classNamed(fromPath: string, name: string): TypeTarget {
    const simple = name.slice(name.lastIndexOf('.') + 1);
    const found =
      (fromPath === this.caller.path ? this.fromImports(simple) : undefined) ??
      this.resolveClassName(fromPath, name);
    // JavaScript's constructor functions carry their prototype's methods as a class does.
    const constructs = found?.kind === 'function' && this.spec.moduleSystem === 'ecmascript';
    if (found && (TYPE_KINDS.has(found.kind) || constructs)) return found;
    if (found) return undefined;
    const head = name.split('.')[0]!;
    return BUILTIN_TYPES.has(name) || this.isExternalName(head) ? 'external' : undefined;
  }

  private ownClass(): TypeTarget {
    return this.classContext
      ? this.graph.factByQualifiedName(this.caller.path, this.classContext)
      : undefined;
  }

  /** Imported from a module outside the workspace. */
  private isExternalName(name: string): boolean {
    const binding = this.binding(name.split('.')[0]!);
    return (
      !!binding && !this.graph.resolveModule(this.caller.path, this.spec, binding.module).length
    );
  }

  /**
   * Why `site`, which resolved to nothing, may still call `target`; null when it cannot (a bare
   * call cannot reach a method, a library's or a built-in type's method is not ours).
   */
  unresolvedReason(site: CallSite, target: CodeFact): string | null {
    const isMethod = target.className !== null;
    if (site.receiver === null) {
      if (isMethod) return null;
      if (this.importsName(site.name)) {
        return this.isExternalName(site.name)
          ? null
          : `\`${site.name}\` is imported from a module the index could not follow`;
      }
      const count = this.graph.countNamed(site.name);
      return count > 1
        ? `\`${site.name}\` is defined ${count} times in the workspace`
        : `\`${site.name}\` is not defined where this file can see it`;
    }
    if (!isMethod) return null;
    const receiver = site.receiver;
    const builtin = this.graph.isBuiltinMethod(site.name)
      ? `; \`${site.name}\` is also a built-in method name`
      : '';
    if (site.receiverType && !this.isSelf(site) && !this.binding(receiver)) {
      const type = this.resolveType(site.receiverType, 0);
      if (type === 'external') return null;
      if (type)
        return `\`${receiver}\` is a \`${type.name}\`, which defines no \`${site.name}\` the index can see`;
    }
    if (this.isSelf(site)) {
      return this.classContext
        ? `\`${this.classContext}\` defines no \`${site.name}\`; a subclass or mixin may`
        : `\`${receiver}\` outside a class${builtin}`;
    }
    if (BUILTIN_RECEIVERS.has(receiver) && !this.binding(receiver)) return null;
    if (receiver.includes('.') && this.isExternalName(receiver)) return null;
    const binding = this.binding(receiver);
    if (binding) {
      if (this.isExternalName(receiver)) return null;
      return `\`${receiver}\` is a module the index could not follow`;
    }
    if (receiver === '<expr>') return `the receiver is an expression of unknown type${builtin}`;
    const count = this.graph.countNamed(site.name);
    return `the type of \`${receiver}\` is not known${count > 1 ? ` and \`${site.name}\` is defined ${count} times` : ''}${builtin}`;
  }

  private uniqueMethod(name: string): { fact: CodeFact; how: Resolution } | undefined {
    if (this.graph.isBuiltinMethod(name)) return undefined;
    const unique = this.graph.uniqueDefinition(name, (fact) => fact.kind === 'method');
    if (!unique || this.extendsLibraryClass(unique)) return undefined;
    return { fact: unique, how: 'unique' };
  }

  /**
   * Whether a method's class derives from a class outside the workspace: its methods then share
   * their names with the library's (a jinja loader's `list_templates`), so a call on a receiver of
   * unknown type is as likely the library's own.
   */
  private extendsLibraryClass(method: CodeFact): boolean {
    const owner = method.className
      ? this.graph.factByQualifiedName(method.path, method.className)
      : undefined;
    return (owner?.bases ?? []).some((base) => {
      const name = base.replace(/[[<(][\s\S]*$/, '').trim();
      return (
        !NEUTRAL_BASES.has(name.slice(name.lastIndexOf('.') + 1)) &&
        !this.resolveClassName(method.path, base)
      );
    });
  }

  private methodInHierarchy(
    path: string,
    className: string,
    name: string,
    skipOwn: boolean,
    depth: number,
  ): CodeFact | undefined {
    if (depth > MAX_BASE_DEPTH) return undefined;
    if (!skipOwn) {
      const own = this.graph.member(path, className, name);
      if (own) return own;
    }
    const classFact = this.graph.factByQualifiedName(path, className);
    for (const base of classFact?.bases ?? []) {
      const baseClass = this.resolveClassName(path, base);
      if (!baseClass) continue;
      const found = this.methodInHierarchy(
        baseClass.path,
        baseClass.qualifiedName,
        name,
        false,
        depth + 1,
      );
      if (found) return found;
    }
    return undefined;
  }

  /** A base-class expression (`Scaffold`, `t.Generic[T]`, `Subject<T>`) as a class definition. */
  private resolveClassName(fromPath: string, expression: string): CodeFact | undefined {
    const name = expression.replace(/[[<(][\s\S]*$/, '').trim();
    const simple = name.slice(name.lastIndexOf('.') + 1);
    const local = this.graph.topLevel(fromPath, simple);
    if (local) return local;
    const module = this.graph.moduleFact(fromPath);
    for (const binding of module?.imports ?? []) {
      if (binding.local !== simple) continue;
      const found = this.graph.resolveImported(fromPath, binding);
      if (found && found !== 'module') return found;
    }
    return this.graph.uniqueDefinition(
      simple,
      (fact) => fact.kind === 'class' && fact.parent === null,
    );
  }

  private fromImports(name: string): CodeFact | undefined {
    const binding = this.binding(name);
    if (!binding) return undefined;
    if (binding.imported === null) {
      // `const Router = require('./router')`, Java's `new C()` after `import a.b.C`: the module's
      // definition of that name is what is called.
      const [file] = this.graph.resolveModule(this.caller.path, this.spec, binding.module);
      return file ? this.graph.topLevel(file, name) : undefined;
    }
    const found = this.graph.resolveImported(this.caller.path, binding);
    return found && found !== 'module' ? found : undefined;
  }

  /** Go and Java see the other files of their package without importing them. */
  private fromPackage(name: string): CodeFact | undefined {
    if (this.spec.moduleSystem !== 'go' && this.spec.moduleSystem !== 'java') return undefined;
    return this.graph.topLevelInFolder(folderOf(this.caller.path), name);
  }

  /** The import binding for `local` visible from the caller: its own scopes first, then the module. */
  private binding(local: string): ImportBinding | undefined {
    for (const scope of [this.caller, ...this.scopeChain]) {
      const found = scope.imports.find((binding) => binding.local === local);
      if (found) return found;
    }
    return this.graph
      .moduleFact(this.caller.path)
      ?.imports.find((binding) => binding.local === local);
  }

  private importsName(name: string): boolean {
    return this.binding(name) !== undefined;
  }

  private ancestors(): CodeFact[] {
    const chain: CodeFact[] = [];
    let parent = this.caller.parent;
    while (parent) {
      const fact = this.graph.factByQualifiedName(this.caller.path, parent);
      if (!fact) break;
      chain.push(fact);
      parent = fact.parent;
    }
    return chain;
  }
}

/**
 * Which definitions' callers really changed in an update. Only calls of re-resolved callers can
 * change, so comparing what they took away from each target with what they put back suffices.
 * An update takes every call away before it puts any back, so a target nothing was taken from
 * has changed as soon as a call is put back: that needs no bookkeeping per call (opening a store
 * puts back every call of the workspace).
 */
class IncomingTracker {
  private readonly balance = new Map<string, Map<string, number>>();
  private readonly gained = new Set<string>();

  removed(callerId: string, targetId: string, line: number): void {
    this.count(callerId, targetId, line, -1);
  }

  added(callerId: string, targetId: string, line: number): void {
    if (this.balance.has(targetId)) this.count(callerId, targetId, line, 1);
    else this.gained.add(targetId);
  }

  changed(): Set<string> {
    const out = new Set<string>();
    for (const [targetId, entries] of this.balance) {
      for (const delta of entries.values()) {
        if (delta !== 0) {
          out.add(targetId);
          break;
        }
      }
    }
    for (const targetId of this.gained) out.add(targetId);
    return out;
  }

  private count(callerId: string, targetId: string, line: number, delta: number): void {
    let entries = this.balance.get(targetId);
    if (!entries) this.balance.set(targetId, (entries = new Map()));
    const key = `${callerId}@${line}`;
    entries.set(key, (entries.get(key) ?? 0) + delta);
  }
}

/** A definition's call sites as written, without the functions it only names as values. */
export function callSites(fact: CodeFact): readonly CallSite[] {
  return fact.calls.filter((site) => site.kind !== 'reference');
}

/** Same definition as far as resolving other files' calls is concerned. */
function sameShape(a: CodeFact, b: CodeFact): boolean {
  return (
    a.kind === b.kind &&
    a.name === b.name &&
    a.className === b.className &&
    a.parent === b.parent &&
    a.bases.join('\0') === b.bases.join('\0')
  );
}

/** Local and imported names of import bindings that differ between two versions of a module. */
function changedImportNames(
  before: readonly ImportBinding[],
  after: readonly ImportBinding[],
): string[] {
  const key = (binding: ImportBinding) =>
    `${binding.local}\0${binding.module}\0${binding.imported}\0${binding.kind}`;
  const beforeKeys = new Set(before.map(key));
  const afterKeys = new Set(after.map(key));
  const names = new Set<string>();
  for (const binding of [...before, ...after]) {
    if (beforeKeys.has(key(binding)) && afterKeys.has(key(binding))) continue;
    names.add(binding.local);
    if (binding.imported) names.add(binding.imported);
  }
  return [...names];
}

function folderOf(path: string): string {
  const slash = path.lastIndexOf('/');
  return slash < 0 ? '' : path.slice(0, slash);
}

/** `from pkg import sub` names the module `pkg.sub`; `from . import sub` names `.sub`. */
function submodule(module: string, name: string): string {
  return module.endsWith('.') ? `${module}${name}` : `${module}.${name}`;
}

/**
 * The slot each saved fact number takes in an empty graph opened on `facts` (fact `at` in slot
 * `at`), or null when the saved calls do not fit these facts.
 */
function slotsOfSaved(facts: readonly CodeFact[], saved: SavedCalls): Int32Array | null {
  if (saved.hashes.length !== facts.length) return null;
  const slotOfHash = new Map<number, number>();
  for (let at = 0; at < facts.length; at++) {
    const hash = factHash(facts[at]!.id);
    if (slotOfHash.has(hash)) return null;
    slotOfHash.set(hash, at);
  }
  const slots = new Int32Array(facts.length);
  for (let number = 0; number < facts.length; number++) {
    const slot = slotOfHash.get(saved.hashes[number]!);
    if (slot === undefined) return null;
    slots[number] = slot;
  }
  const inRange = (lists: Int32Array) => {
    for (let at = 0; at < lists.length; at += 2)
      if (lists[at]! < 0 || lists[at]! >= facts.length) return false;
    return true;
  };
  const paired = (sizes: Int32Array, lists: Int32Array) =>
    sizes.every((size) => size >= 0 && size % 2 === 0) &&
    sizes.reduce((total, size) => total + size, 0) === lists.length;
  const fits =
    paired(saved.outgoingSizes, saved.outgoing) &&
    paired(saved.incomingSizes, saved.incoming) &&
    inRange(saved.outgoing) &&
    inRange(saved.incoming);
  return fits ? slots : null;
}

/** Sets each saved fact's list (pairs of a fact's number and a stored call) in its slot. */
function adoptLists(
  lists: IntLists,
  slots: Int32Array,
  sizes: Int32Array,
  saved: Int32Array,
): void {
  lists.reserve(saved.length, 1);
  let from = 0;
  for (let number = 0; number < sizes.length; number++) {
    const size = sizes[number]!;
    lists.write(slots[number]!, size, (arena, at) => {
      for (let offset = 0; offset < size; offset += 2) {
        arena[at + offset] = slots[saved[from + offset]!]!;
        arena[at + offset + 1] = saved[from + offset + 1]!;
      }
    });
    from += size;
  }
}

/** The lists of `slots` (pairs of a slot and a stored call) with slots given by their numbers. */
function numberedLists(
  lists: IntLists,
  slots: readonly number[],
  numberOf: Int32Array,
): [Int32Array, Int32Array] {
  const sizes = Int32Array.from(slots, (slot) => lists.sizeOf(slot));
  const out = new Int32Array(sizes.reduce((total, size) => total + size, 0));
  let at = 0;
  for (const slot of slots) {
    const list = lists.get(slot);
    for (let offset = 0; offset < list.length; offset += 2) {
      const number = numberOf[list[offset]!]!;
      if (number < 0) throw new Error(`a resolved call of slot ${slot} names a slot not held`);
      out[at++] = number;
      out[at++] = list[offset + 1]!;
    }
  }
  return [sizes, out];
}

/**
 * A 32-bit FNV-1a hash of a string's UTF-16 units. Qualified names are looked up by it (with the
 * names compared) rather than numbered in the name table: most are unique, and numbering them
 * would add an entry for every definition.
 */
export function stringHash(text: string): number {
  return fnv1a(text);
}
