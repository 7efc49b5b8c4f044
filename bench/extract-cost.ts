/**
 * `node dist/bench.js --extract-cost [scale-1k]`: what a parse worker spends per file, language by
 * language, against the bare parse of the same files, all in this one thread and as CPU time (so
 * other jobs on the machine change the ratios little). Per language it reports the bare parse, the
 * extraction (`extractDefinitions`, which parses again) and chunking, then, over the parsed trees,
 * where the extraction's query time goes: the whole query, its cheapest single pattern alone, and
 * a JavaScript cursor walk that only reads each node's type. When one pattern costs nearly what
 * the whole query does, the query's time is the walk over the tree, not the patterns.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Query, type Tree } from 'web-tree-sitter';
import { buildFileChunks } from '../src/engine/index/chunks';
import { extractDefinitions } from '../src/engine/index/extract';
import { walkWorkspace } from '../src/engine/index/walk';
import { loadGrammar, type LoadedGrammar } from '../src/engine/lang/grammars';
import { languageById } from '../src/engine/lang/registry';
import type { LanguageSpec } from '../src/engine/lang/spec';
import type { LanguageId } from '../src/engine/model';
import { unwrap } from '../src/engine/util/result';
import { cpuMs, round } from './child';
import { corporaRow, rowRoot } from './scale-corpus';

/** Files per language whose trees are kept for the query timings (their memory is the limit). */
const QUERY_SAMPLE_FILES = 400;

interface Source {
  readonly path: string;
  readonly language: LanguageId;
  readonly source: string;
}

export interface ExtractCost {
  readonly language: LanguageId;
  readonly files: number;
  readonly parseSeconds: number;
  /** Parse included, as a worker runs it. */
  readonly extractSeconds: number;
  readonly extractOverParse: number;
  readonly chunkSeconds: number;
  readonly sampleFiles: number;
  readonly queryMs: number;
  readonly cheapestPatternMs: number;
  readonly cursorWalkMs: number;
}

export async function benchExtractCost(rowId: string): Promise<ExtractCost[]> {
  const row = corporaRow(rowId);
  const root = rowRoot(row);
  const walked = unwrap(await walkWorkspace({ root, maxFileBytes: 1024 * 1024 }));
  const byLanguage = new Map<LanguageId, Source[]>();
  for (const candidate of walked.candidates) {
    const source = readFileSync(path.join(root, candidate.path), 'utf8');
    const files = byLanguage.get(candidate.language) ?? [];
    files.push({ path: candidate.path, language: candidate.language, source });
    byLanguage.set(candidate.language, files);
  }
  const costs: ExtractCost[] = [];
  for (const [language, files] of byLanguage) {
    const spec = languageById(language);
    costs.push(await languageCost(spec, await loadGrammar(spec), files));
  }
  return costs;
}

async function languageCost(
  spec: LanguageSpec,
  grammar: LoadedGrammar,
  files: readonly Source[],
): Promise<ExtractCost> {
  // a first pass compiles the code paths, so the timed pass does not pay for it
  const timed = (work: () => void): number => {
    work();
    return cpuMs(work);
  };
  const parseMs = timed(() => {
    for (const file of files) grammar.parser.parse(file.source)!.delete();
  });
  let chunkMs = 0;
  const extractMs = timed(() => {
    chunkMs = 0;
    for (const file of files) {
      const extraction = extractDefinitions(file.path, file.source, spec, grammar);
      chunkMs += cpuMs(() => buildFileChunks(file.path, file.language, file.source, extraction));
    }
  });
  const trees = files
    .slice(0, QUERY_SAMPLE_FILES)
    .map((file) => grammar.parser.parse(file.source)!);
  try {
    const run = (query: Query) => () => {
      for (const tree of trees) query.matches(tree.rootNode);
    };
    const patternMs = topLevelPatterns(spec.query).map((pattern) => {
      const query = new Query(grammar.language, pattern);
      try {
        return timed(run(query));
      } finally {
        query.delete();
      }
    });
    return {
      language: spec.id,
      files: files.length,
      parseSeconds: round(parseMs / 1000, 2),
      extractSeconds: round((extractMs - chunkMs) / 1000, 2),
      extractOverParse: round((extractMs - chunkMs) / parseMs, 2),
      chunkSeconds: round(chunkMs / 1000, 2),
      sampleFiles: trees.length,
      queryMs: Math.round(timed(run(grammar.query))),
      cheapestPatternMs: Math.round(Math.min(...patternMs)),
      cursorWalkMs: Math.round(timed(() => trees.forEach(walkEveryNode))),
    };
  } finally {
    for (const tree of trees) tree.delete();
  }
}

/** Visits every node of the tree, reading its type: the least a walk in JavaScript does. */
function walkEveryNode(tree: Tree): void {
  const cursor = tree.walk();
  try {
    for (;;) {
      void cursor.nodeType;
      if (cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) if (!cursor.gotoParent()) return;
    }
  } finally {
    cursor.delete();
  }
}

/** A query's top-level patterns: the text between brackets balanced at depth zero. */
export function topLevelPatterns(query: string): string[] {
  const patterns: string[] = [];
  let depth = 0;
  let start = -1;
  let inString = false;
  for (let i = 0; i < query.length; i++) {
    const char = query[i]!;
    if (inString) {
      if (char === '\\') i++;
      else if (char === '"') inString = false;
      continue;
    }
    if (char === '"') inString = true;
    else if (char === ';' && depth === 0) i = lineEnd(query, i);
    else if (char === '(' || char === '[') {
      if (depth++ === 0) start = i;
    } else if ((char === ')' || char === ']') && --depth === 0) {
      // a capture or quantifier after the closing bracket belongs to the pattern
      const end = patternEnd(query, i + 1);
      patterns.push(query.slice(start, end).trim());
      i = end - 1;
    }
  }
  return patterns;
}

function lineEnd(text: string, from: number): number {
  const end = text.indexOf('\n', from);
  return end < 0 ? text.length : end;
}

/** After a pattern's closing bracket: its captures (`@name`) and a quantifier, on that line. */
function patternEnd(text: string, from: number): number {
  const match = /^(?:[ \t]*(?:@[\w.]+|[?*+]))*/.exec(text.slice(from));
  return from + (match ? match[0].length : 0);
}
