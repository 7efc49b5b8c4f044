import type { CodeGraph } from '../graph/code-graph';
import { languageById } from '../lang/registry';
import { ancestors, baseName, parentDir } from '../util/paths';
import { chunkId } from './chunks';
import { MAX_DIRECTORY_FILES, MIN_DIRECTORY_FILES, type Chunk, type LanguageId } from '../model';

/**
 * Directory chunks: synthetic summaries of folders, built from the facts of their files. A folder
 * whose whole subtree holds 3–20 files gets one chunk covering all of them; a larger folder is
 * split by subfolder (each visited the same way) and its own direct files form a unit when there
 * are 3–20 of them. Smaller groups are not summarised.
 */
export interface DirectoryUnit {
  readonly directory: string;
  readonly files: readonly string[];
}

export function planDirectoryUnits(files: Iterable<string>): DirectoryUnit[] {
  return new DirectoryPlan(files).units();
}

/** A unit as planned: a folder's whole subtree, or the own files of a folder split by subfolder. */
interface PlannedUnit extends DirectoryUnit {
  readonly whole: boolean;
}

/** One folder of the indexed files' tree. */
interface Folder {
  readonly files: Set<string>;
  readonly children: Set<string>;
  /** Files in the folder's whole subtree. */
  size: number;
}

/** What a change to the set of files did to the units. */
export interface PlanChange {
  /** Units that appeared, or whose files changed (in their new form). */
  readonly added: readonly DirectoryUnit[];
  /** Units that disappeared, or whose files changed (in their old form). */
  readonly removed: readonly DirectoryUnit[];
  /** Units left as they were whose nearest enclosing unit changed. */
  readonly reparented: readonly DirectoryUnit[];
}

/**
 * The directory units of a set of files, kept up to date as files come and go: a change costs
 * what it touches (the folders above the files, and the subtrees whose units appear or vanish
 * with them), not a new plan of every file. Which units a folder's subtree holds depends on that
 * subtree alone, once the folder is reached; so the folders above changed files are visited
 * again, and a folder off their path is visited whole only when it starts or stops being reached.
 */
export class DirectoryPlan {
  private readonly folders = new Map<string, Folder>();
  private readonly planned = new Map<string, PlannedUnit>();

  constructor(files: Iterable<string>) {
    this.folder('.');
    for (const file of files) this.addFile(file);
    const units: PlannedUnit[] = [];
    this.visit('.', null, units, []);
    for (const unit of units) this.planned.set(unit.directory, unit);
  }

  /** The units, in the order planDirectoryUnits lists them (folders before their subfolders). */
  units(): DirectoryUnit[] {
    return [...this.planned.values()].sort(byVisitOrder);
  }

  /** The unit at `directory`, if there is one. */
  unit(directory: string): DirectoryUnit | undefined {
    return this.planned.get(directory);
  }

  has(file: string): boolean {
    return this.folders.get(parentDir(file))?.files.has(file) ?? false;
  }

  /** The directory of the unit covering `file`, or null. */
  unitOf(file: string): string | null {
    if (!this.has(file)) return null;
    const own = parentDir(file);
    for (let folder = own; ; folder = parentDir(folder)) {
      const unit = this.planned.get(folder);
      if (unit && (unit.whole || folder === own)) return folder;
      if (folder === '.') return null;
    }
  }

  /** The nearest unit above `directory` (not itself), or null. */
  enclosingUnit(directory: string): string | null {
    if (directory === '.') return null;
    for (let folder = parentDir(directory); ; folder = parentDir(folder)) {
      if (this.planned.has(folder)) return folder;
      if (folder === '.') return null;
    }
  }

  /** Takes `added` files in and `removed` ones out, and says which units changed. */
  update(added: readonly string[], removed: readonly string[]): PlanChange {
    const dirty = new Set<string>();
    for (const file of [...added, ...removed])
      for (const folder of ancestors(file)) dirty.add(folder);
    const clean = (folder: string) => !dirty.has(folder);
    const before: PlannedUnit[] = [];
    const reachedBefore: string[] = [];
    this.visit('.', clean, before, reachedBefore);
    for (const file of removed) this.removeFile(file);
    for (const file of added) this.addFile(file);
    const after: PlannedUnit[] = [];
    const reachedAfter: string[] = [];
    this.visit('.', clean, after, reachedAfter);
    // a folder off the changed paths holds the same units as before, if it is still reached
    const stillReached = new Set(reachedAfter);
    const wasReached = new Set(reachedBefore);
    for (const folder of reachedBefore)
      if (!stillReached.has(folder)) this.visit(folder, null, before, []);
    for (const folder of reachedAfter)
      if (!wasReached.has(folder)) this.visit(folder, null, after, []);

    const beforeAt = new Map(before.map((unit) => [unit.directory, unit]));
    const afterAt = new Map(after.map((unit) => [unit.directory, unit]));
    const gone = before.filter((unit) => !sameUnit(unit, afterAt.get(unit.directory)));
    const came = after.filter((unit) => !sameUnit(unit, beforeAt.get(unit.directory)));
    for (const unit of gone) this.planned.delete(unit.directory);
    for (const unit of came) this.planned.set(unit.directory, unit);
    const appeared = new Set(came.map((unit) => unit.directory));
    const reparented = new Map<string, DirectoryUnit>();
    for (const directory of new Set([...gone, ...came].map((unit) => unit.directory))) {
      // a unit that only changed its files encloses the same units as before
      if (beforeAt.has(directory) && afterAt.has(directory)) continue;
      for (const unit of this.nearestUnitsBelow(directory))
        if (!appeared.has(unit.directory)) reparented.set(unit.directory, unit);
    }
    return { added: came, removed: gone, reparented: [...reparented.values()] };
  }

  /** Units below `directory` with no unit between them and it. */
  private nearestUnitsBelow(directory: string): DirectoryUnit[] {
    const out: DirectoryUnit[] = [];
    const pending = [...(this.folders.get(directory)?.children ?? [])];
    for (let folder = pending.pop(); folder !== undefined; folder = pending.pop()) {
      const unit = this.planned.get(folder);
      if (unit) out.push(unit);
      const entry = this.folders.get(folder)!;
      // a subtree too small for a unit holds none
      if (!unit?.whole && entry.size >= MIN_DIRECTORY_FILES) pending.push(...entry.children);
    }
    return out;
  }

  /**
   * The units of the subtree of `start` as planDirectoryUnits finds them. A folder `skip` says
   * yes to is not entered but listed in `reached`: its units are those of visiting it alone.
   */
  private visit(
    start: string,
    skip: ((folder: string) => boolean) | null,
    units: PlannedUnit[],
    reached: string[],
  ): void {
    // A folder with no files of its own and one subfolder covers exactly what that subfolder does.
    let directory = start;
    for (
      let entry = this.folders.get(directory)!;
      !entry.files.size && entry.children.size === 1;
      entry = this.folders.get(directory)!
    ) {
      directory = entry.children.values().next().value!;
      if (skip?.(directory)) {
        reached.push(directory);
        return;
      }
    }
    const folder = this.folders.get(directory)!;
    if (folder.size < MIN_DIRECTORY_FILES) return;
    if (folder.size <= MAX_DIRECTORY_FILES) {
      units.push({ directory, files: this.subtreeFiles(directory).sort(), whole: true });
      return;
    }
    const direct = folder.files.size;
    if (direct >= MIN_DIRECTORY_FILES && direct <= MAX_DIRECTORY_FILES)
      units.push({ directory, files: [...folder.files].sort(), whole: false });
    for (const child of [...folder.children].sort()) {
      if (skip?.(child)) reached.push(child);
      else this.visit(child, skip, units, reached);
    }
  }

  private subtreeFiles(directory: string): string[] {
    const folder = this.folders.get(directory)!;
    return [...folder.files, ...[...folder.children].flatMap((child) => this.subtreeFiles(child))];
  }

  private folder(directory: string): Folder {
    let entry = this.folders.get(directory);
    if (!entry) {
      this.folders.set(directory, (entry = { files: new Set(), children: new Set(), size: 0 }));
      if (directory !== '.') this.folder(parentDir(directory)).children.add(directory);
    }
    return entry;
  }

  private addFile(file: string): void {
    const own = this.folder(parentDir(file));
    if (own.files.has(file)) return;
    own.files.add(file);
    for (const folder of ancestors(file)) this.folders.get(folder)!.size++;
  }

  private removeFile(file: string): void {
    const own = this.folders.get(parentDir(file));
    if (!own?.files.delete(file)) return;
    for (const folder of ancestors(file)) {
      const entry = this.folders.get(folder)!;
      // a folder left with no file below it goes, as it never was
      if (--entry.size === 0 && folder !== '.') {
        this.folders.delete(folder);
        this.folders.get(parentDir(folder))!.children.delete(folder);
      }
    }
  }
}

function sameUnit(a: PlannedUnit, b: PlannedUnit | undefined): boolean {
  return (
    !!b &&
    a.whole === b.whole &&
    a.files.length === b.files.length &&
    a.files.every((file, i) => file === b.files[i])
  );
}

/** Folders before their subfolders, sibling folders by name: the order a plan visits them in. */
export function byVisitOrder(a: DirectoryUnit, b: DirectoryUnit): number {
  if (a.directory === b.directory) return 0;
  if (a.directory === '.') return -1;
  if (b.directory === '.') return 1;
  const left = a.directory.split('/');
  const right = b.directory.split('/');
  for (let i = 0; i < Math.min(left.length, right.length); i++)
    if (left[i] !== right[i]) return left[i]! < right[i]! ? -1 : 1;
  return left.length - right.length;
}

export function directoryChunkId(directory: string): string {
  return chunkId(directory, null, null, 'directory');
}

const MAX_DEFINED_NAMES = 10;
const MAX_IMPORTED_MODULES = 8;
const MAX_EXPORTED = 12;
const SUMMARY_SENTENCE = 140;

/** The chunk for one unit: its files with one-line summaries, its internal imports, its exports. */
export function buildDirectoryChunk(
  unit: DirectoryUnit,
  graph: CodeGraph,
  parentDirectoryId: string | null,
): Chunk {
  const label = unit.directory === '.' ? './' : `${unit.directory}/`;
  const relative = (file: string) =>
    unit.directory === '.' ? file : file.slice(unit.directory.length + 1);
  const lines = [
    `Directory: ${label}`,
    `Files: [${unit.files.map(relative).join(', ')}]`,
    '',
    'File summaries:',
  ];
  for (const file of unit.files) lines.push(`  ${relative(file)}: ${fileSummary(file, graph)}`);

  const internal = internalImports(unit, graph);
  if (internal.length) {
    lines.push('', 'Internal import relationships:');
    for (const { from, to, names } of internal)
      lines.push(
        `  ${relative(from)} imports from ${relative(to)}${names.length ? ` (${names.join(', ')})` : ''}`,
      );
  }
  const exported = mostUsedDefinitions(unit, graph);
  if (exported.length) lines.push('', 'Most exported identifiers:', `  ${exported.join(', ')}`);

  return {
    id: directoryChunkId(unit.directory),
    level: 'directory',
    filePath: null,
    directoryPath: unit.directory,
    language: dominantLanguage(unit, graph),
    className: null,
    functionName: null,
    startLine: 0,
    endLine: 0,
    parentDirectoryId,
    parentFileId: null,
    parentClassId: null,
    content: lines.join('\n'),
    fullContent: null,
    isSummarized: false,
    originalLineCount: null,
    segments: null,
  };
}

/** One line about a file: its documentation's first sentence, what it imports, what it defines. */
export function fileSummary(file: string, graph: CodeGraph): string {
  const module = graph.moduleFact(file);
  const parts: string[] = [];
  const doc = module?.docstring ? firstSentence(module.docstring) : null;
  if (doc) parts.push(doc);
  const imported = [
    ...new Set(
      (module?.imports ?? []).map((binding) => moduleLabel(binding.module)).filter(Boolean),
    ),
  ];
  if (imported.length)
    parts.push(
      `imports ${imported.slice(0, MAX_IMPORTED_MODULES).join(', ')}${imported.length > MAX_IMPORTED_MODULES ? ', …' : ''}`,
    );
  const defined = graph
    .factsInFile(file)
    .filter((fact) => fact.parent === null && fact.kind !== 'module')
    .map((fact) => fact.qualifiedName);
  const names = [...new Set(defined)];
  if (names.length)
    parts.push(
      `defines ${names.slice(0, MAX_DEFINED_NAMES).join(', ')}${names.length > MAX_DEFINED_NAMES ? ', …' : ''}`,
    );
  return parts.length ? `${parts.join('. ')}` : 'no definitions';
}

function internalImports(
  unit: DirectoryUnit,
  graph: CodeGraph,
): { from: string; to: string; names: string[] }[] {
  const inUnit = new Set(unit.files);
  const out: { from: string; to: string; names: string[] }[] = [];
  for (const file of unit.files) {
    const module = graph.moduleFact(file);
    if (!module) continue;
    const spec = languageById(module.language);
    const byTarget = new Map<string, Set<string>>();
    for (const binding of module.imports) {
      for (const target of graph.resolveModule(file, spec, binding.module)) {
        if (target === file || !inUnit.has(target)) continue;
        let names = byTarget.get(target);
        if (!names) byTarget.set(target, (names = new Set()));
        if (binding.imported && binding.imported !== '*' && binding.imported !== 'default')
          names.add(binding.imported);
      }
    }
    for (const [target, names] of byTarget) out.push({ from: file, to: target, names: [...names] });
  }
  return out;
}

/** Public top-level definitions of the unit, ranked by how often other files call them. */
function mostUsedDefinitions(unit: DirectoryUnit, graph: CodeGraph): string[] {
  const ranked: { name: string; uses: number }[] = [];
  for (const file of unit.files) {
    for (const fact of graph.factsInFile(file)) {
      if (fact.parent !== null || fact.kind === 'module' || fact.name.startsWith('_')) continue;
      ranked.push({ name: fact.qualifiedName, uses: graph.callersOutside(fact, file) });
    }
  }
  return ranked
    .sort((a, b) => b.uses - a.uses || a.name.localeCompare(b.name))
    .slice(0, MAX_EXPORTED)
    .map((entry) => entry.name);
}

function dominantLanguage(unit: DirectoryUnit, graph: CodeGraph): LanguageId | null {
  const counts = new Map<LanguageId, number>();
  for (const file of unit.files) {
    const language = graph.moduleFact(file)?.language;
    if (language) counts.set(language, (counts.get(language) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
}

function moduleLabel(specifier: string): string {
  const cleaned = specifier.replace(/^[./]+/, '');
  return cleaned.split(/[/.]/)[0] || baseName(specifier);
}

function firstSentence(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const end = flat.search(/[.!?](\s|$)/);
  const sentence = end >= 0 ? flat.slice(0, end + 1) : flat;
  return sentence.length > SUMMARY_SENTENCE
    ? `${sentence.slice(0, SUMMARY_SENTENCE)}…`
    : sentence.replace(/\.$/, '');
}
