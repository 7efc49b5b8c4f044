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
 *   @errorlog            an error-logging call       @errorlog.args
 *                        (or, on a method call, `methodCallFacts()` reads it from the @call match)
 *   @mutation            an assignment target or mutating call on a name
 *                        @mutation.object + @mutation.attribute, or @mutation.name, or
 *                        @mutation.self (an attribute of the current object written bare: `@x`)
 *   @global              a `global x` style declaration (Python)   @global.name
 *   @typed               a parameter, assignment or field that may state a name's type,
 *                        handed to `typeBindings()`
 *   @reference           a function named as a value (an argument, a handler table entry,
 *                        a decorator)   @reference.name, @reference.receiver
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
  /** The names a `@typed` node gives a static type (see `TypeBinding`). */
  typeBindings?(node: Node): TypeBinding[];
  /** The literal text of a string node (quotes and prefixes removed). */
  stringValue(node: Node): string | null;
  /**
   * Error logs and mutations read from a method call's `@call` match instead of patterns of their
   * own. A pattern for `logger.error("…")` filters method names with `#match?`, which runs in
   * JavaScript on a match built for every method call, and a mutating-method pattern matches every
   * call on a bare name: both repeat the call pattern's work on the most common node of the tree.
   */
  methodCallFacts?(call: Node, method: string, receiver: Node): MethodCallFacts;
}

/** What a method call is besides a call (see `LanguageSpec.methodCallFacts`). */
export interface MethodCallFacts {
  /** The argument list of a call that logs an error (its first strings are the message). */
  readonly errorLogArguments: Node | null;
  /** The bare name whose object a mutating method changes (`items` in `items.append(x)`). */
  readonly mutatedName: string | null;
}

/**
 * A name and the type a parameter, assignment or field gives it. `name` is a local (`app`) or an
 * attribute of the current object (`self.session`, `this.ctx`); `type` is an annotation as written,
 * a call whose result the name holds (`Session()`, `make_app()`), or `=other` when the name is
 * assigned another local (`this.ctx = ctx`), whose type it then shares.
 */
export interface TypeBinding {
  readonly name: string;
  readonly type: string;
  /** An annotation: the declared type wins over what assignments suggest, as in the checkers. */
  readonly declared?: boolean;
  /** 1-based lines the name holds this type within and nowhere else (an exception handler). */
  readonly lines?: readonly [start: number, end: number];
}

/** Longest type or call text worth keeping: longer ones are expressions, not names. */
const MAX_TYPE_TEXT = 80;

/** `Foo`, `mod.Foo`, `self.factory`: a name or dotted path, nothing computed. */
const DOTTED_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** The type a value gives the name it is assigned to: a construction or call result, or another local. */
export function valueType(
  value: Node | null,
  callTypes: readonly string[],
  newType: string | null,
): string | null {
  if (!value) return null;
  if (value.type === 'await_expression' || value.type === 'await')
    return valueType(value.namedChildren[0] ?? null, callTypes, newType);
  if (value.type === newType) {
    const constructor = value.childForFieldName('constructor');
    return constructor && DOTTED_NAME.test(constructor.text) ? constructor.text : null;
  }
  if (callTypes.includes(value.type)) {
    const callee = value.childForFieldName('function');
    return callee && callee.text.length <= MAX_TYPE_TEXT && DOTTED_NAME.test(callee.text)
      ? `${callee.text}()`
      : null;
  }
  if (value.type === 'identifier' || value.type === 'this') return `=${value.text}`;
  return null;
}

/** An annotation's text without its leading `:` and collapsed, or null when too long to be a name. */
export function annotationText(node: Node | null): string | null {
  if (!node) return null;
  const text = node.text.replace(/^:/, '').replace(/\s+/g, ' ').trim();
  return text && text.length <= MAX_TYPE_TEXT ? text : null;
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
