import type { Node } from 'web-tree-sitter';
import type { ImportBinding, LanguageId, SymbolKind } from '../model';

/**
 * What the generic extractor needs to know about one language. Most of it is a tree-sitter query
 * whose capture names follow one convention, so adding a language is mostly writing that query:
 *
 *   @definition.<kind>   a definition node (kind: function, class, interface, struct, enum, trait, type)
 *     @name              its name                  @owner  object it is assigned to / receiver type
 *   @call                a call or construction      @call.name, @call.receiver
 *   @raise               raise / throw               @raise.type, @raise.message
 *   @errorlog            an error-logging call       @errorlog.message
 *   @mutation            an assignment target or mutating call on a name
 *                        @mutation.object + @mutation.attribute, or @mutation.name, or
 *                        @mutation.self (an attribute of the current object written bare: `@x`)
 *   @global              a `global x` style declaration (Python)   @global.name
 *   @import              an import statement, handed to `imports()`
 *   @module.name         a name bound at module level
 */
export interface LanguageSpec {
  readonly id: LanguageId;
  /** Grammar file stem in @vscode/tree-sitter-wasm (`tree-sitter-<grammar>.wasm`). */
  readonly grammar: string;
  readonly extensions: readonly string[];
  readonly query: string;
  /** Receivers that mean "the current object" (`self`, `this`). */
  readonly selfNames: readonly string[];
  /** Node types around a definition that belong to its chunk (decorators, `export`). */
  readonly wrapperTypes: readonly string[];
  /** Comment node types; comments directly above a definition are its documentation. */
  readonly commentTypes: readonly string[];
  /** Kinds that group methods (class-level chunks). */
  readonly containerKinds: readonly SymbolKind[];
  /** How module specifiers map to files, for import-aware call resolution. */
  readonly moduleSystem: ModuleSystem;
  /** Method names that mutate their receiver (`append`, `clear`, `set`, …). */
  readonly mutatingMethods: ReadonlySet<string>;
  docstring(definition: Node): string | null;
  /** The module's own documentation (a leading docstring or file comment). */
  moduleDocstring(root: Node): string | null;
  /** The header of a definition: everything before its body, whitespace collapsed. */
  signature(definition: Node): string;
  imports(statement: Node): ImportBinding[];
  bases(definition: Node): string[];
  /** The literal text of a string node (quotes and prefixes removed). */
  stringValue(node: Node): string | null;
}

export type ModuleSystem = 'python' | 'ecmascript' | 'go' | 'java' | 'none';

const WHITESPACE = /\s+/g;

/** Text from a definition's start up to its body, on one line. */
export function headerBefore(definition: Node, body: Node | null, maxLength = 300): string {
  const text = body
    ? definition.text.slice(0, body.startIndex - definition.startIndex)
    : firstLine(definition.text);
  const collapsed = text
    .replace(WHITESPACE, ' ')
    .trim()
    .replace(/[:{]\s*$/, '')
    .trim();
  return collapsed.length > maxLength ? `${collapsed.slice(0, maxLength)}…` : collapsed;
}

export function firstLine(text: string): string {
  const index = text.indexOf('\n');
  return index < 0 ? text : text.slice(0, index);
}

/** Cleans a block or line comment into plain documentation text. */
export function commentText(raw: string): string {
  return raw
    .replace(/^\/\*\*?|\*\/$/g, '')
    .split('\n')
    .map((line) => line.replace(/^\s*(\/\/\/?|#|\*(?!\/))\s?/, '').trimEnd())
    .join('\n')
    .trim();
}

/** A file's first comment when it documents the file rather than stating a licence. */
export function leadingFileComment(root: Node, commentTypes: readonly string[]): string | null {
  const first = root.firstNamedChild;
  if (!first || !commentTypes.includes(first.type)) return null;
  const text = commentText(first.text);
  return /copyright|licen[cs]e|spdx/i.test(text) ? null : text;
}

export function truncate(text: string, max: number): string {
  return text.length > max ? text.slice(0, max) : text;
}
