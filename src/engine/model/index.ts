/**
 * The index's data model: what a parse produces (symbols with their facts), the four levels of
 * chunks built from it, and the records the store persists. Plain data, safe to post between threads.
 */
export type LanguageId =
  | 'python'
  | 'javascript'
  | 'typescript'
  | 'tsx'
  | 'go'
  | 'java'
  | 'rust'
  | 'csharp'
  | 'cpp'
  | 'ruby'
  | 'php';

export type ChunkLevel = 'directory' | 'file' | 'class' | 'function';
export const CHUNK_LEVELS: readonly ChunkLevel[] = ['directory', 'file', 'class', 'function'];

export const SYMBOL_KINDS = [
  'function',
  'method',
  'class',
  'interface',
  'struct',
  'enum',
  'trait',
  'type',
  'module',
] as const;
export type SymbolKind = (typeof SYMBOL_KINDS)[number];

/** A call as written at one place in the source. Resolution to a definition happens in the graph. */
export interface CallSite {
  /** The called name: `f` in `f()`, `obj.f()` and `new f()`. */
  readonly name: string;
  /** The receiver expression as written (`self`, `this`, `ctx.app`, a module alias), or null for a bare call. */
  readonly receiver: string | null;
  readonly line: number;
  /**
   * The receiver's static type as the file states it: an annotation (`Blueprint`, `"Flask"`,
   * `Optional[Session]`), a construction or call whose result it holds (`Session()`,
   * `self.make_app()`), or what `new` built (`Vitest`). Absent when the file says nothing.
   */
  readonly receiverType?: string;
  /** `reference`: the function is named as a value (a callback, a handler, a decorator), not called. */
  readonly kind?: 'reference';
}

export type ImportKind = 'module' | 'named' | 'default' | 'namespace' | 'wildcard';

/** One name an import statement brings into scope. */
export interface ImportBinding {
  /** The local name (`np` in `import numpy as np`, `echo` in `from .utils import echo`). */
  readonly local: string;
  /** The module specifier as written (`.utils`, `./router`, `net/http`). */
  readonly module: string;
  /** The imported member's name, or null when the binding is the module itself. */
  readonly imported: string | null;
  readonly kind: ImportKind;
  readonly line: number;
  /** True for `export { x } from './y'` style re-exports. */
  readonly reexport?: boolean;
}

export interface SymbolFacts {
  /** `Class.method`, `outer.inner`, `app.use` (owner-assigned JS functions), or the bare name. */
  readonly qualifiedName: string;
  readonly name: string;
  readonly kind: SymbolKind;
  /** The enclosing class (or owner object) qualified name; null for free functions. */
  readonly className: string | null;
  /** The qualified name of the enclosing definition, or null at module level. */
  readonly parent: string | null;
  /** 1-based lines of the definition itself (decorators and leading comments excluded). */
  readonly startLine: number;
  readonly endLine: number;
  readonly signature: string;
  readonly docstring: string | null;
  readonly calls: readonly CallSite[];
  readonly raises: readonly string[];
  readonly errorStrings: readonly string[];
  readonly mutates: readonly string[];
  readonly imports: readonly ImportBinding[];
  /** Base classes / extended types as written, for classes. */
  readonly bases: readonly string[];
  /** The chunk that holds this definition's code (a function nested in another shares its chunk). */
  readonly chunkId: string | null;
}

export interface ParseAnomaly {
  readonly kind: 'error' | 'missing';
  readonly byteOffset: number;
  readonly line: number;
  readonly nodeType: string;
  readonly context: string;
}

export interface Chunk {
  readonly id: string;
  readonly level: ChunkLevel;
  /** Workspace-relative file path; null for directory chunks. */
  readonly filePath: string | null;
  readonly directoryPath: string;
  readonly language: LanguageId | null;
  readonly className: string | null;
  readonly functionName: string | null;
  /** 1-based inclusive lines; 0 for directory chunks, 1..lineCount for file chunks. */
  readonly startLine: number;
  readonly endLine: number;
  readonly parentDirectoryId: string | null;
  readonly parentFileId: string | null;
  readonly parentClassId: string | null;
  /** The text of the chunk; for a summarised long function, the summary. */
  content: string;
  /** The raw body of a summarised function; null otherwise. */
  fullContent: string | null;
  isSummarized: boolean;
  /** Set on functions of SUMMARIZE_MIN_LINES or more: flagged for summarisation. */
  readonly originalLineCount: number | null;
  /**
   * For file and class chunks: the 1-based line ranges of their own code outside any nested
   * definition (module-level statements, class attributes), so a result can cite just those lines.
   */
  readonly segments: readonly Segment[] | null;
}

/** An inclusive 1-based line range. */
export type Segment = readonly [start: number, end: number];

/** A definition's facts as stored and served: the symbol plus where it lives. */
export interface CodeFact extends SymbolFacts {
  /** `path::qualifiedName` (with `#n` for repeated definitions of one name in a file). */
  readonly id: string;
  readonly path: string;
  readonly language: LanguageId;
}

/** File-level facts: module-scope calls, imports and names. Stored as a fact of kind 'module'. */
export interface ModuleFacts {
  readonly calls: readonly CallSite[];
  readonly imports: readonly ImportBinding[];
  /** Names bound at module level (assignments, definitions): targets for `mutates`. */
  readonly names: readonly string[];
}

export interface ParsedFile {
  readonly path: string;
  readonly language: LanguageId;
  readonly lineCount: number;
  readonly symbols: readonly SymbolFacts[];
  readonly module: ModuleFacts;
  readonly anomalies: readonly ParseAnomaly[];
}

export const SUMMARIZE_MIN_LINES = 150;
export const MIN_DIRECTORY_FILES = 3;
export const MAX_DIRECTORY_FILES = 20;

/** The fact of kind 'module' that carries a file's module-level calls, imports and docstring. */
export const MODULE_QUALIFIED_NAME = '<module>';

/** Version string stored in the manifest: a change of grammar or extractor invalidates parsed files. */
export const PARSER_VERSION = 'web-tree-sitter@0.27.1;tree-sitter-wasm@0.3.1;extract@7';

/** The stages of one indexing run, in order. */
export const INDEX_STAGES = ['walk', 'parse', 'summarize', 'facts', 'embed', 'write'] as const;
export type IndexStage = (typeof INDEX_STAGES)[number];
