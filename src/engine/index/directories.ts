import type { CodeGraph } from '../graph/code-graph';
import { languageById } from '../lang/registry';
import { baseName, parentDir } from '../util/paths';
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
  const tree = new Map<string, { files: string[]; children: Set<string> }>();
  const node = (directory: string) => {
    let entry = tree.get(directory);
    if (!entry) {
      tree.set(directory, (entry = { files: [], children: new Set() }));
      if (directory !== '.') node(parentDir(directory)).children.add(directory);
    }
    return entry;
  };
  for (const file of files) node(parentDir(file)).files.push(file);
  node('.');

  const subtreeSize = new Map<string, number>();
  const sizeOf = (directory: string): number => {
    let size = subtreeSize.get(directory);
    if (size === undefined) {
      const entry = tree.get(directory)!;
      size =
        entry.files.length + [...entry.children].reduce((sum, child) => sum + sizeOf(child), 0);
      subtreeSize.set(directory, size);
    }
    return size;
  };
  const subtreeFiles = (directory: string): string[] => {
    const entry = tree.get(directory)!;
    return [...entry.files, ...[...entry.children].flatMap(subtreeFiles)];
  };

  const units: DirectoryUnit[] = [];
  const visit = (start: string) => {
    // A folder with no files of its own and one subfolder covers exactly what that subfolder does.
    let directory = start;
    for (
      let entry = tree.get(directory)!;
      !entry.files.length && entry.children.size === 1;
      entry = tree.get(directory)!
    ) {
      directory = [...entry.children][0]!;
    }
    const size = sizeOf(directory);
    if (size < MIN_DIRECTORY_FILES) return;
    if (size <= MAX_DIRECTORY_FILES) {
      units.push({ directory, files: subtreeFiles(directory).sort() });
      return;
    }
    const direct = tree.get(directory)!.files;
    if (direct.length >= MIN_DIRECTORY_FILES && direct.length <= MAX_DIRECTORY_FILES)
      units.push({ directory, files: [...direct].sort() });
    for (const child of [...tree.get(directory)!.children].sort()) visit(child);
  };
  visit('.');
  return units;
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
      const uses = graph
        .callers(fact.id)
        .filter((call) => !call.callerId.startsWith(`${file}::`)).length;
      ranked.push({ name: fact.qualifiedName, uses });
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
