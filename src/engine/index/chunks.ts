import { parentDir } from '../util/paths';
import type { Definition, Extraction } from './extract';
import {
  MODULE_QUALIFIED_NAME,
  SUMMARIZE_MIN_LINES,
  type Chunk,
  type CodeFact,
  type LanguageId,
  type ParsedFile,
  type Segment,
  type SymbolFacts,
} from '../model';

/**
 * Builds the file, class and function chunks of one file from its extraction. Chunks follow
 * the language's own units, never token windows: a function chunk is the whole definition with
 * its decorators and documentation; class and file chunks hold signatures, not bodies.
 */
export interface FileChunks {
  readonly parsed: ParsedFile;
  readonly chunks: Chunk[];
  readonly facts: CodeFact[];
  /** Chunk ids of functions long enough to be summarised when a model is configured. */
  readonly flagged: { chunkId: string; functionName: string; lineCount: number }[];
}

/** Lines of module-level or class-body code copied into a file or class chunk's text. */
export const MAX_SEGMENT_LINES_IN_CONTENT = 200;
/**
 * A file chunk lists at most this many top-level signatures: it summarises the file, and a
 * generated file with hundreds of thousands of definitions would otherwise make one chunk of
 * megabytes (and overflow the stack when its lines were spread into one call).
 */
const MAX_SIGNATURES_IN_FILE_CHUNK = 400;
/** The line of a file chunk's text after which its module-level code follows. */
export const MODULE_CODE_MARKER = 'Module-level code:';
/** Blank lines that end one segment and start the next. */
const SEGMENT_GAP = 2;
const NONE = 'None';

export function chunkId(
  path: string,
  className: string | null,
  functionName: string | null,
  level: string,
): string {
  return `${path}::${className ?? NONE}::${functionName ?? NONE}::${level}`;
}

export function buildFileChunks(
  path: string,
  language: LanguageId,
  source: string,
  extraction: Extraction,
): FileChunks {
  const lines = source.split('\n');
  const fileId = chunkId(path, null, null, 'file');
  const chunks: Chunk[] = [];
  const flagged: FileChunks['flagged'] = [];
  const usedIds = new Set<string>([fileId]);
  const chunkOf: (string | null)[] = [];
  const { definitions } = extraction;
  // Go methods, Rust impls and C++ `Foo::bar` are defined outside their type: find it by name.
  const containerIndex = new Map<string, number>();
  definitions.forEach((definition, i) => {
    if (
      definition.isContainer &&
      !definition.insideFunction &&
      !containerIndex.has(definition.facts.qualifiedName)
    )
      containerIndex.set(definition.facts.qualifiedName, i);
  });

  for (let i = 0; i < definitions.length; i++) {
    const definition = definitions[i]!;
    if (definition.insideFunction) {
      chunkOf[i] = chunkOf[definition.parentIndex] ?? fileId;
      continue;
    }
    const facts = definition.facts;
    const parentClassId =
      definition.parentIndex >= 0 ? (chunkOf[definition.parentIndex] ?? null) : null;
    const ownerIndex = facts.className ? containerIndex.get(facts.className) : undefined;
    const ownerChunk =
      ownerIndex !== undefined && ownerIndex < i ? (chunkOf[ownerIndex] ?? null) : null;
    if (definition.isContainer) {
      const id = uniqueId(usedIds, (suffix) =>
        chunkId(path, facts.qualifiedName + suffix, null, 'class'),
      );
      chunkOf[i] = id;
      const members = definitions.filter((member) => member.parentIndex === i);
      const segments = uncoveredSegments(
        lines,
        definition.chunkStartLine,
        definition.chunkEndLine,
        members,
      );
      chunks.push(
        chunk(id, 'class', {
          className: facts.qualifiedName,
          functionName: null,
          startLine: definition.chunkStartLine,
          endLine: definition.chunkEndLine,
          parentClassId,
          content: classContent(
            definition,
            definitions,
            i,
            (member) =>
              member.facts.className === facts.qualifiedName &&
              !member.isContainer &&
              !member.insideFunction,
            segmentText(lines, segments),
          ),
          segments,
        }),
      );
      continue;
    }
    const id = uniqueId(usedIds, (suffix) =>
      chunkId(path, facts.className, facts.name + suffix, 'function'),
    );
    chunkOf[i] = id;
    const lineCount = definition.chunkEndLine - definition.chunkStartLine + 1;
    const flaggedForSummary = lineCount >= SUMMARIZE_MIN_LINES;
    if (flaggedForSummary)
      flagged.push({ chunkId: id, functionName: facts.qualifiedName, lineCount });
    chunks.push(
      chunk(id, 'function', {
        className: facts.className,
        functionName: facts.name,
        startLine: definition.chunkStartLine,
        endLine: definition.chunkEndLine,
        parentClassId:
          definition.parentIndex >= 0 && definitions[definition.parentIndex]!.isContainer
            ? parentClassId
            : ownerChunk,
        content: lines.slice(definition.chunkStartLine - 1, definition.chunkEndLine).join('\n'),
        originalLineCount: flaggedForSummary ? lineCount : null,
      }),
    );
  }

  const topLevel = definitions.filter((definition) => definition.parentIndex < 0);
  const fileSegments = uncoveredSegments(lines, 1, extraction.lineCount, topLevel);
  chunks.unshift(
    chunk(fileId, 'file', {
      className: null,
      functionName: null,
      startLine: 1,
      endLine: Math.max(1, extraction.lineCount),
      parentClassId: null,
      content: fileContent(path, language, extraction, segmentText(lines, fileSegments)),
      segments: fileSegments,
    }),
  );

  const symbols: SymbolFacts[] = definitions.map((definition, i) => ({
    ...definition.facts,
    chunkId: chunkOf[i] ?? fileId,
  }));
  const usedFactIds = new Set<string>();
  const facts: CodeFact[] = symbols.map((symbol) => ({
    ...symbol,
    id: uniqueId(usedFactIds, (suffix) => `${path}::${symbol.qualifiedName}${suffix}`),
    path,
    language,
  }));
  facts.push(moduleFact(path, language, extraction, fileId, usedFactIds));

  const parsed: ParsedFile = {
    path,
    language,
    lineCount: extraction.lineCount,
    symbols,
    module: {
      calls: extraction.moduleScope.calls,
      imports: extraction.moduleScope.imports,
      names: [...extraction.moduleScope.declared],
    },
    anomalies: extraction.anomalies,
  };
  return { parsed, chunks, facts, flagged };

  function chunk(
    id: string,
    level: 'file' | 'class' | 'function',
    fields: Pick<
      Chunk,
      'className' | 'functionName' | 'startLine' | 'endLine' | 'parentClassId' | 'content'
    > & {
      originalLineCount?: number | null;
      segments?: Chunk['segments'];
    },
  ): Chunk {
    return {
      id,
      level,
      filePath: path,
      directoryPath: parentDir(path),
      language,
      className: fields.className,
      functionName: fields.functionName,
      startLine: fields.startLine,
      endLine: fields.endLine,
      parentDirectoryId: null,
      parentFileId: level === 'file' ? null : fileId,
      parentClassId: fields.parentClassId,
      content: fields.content,
      fullContent: null,
      isSummarized: false,
      originalLineCount: fields.originalLineCount ?? null,
      segments: fields.segments ?? null,
    };
  }
}

/**
 * The non-blank lines of [start, end] that no nested definition's chunk covers, grouped into
 * segments that split at runs of blank lines: a file's module-level code, a class's own body.
 */
function uncoveredSegments(
  lines: readonly string[],
  start: number,
  end: number,
  nested: readonly Definition[],
): Segment[] {
  const covered = new Uint8Array(end + 2);
  for (const definition of nested)
    for (
      let line = definition.chunkStartLine;
      line <= definition.chunkEndLine && line <= end;
      line++
    )
      covered[line] = 1;
  const segments: Segment[] = [];
  let open = -1;
  let lastCode = -1;
  for (let line = start; line <= end; line++) {
    const code = !covered[line] && (lines[line - 1] ?? '').trim() !== '';
    if (code) {
      if (open < 0) open = line;
      else if (line - lastCode > SEGMENT_GAP) {
        segments.push([open, lastCode]);
        open = line;
      }
      lastCode = line;
    } else if (covered[line] && open >= 0) {
      segments.push([open, lastCode]);
      open = -1;
    }
  }
  if (open >= 0) segments.push([open, lastCode]);
  return segments;
}

function segmentText(lines: readonly string[], segments: readonly Segment[]): string {
  const out: string[] = [];
  for (const [start, end] of segments) {
    if (out.length >= MAX_SEGMENT_LINES_IN_CONTENT) break;
    out.push(
      ...lines.slice(
        start - 1,
        Math.min(end, start - 1 + MAX_SEGMENT_LINES_IN_CONTENT - out.length),
      ),
    );
  }
  return out.join('\n');
}

function moduleFact(
  path: string,
  language: LanguageId,
  extraction: Extraction,
  fileId: string,
  used: Set<string>,
): CodeFact {
  const scope = extraction.moduleScope;
  return {
    id: uniqueId(used, (suffix) => `${path}::${MODULE_QUALIFIED_NAME}${suffix}`),
    path,
    language,
    qualifiedName: MODULE_QUALIFIED_NAME,
    name: path.slice(path.lastIndexOf('/') + 1),
    kind: 'module',
    className: null,
    parent: null,
    startLine: 1,
    endLine: Math.max(1, extraction.lineCount),
    signature: path,
    docstring: extraction.moduleDoc,
    calls: scope.calls,
    raises: [...new Set(scope.raises)],
    errorStrings: [...new Set(scope.errorStrings)],
    mutates: [],
    imports: scope.imports,
    bases: [],
    chunkId: fileId,
  };
}

function uniqueId(used: Set<string>, make: (suffix: string) => string): string {
  let id = make('');
  for (let n = 2; used.has(id); n++) id = make(`#${n}`);
  used.add(id);
  return id;
}

function fileContent(
  path: string,
  language: LanguageId,
  extraction: Extraction,
  moduleCode: string,
): string {
  const out = [`File: ${path}`, `Language: ${language}`];
  if (extraction.moduleDoc) out.push(`Docstring: ${extraction.moduleDoc}`);
  if (extraction.moduleScope.importLines.length) {
    out.push('Imports:', ...extraction.moduleScope.importLines.map((line) => `  ${line}`));
  }
  const signatures: string[] = [];
  let unlisted = 0;
  for (const definition of extraction.definitions) {
    if (definition.insideFunction) continue;
    if (signatures.length === MAX_SIGNATURES_IN_FILE_CHUNK) {
      unlisted++;
      continue;
    }
    const depth = nestingDepth(extraction.definitions, definition);
    signatures.push(`${'  '.repeat(depth + 1)}${definition.facts.signature}`);
  }
  if (signatures.length) out.push('Definitions:', ...signatures);
  if (unlisted) out.push(`  … and ${unlisted} more definitions`);
  if (moduleCode) out.push(MODULE_CODE_MARKER, moduleCode);
  return out.join('\n');
}

/** A class chunk: its own code (header, documentation, attributes), then its members' signatures. */
function classContent(
  definition: Definition,
  definitions: readonly Definition[],
  index: number,
  isOutsideMember: (member: Definition) => boolean,
  ownCode: string,
): string {
  const out = [ownCode || definition.facts.signature];
  definitions.forEach((member) => {
    if (member.parentIndex === index)
      out.push(indent(member.isContainer ? `${member.facts.signature} …` : member.facts.signature));
    else if (member.parentIndex !== index && isOutsideMember(member))
      out.push(indent(member.facts.signature));
  });
  return out.join('\n');
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n');
}

function nestingDepth(definitions: readonly Definition[], definition: Definition): number {
  let depth = 0;
  for (let parent = definition.parentIndex; parent >= 0; parent = definitions[parent]!.parentIndex)
    depth++;
  return depth;
}
