import type { Node, QueryCapture, Tree } from 'web-tree-sitter';
import { typeName } from '../graph/code-graph';
import type { LoadedGrammar } from '../lang/grammars';
import {
  commentText,
  truncate,
  valueType,
  type LanguageSpec,
  type TypeBinding,
} from '../lang/spec';
import type { CallSite, ImportBinding, ParseAnomaly, SymbolFacts, SymbolKind } from '../model';

/**
 * Turns one parsed file into definitions with their facts. A single query pass finds definitions,
 * calls, raises, mutations and imports; a sweep over positions then gives every item to the
 * innermost definition that contains it.
 */
export interface Extraction {
  readonly definitions: readonly Definition[];
  readonly moduleScope: ScopeFacts;
  readonly anomalies: readonly ParseAnomaly[];
  readonly lineCount: number;
  readonly moduleDoc: string | null;
}

export interface Definition {
  readonly facts: SymbolFacts;
  /** Index into `definitions` of the enclosing definition, or -1 at module level. */
  readonly parentIndex: number;
  /** Whether some enclosing definition is a function (such code belongs to that function's chunk). */
  readonly insideFunction: boolean;
  readonly isContainer: boolean;
  /** 1-based lines of the whole chunk: decorators, leading comments and overload signatures included. */
  readonly chunkStartLine: number;
  readonly chunkEndLine: number;
  readonly chunkStartIndex: number;
  readonly endIndex: number;
  /** The whole documentation (facts keep the first DOCSTRING_LIMIT characters). */
  readonly docFull: string | null;
}

export interface ScopeFacts {
  readonly calls: CallSite[];
  readonly raises: string[];
  readonly errorStrings: string[];
  readonly mutations: MutationTarget[];
  readonly imports: ImportBinding[];
  /** Names declared in this scope (module level: the module's names). */
  readonly declared: Set<string>;
  readonly globals: Set<string>;
  readonly importLines: string[];
  /** Static types of names in this scope; null where assignments disagree. */
  readonly types: Map<string, string | null>;
  /** Names whose type an annotation declares: assignments no longer change it. */
  readonly annotated: Set<string>;
  /** Types a name holds only within a range of lines (an exception handler's name). */
  readonly blockTypes: TypeBinding[];
  /** Functions named as values here, kept once resolution can tell what they name. */
  readonly references: CallSite[];
}

interface RawDefinition {
  readonly node: Node;
  readonly kind: SymbolKind;
  readonly name: string;
  readonly owner: string | null;
  readonly start: number;
  readonly end: number;
}

type ScopedItem =
  | { readonly at: number; readonly type: 'call'; readonly call: CallSite }
  | {
      readonly at: number;
      readonly type: 'raise';
      readonly exception: string | null;
      readonly message: string | null;
    }
  | { readonly at: number; readonly type: 'errorString'; readonly message: string }
  | { readonly at: number; readonly type: 'mutation'; readonly target: MutationTarget }
  | { readonly at: number; readonly type: 'binding'; readonly name: string }
  | { readonly at: number; readonly type: 'global'; readonly name: string }
  | { readonly at: number; readonly type: 'typed'; readonly bindings: TypeBinding[] }
  | { readonly at: number; readonly type: 'reference'; readonly site: CallSite }
  | {
      readonly at: number;
      readonly type: 'import';
      readonly bindings: ImportBinding[];
      readonly line: string;
    };

interface MutationTarget {
  /** `self.x` style attribute of the current object. */
  readonly selfAttribute: string | null;
  /** A bare name being assigned, subscripted or mutated through a method. */
  readonly name: string | null;
  /** True when the assignment also declares the name locally (Python's plain `name = …`). */
  readonly declares: boolean;
  /** The attribute written on `name` (`ctx.params[…] = …`, `res.statusCode = …`), if any. */
  readonly attribute?: string;
  /** True when `name` itself is assigned (`x = …`), not the object it holds. */
  readonly rebinds?: boolean;
}

const PRIMARY_CAPTURES = new Set([
  'call',
  'raise',
  'errorlog',
  'mutation',
  'binding',
  'global',
  'import',
  'typed',
  'reference',
]);

const MAX_ANOMALIES_PER_FILE = 50;
const MAX_RECEIVER_LENGTH = 60;
const MAX_ERROR_STRING = 200;
const DOCSTRING_LIMIT = 200;
const FULL_DOC_LIMIT = 2000;
const MODULE_DOC_LIMIT = 600;

export function extractDefinitions(
  path: string,
  source: string,
  spec: LanguageSpec,
  grammar: LoadedGrammar,
): Extraction {
  const tree = grammar.parser.parse(source);
  if (!tree) throw new Error(`tree-sitter returned no tree for ${path}`);
  try {
    const anomalies = tree.rootNode.hasError ? findAnomalies(tree, source) : [];
    const { raw, items } = collect(grammar, spec);
    const moduleDoc = truncateDoc(spec.moduleDocstring(tree.rootNode), MODULE_DOC_LIMIT);
    return assemble(source, spec, raw, items, anomalies, moduleDoc);
  } finally {
    tree.delete();
  }

  function collect(loaded: LoadedGrammar, language: LanguageSpec) {
    const rawDefinitions = new Map<number, RawDefinition>();
    const scoped: ScopedItem[] = [];
    const seenCalls = new Set<number>();
    const raises = new Map<
      number,
      { at: number; exception: string | null; message: string | null }
    >();
    for (const match of loaded.query.matches(tree!.rootNode)) {
      const captures = byName(match.captures);
      const primary = match.captures.find(
        (c) => PRIMARY_CAPTURES.has(c.name) || c.name.startsWith('definition.'),
      );
      if (!primary) continue;
      const node = primary.node;
      if (primary.name.startsWith('definition.')) {
        const definition = readDefinition(
          primary.name.slice('definition.'.length) as SymbolKind,
          node,
          captures,
        );
        // An object literal's method matches with its owner (`const api = { get() {} }`) and
        // without; the owner wins.
        const earlier = rawDefinitions.get(node.startIndex);
        if (definition && (!earlier || (definition.owner && !earlier.owner)))
          rawDefinitions.set(node.startIndex, definition);
        continue;
      }
      switch (primary.name) {
        case 'call': {
          const nameNode = captures.get('call.name');
          if (!nameNode || seenCalls.has(nameNode.startIndex)) break;
          seenCalls.add(nameNode.startIndex);
          const receiver = captures.get('call.receiver');
          const call = callSite(nameNode, receiver);
          scoped.push({ at: node.startIndex, type: 'call', call });
          if (receiver && language.methodCallFacts)
            scoped.push(...methodCallItems(node, nameNode.text, receiver, language));
          break;
        }
        case 'raise': {
          const previous = raises.get(node.startIndex);
          const type = captures.get('raise.type');
          const args = captures.get('raise.args');
          raises.set(node.startIndex, {
            at: node.startIndex,
            exception: previous?.exception ?? (type ? exceptionName(type.text) : null),
            message: previous?.message ?? (args ? firstArgumentString(args, language) : null),
          });
          break;
        }
        case 'errorlog': {
          const args = captures.get('errorlog.args');
          const message = args ? firstArgumentString(args, language) : null;
          if (message) scoped.push({ at: node.startIndex, type: 'errorString', message });
          break;
        }
        case 'mutation': {
          const target = mutationTarget(node, captures, language);
          if (target) scoped.push({ at: node.startIndex, type: 'mutation', target });
          break;
        }
        case 'binding': {
          const name = captures.get('binding.name');
          if (name) scoped.push({ at: node.startIndex, type: 'binding', name: name.text });
          break;
        }
        case 'global':
          for (const [name, captured] of captures) {
            if (name === 'global.name')
              scoped.push({ at: node.startIndex, type: 'global', name: captured.text });
          }
          break;
        case 'typed': {
          const bindings = language.typeBindings?.(node) ?? [];
          if (bindings.length) scoped.push({ at: node.startIndex, type: 'typed', bindings });
          break;
        }
        case 'reference': {
          const name = captures.get('reference.name');
          if (!name) break;
          const receiver = captures.get('reference.receiver');
          scoped.push({
            at: node.startIndex,
            type: 'reference',
            site: {
              name: name.text,
              receiver: receiver ? receiver.text : null,
              line: name.startPosition.row + 1,
              kind: 'reference',
            },
          });
          break;
        }
        case 'import': {
          const bindings = language.imports(node);
          scoped.push({
            at: node.startIndex,
            type: 'import',
            bindings,
            line: oneLine(node.text, 160),
          });
          break;
        }
      }
    }
    for (const raise of raises.values()) scoped.push({ type: 'raise', ...raise });
    return { raw: [...rawDefinitions.values()], items: scoped };

    function readDefinition(
      kind: SymbolKind,
      node: Node,
      captures: Map<string, Node>,
    ): RawDefinition | null {
      const nameNode = captures.get('name');
      const computed = captures.get('name.computed');
      const name = nameNode ? cleanName(nameNode.text) : computed ? `[${computed.text}]` : null;
      if (!name) return null;
      const ownerNode = captures.get('owner');
      return {
        node,
        kind,
        name,
        owner: ownerNode ? ownerName(ownerNode.text) : null,
        start: node.startIndex,
        end: node.endIndex,
      };
    }

    function callSite(nameNode: Node, receiverNode: Node | undefined): CallSite {
      const line = nameNode.startPosition.row + 1;
      let name = cleanName(nameNode.text);
      let receiver = receiverNode ? receiverText(receiverNode.text) : null;
      // `fn.call(this, …)` and `fn.apply(…)` invoke `fn` itself.
      if (
        (name === 'call' || name === 'apply') &&
        receiver &&
        /^[A-Za-z_$][\w$]*$/.test(receiver)
      ) {
        name = receiver;
        receiver = null;
      }
      // `Foo().bar()`, `new Foo().bar()`, `make().bar()`: the receiver is what that call returns.
      const receiverType =
        receiverNode && receiver === '<expr>' ? callResultType(receiverNode) : null;
      return receiverType ? { name, receiver, line, receiverType } : { name, receiver, line };
    }
  }
}

function assemble(
  source: string,
  spec: LanguageSpec,
  raw: RawDefinition[],
  items: ScopedItem[],
  anomalies: ParseAnomaly[],
  moduleDoc: string | null,
): Extraction {
  raw.sort((a, b) => a.start - b.start || b.end - a.end);
  const parentOf = nestDefinitions(raw);
  const scopes = raw.map(() => emptyScope());
  const moduleScope = emptyScope();
  distribute(raw, items, (index) => (index < 0 ? moduleScope : scopes[index]!));
  const isContainer = raw.map((definition) => spec.containerKinds.includes(definition.kind));
  typeReceivers(spec, raw, parentOf, isContainer, scopes, moduleScope);

  const qualified: string[] = [];
  const definitions: Definition[] = [];
  const classNameOf: (string | null)[] = [];
  const insideFunction: boolean[] = [];
  // Module-level names: assignments, definitions and imported objects (a function writing to an
  // imported `session` or `cache` changes state shared beyond it).
  const moduleNames = new Set<string>(moduleScope.declared);
  for (let i = 0; i < raw.length; i++) if (parentOf[i] === -1) moduleNames.add(raw[i]!.name);
  for (const binding of moduleScope.imports)
    if (binding.local !== '*') moduleNames.add(binding.local);

  for (let i = 0; i < raw.length; i++) {
    const definition = raw[i]!;
    const parent = parentOf[i]!;
    const parentIsContainer = parent >= 0 && isContainer[parent]!;
    insideFunction[i] = parent >= 0 && (insideFunction[parent]! || !isContainer[parent]!);
    const owner = normalizeOwner(definition.owner);
    const className = owner ?? (parentIsContainer ? qualified[parent]! : null);
    const prefix = owner ?? (parent >= 0 ? qualified[parent]! : null);
    qualified[i] = prefix ? `${prefix}.${definition.name}` : definition.name;
    classNameOf[i] = isContainer[i] ? qualified[i]! : className;
    const kind: SymbolKind =
      definition.kind === 'function' && className && !insideFunction[i]
        ? 'method'
        : definition.kind;
    const scope = scopes[i]!;
    const { chunkStartIndex, chunkStartRow, leadingComment } = chunkStart(
      definition.node,
      spec,
      definition.name,
    );
    const documentation = spec.docstring(definition.node) ?? leadingComment;
    const facts: SymbolFacts = {
      qualifiedName: qualified[i]!,
      name: definition.name,
      kind,
      className: isContainer[i] ? (parentIsContainer ? qualified[parent]! : null) : className,
      parent: parent >= 0 ? qualified[parent]! : null,
      startLine: definition.node.startPosition.row + 1,
      endLine: definition.node.endPosition.row + 1,
      signature: spec.signature(definition.node),
      docstring: truncateDoc(documentation, DOCSTRING_LIMIT),
      calls: scope.calls,
      raises: unique(scope.raises),
      errorStrings: unique(scope.errorStrings),
      mutates: mutatesOf(scope, moduleNames),
      imports: scope.imports,
      bases: isContainer[i] ? spec.bases(definition.node) : [],
      chunkId: null,
    };
    definitions.push({
      facts,
      parentIndex: parent,
      insideFunction: insideFunction[i]!,
      isContainer: isContainer[i]!,
      chunkStartLine: chunkStartRow + 1,
      chunkEndLine: definition.node.endPosition.row + 1,
      chunkStartIndex,
      endIndex: definition.end,
      docFull: truncateDoc(documentation, FULL_DOC_LIMIT),
    });
  }
  return { definitions, moduleScope, anomalies, lineCount: countLines(source), moduleDoc };
}

/** For each definition, the index of its innermost enclosing definition (-1 at module level). */
function nestDefinitions(sorted: RawDefinition[]): number[] {
  const parents: number[] = [];
  const stack: number[] = [];
  for (let i = 0; i < sorted.length; i++) {
    while (stack.length && sorted[stack[stack.length - 1]!]!.end <= sorted[i]!.start) stack.pop();
    parents.push(stack.length ? stack[stack.length - 1]! : -1);
    stack.push(i);
  }
  return parents;
}

/** Hands every item to the innermost definition containing its start. */
function distribute(
  sorted: RawDefinition[],
  items: ScopedItem[],
  scopeOf: (index: number) => ScopeFacts,
): void {
  items.sort((a, b) => a.at - b.at);
  const stack: number[] = [];
  let next = 0;
  for (const item of items) {
    while (next < sorted.length && sorted[next]!.start <= item.at) {
      while (stack.length && sorted[stack[stack.length - 1]!]!.end <= sorted[next]!.start)
        stack.pop();
      stack.push(next++);
    }
    while (stack.length && sorted[stack[stack.length - 1]!]!.end <= item.at) stack.pop();
    apply(scopeOf(stack.length ? stack[stack.length - 1]! : -1), item);
  }
}

function apply(scope: ScopeFacts, item: ScopedItem): void {
  switch (item.type) {
    case 'call':
      scope.calls.push(item.call);
      break;
    case 'raise':
      if (item.exception) scope.raises.push(item.exception);
      if (item.message) scope.errorStrings.push(item.message);
      break;
    case 'errorString':
      scope.errorStrings.push(item.message);
      break;
    case 'mutation':
      scope.mutations.push(item.target);
      if (item.target.name && item.target.declares) scope.declared.add(item.target.name);
      break;
    case 'binding':
      scope.declared.add(item.name);
      break;
    case 'global':
      scope.globals.add(item.name);
      break;
    case 'typed':
      for (const binding of item.bindings) {
        if (binding.lines) scope.blockTypes.push(binding);
        else bindType(scope, binding);
      }
      break;
    case 'reference':
      scope.references.push(item.site);
      break;
    case 'import':
      scope.imports.push(...item.bindings);
      scope.importLines.push(item.line);
      break;
  }
}

/**
 * What a scope mutates: attributes of the current object, module-level names it assigns,
 * subscripts or changes through a mutating method, unless a local of that name shadows them
 * (in Python a plain assignment declares a local unless the name is declared `global`), and
 * objects it was handed and their attributes (`headers[k] = …`, `ctx.params[…] = …`,
 * `setattr(ctx, "x", …)`, `Object.assign(options, …)` on a parameter: a name neither module-level
 * nor assigned in the scope), which change state its callers see.
 */
function mutatesOf(scope: ScopeFacts, moduleNames: Set<string>): string[] {
  const result = new Set<string>();
  for (const target of scope.mutations) {
    if (target.selfAttribute) {
      result.add(target.selfAttribute);
      continue;
    }
    const name = target.name;
    if (!name) continue;
    if (!moduleNames.has(name)) {
      // an object handed in (a parameter): written through `.attr`, a subscript or a setter
      if (!scope.declared.has(name) && !target.rebinds)
        result.add(target.attribute ? `${name}.${target.attribute}` : name);
      continue;
    }
    if (scope.declared.has(name) && !scope.globals.has(name)) continue;
    result.add(name);
    // `os.environ[…] = …`: the module's object that changes, named as the code names it
    if (target.attribute) result.add(`${name}.${target.attribute}`);
  }
  return [...result];
}

/** The error log and the mutation a method call is besides a call, in the order their patterns gave. */
function methodCallItems(
  call: Node,
  method: string,
  receiver: Node,
  spec: LanguageSpec,
): ScopedItem[] {
  const facts = spec.methodCallFacts!(call, method, receiver);
  const items: ScopedItem[] = [];
  const args = facts.errorLogArguments;
  const message = args ? firstArgumentString(args, spec) : null;
  if (message) items.push({ at: call.startIndex, type: 'errorString', message });
  if (facts.mutatedName) {
    const target = { selfAttribute: null, name: facts.mutatedName, declares: false };
    items.push({ at: call.startIndex, type: 'mutation', target });
  }
  return items;
}

function mutationTarget(
  node: Node,
  captures: Map<string, Node>,
  spec: LanguageSpec,
): MutationTarget | null {
  const method = captures.get('mutation.method');
  if (method && !spec.mutatingMethods.has(method.text)) return null;
  const object = captures.get('mutation.object');
  const attribute = captures.get('mutation.attribute');
  if (object && attribute) {
    // `setattr(obj, "name", …)` names the attribute in a string
    const attributeName = cleanName(
      attribute.type === 'string' ? (spec.stringValue(attribute) ?? '') : attribute.text,
    );
    if (!attributeName) return null;
    if (spec.selfNames.includes(object.text)) {
      return { selfAttribute: `${object.text}.${attributeName}`, name: null, declares: false };
    }
    return object.type === 'identifier'
      ? { selfAttribute: null, name: object.text, declares: false, attribute: attributeName }
      : null;
  }
  // An instance variable written as is (`@count += 1` in Ruby) is an attribute of the current object.
  const ownAttribute = captures.get('mutation.self');
  if (ownAttribute) return { selfAttribute: ownAttribute.text, name: null, declares: false };
  const declared = captures.get('mutation.declares');
  if (declared) return { selfAttribute: null, name: declared.text, declares: true };
  const name = captures.get('mutation.name');
  if (!name) return null;
  // `x = …` rebinds the name itself (`x[k] = …`, `x.push(…)` change its object)
  const rebinds = name.parent?.startIndex === node.startIndex && name.parent.type === node.type;
  return { selfAttribute: null, name: name.text, declares: false, ...(rebinds ? { rebinds } : {}) };
}

/** Where a definition's chunk starts: wrappers (decorators, export), attached comments, overload signatures. */
function chunkStart(
  node: Node,
  spec: LanguageSpec,
  name: string,
): { chunkStartIndex: number; chunkStartRow: number; leadingComment: string | null } {
  let outer = node;
  while (outer.parent && spec.wrapperTypes.includes(outer.parent.type) && !isRoot(outer.parent))
    outer = outer.parent;
  let start = outer.startIndex;
  // The documentation is the run of comments nearest the definition; comments above overload
  // signatures document those overloads but still belong to the chunk.
  const docParts: string[] = [];
  let collectingDoc = true;
  let previous = outer.previousNamedSibling;
  let boundaryRow = outer.startPosition.row;
  while (previous) {
    // One blank line between a doc comment and its definition is common (express, many JS styles).
    const adjacent = previous.endPosition.row >= boundaryRow - 2;
    if (
      adjacent &&
      spec.commentTypes.includes(previous.type) &&
      !isTrailingComment(previous, spec)
    ) {
      if (collectingDoc) docParts.unshift(commentText(previous.text));
    } else if (isOverloadSignature(previous, name)) {
      collectingDoc = false;
    } else break;
    start = previous.startIndex;
    boundaryRow = previous.startPosition.row;
    previous = previous.previousNamedSibling;
  }
  const comment = docParts.join('\n').trim();
  return { chunkStartIndex: start, chunkStartRow: boundaryRow, leadingComment: comment || null };
}

/** `}  // end of namespace`: a comment on the same line as code belongs to that code. */
function isTrailingComment(comment: Node, spec: LanguageSpec): boolean {
  const before = comment.previousSibling;
  return (
    !!before &&
    !spec.commentTypes.includes(before.type) &&
    before.endPosition.row === comment.startPosition.row &&
    before.endPosition.column > 0
  );
}

function isOverloadSignature(node: Node, name: string): boolean {
  const signature =
    node.type === 'export_statement'
      ? node.namedChildren.find((c) => c?.type === 'function_signature')
      : node;
  return (
    signature?.type === 'function_signature' && signature.childForFieldName('name')?.text === name
  );
}

function isRoot(node: Node): boolean {
  return node.parent === null;
}

function findAnomalies(tree: Tree, source: string): ParseAnomaly[] {
  const anomalies: ParseAnomaly[] = [];
  const cursor = tree.walk();
  try {
    let more = true;
    while (more && anomalies.length < MAX_ANOMALIES_PER_FILE) {
      const node = cursor.currentNode;
      if (node.isError || node.isMissing) {
        const parent = node.parent ?? node;
        anomalies.push({
          kind: node.isMissing ? 'missing' : 'error',
          byteOffset: Buffer.byteLength(source.slice(0, node.startIndex), 'utf8'),
          line: node.startPosition.row + 1,
          nodeType: node.type,
          context: source.slice(parent.startIndex, parent.endIndex).slice(0, 80),
        });
      }
      if (node.hasError && cursor.gotoFirstChild()) continue;
      while (!cursor.gotoNextSibling()) {
        if (!cursor.gotoParent()) {
          more = false;
          break;
        }
      }
    }
  } finally {
    cursor.delete();
  }
  return anomalies;
}

function byName(captures: QueryCapture[]): Map<string, Node> {
  const map = new Map<string, Node>();
  for (const capture of captures) if (!map.has(capture.name)) map.set(capture.name, capture.node);
  return map;
}

/** The string literals of a call's first argument, joined: the message of a raise or log call. */
function firstArgumentString(args: Node, spec: LanguageSpec): string | null {
  let first = args.firstNamedChild;
  while (first && spec.commentTypes.includes(first.type)) first = first.nextNamedSibling;
  if (!first) return null;
  const value = first.childForFieldName('value') ?? first;
  const direct = spec.stringValue(value);
  if (direct !== null) return direct ? truncate(direct, MAX_ERROR_STRING) : null;
  const parts: string[] = [];
  collectStrings(value, spec, parts, 0);
  const joined = parts.join(' … ').trim();
  return joined ? truncate(joined, MAX_ERROR_STRING) : null;
}

function collectStrings(node: Node, spec: LanguageSpec, out: string[], depth: number): void {
  if (depth > 4 || out.length >= 4) return;
  for (const child of node.namedChildren) {
    if (!child) continue;
    const value = spec.stringValue(child);
    if (value !== null) {
      if (value.trim()) out.push(value);
    } else collectStrings(child, spec, out, depth + 1);
  }
}

function exceptionName(text: string): string {
  const name = text.replace(/\s+/g, '');
  const last = name.slice(name.lastIndexOf('.') + 1);
  return last || name;
}

function receiverText(text: string): string {
  const collapsed = text.replace(/\s+/g, '');
  if (
    collapsed.length > MAX_RECEIVER_LENGTH ||
    /[()[\]{}"'`]/.test(collapsed.replace(/^super\(\)/, ''))
  ) {
    return collapsed === 'super()' ? collapsed : '<expr>';
  }
  return collapsed;
}

/** A receiver that is itself a call or construction: the type is that call's result. */
function callResultType(node: Node): string | null {
  let inner: Node | null = node;
  while (inner?.type === 'parenthesized_expression') inner = inner.firstNamedChild;
  const type = valueType(inner, ['call', 'call_expression'], 'new_expression');
  return type && !type.startsWith('=') ? type : null;
}

function bindType(
  scope: { types: Map<string, string | null>; annotated: Set<string> },
  binding: TypeBinding,
): void {
  if (binding.declared && !scope.annotated.has(binding.name)) {
    scope.annotated.add(binding.name);
    scope.types.set(binding.name, binding.type);
  } else if (binding.declared || !scope.annotated.has(binding.name))
    addType(scope.types, binding.name, binding.type);
}

function addType(types: Map<string, string | null>, name: string, type: string): void {
  const known = types.get(name);
  if (known === undefined) types.set(name, type);
  else if (known !== type) types.set(name, null);
}

const MAX_ALIAS_STEPS = 4;
/** Attribute steps followed after a typed name (`self.app.session_interface`: two). */
const MAX_ATTRIBUTE_STEPS = 2;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Gives every call on a receiver the receiver's static type where the file states it: a local's
 * or parameter's type in the calling scope or the scopes around it, an attribute of the current
 * object assigned or declared anywhere in its class. Also keeps the references that can name a
 * function of this file or an import (a plain variable passed along is no reference).
 */
function typeReceivers(
  spec: LanguageSpec,
  raw: RawDefinition[],
  parentOf: number[],
  isContainer: boolean[],
  scopes: ScopeFacts[],
  moduleScope: ScopeFacts,
): void {
  const scopeAt = (index: number) => (index < 0 ? moduleScope : scopes[index]!);
  const classOf = (index: number): number => {
    for (let at = index; at >= 0; at = parentOf[at]!) if (isContainer[at]) return at;
    return -1;
  };
  const lookup = (index: number, name: string, steps = 0): string | null => {
    for (let at = index; ; at = parentOf[at]!) {
      const scope = scopeAt(at);
      // A class body's names are its attributes, not locals of its methods.
      if (at < 0 || !isContainer[at] || at === index) {
        const type = scope.types.get(name);
        if (type !== undefined) {
          if (type === null) return null;
          return type.startsWith('=') ? alias(at, type.slice(1), steps) : type;
        }
      }
      if (at < 0) return null;
    }
  };
  // `var self = this`: the local is the current object, and its calls resolve as `this.m()` does.
  const alias = (index: number, name: string, steps: number): string | null =>
    spec.selfNames.includes(name)
      ? name
      : steps < MAX_ALIAS_STEPS
        ? lookup(index, name, steps + 1)
        : null;

  // Attributes of the current object, per class: `self.x = …` in any method, class-level fields.
  const attributes = new Map<
    number,
    { types: Map<string, string | null>; annotated: Set<string> }
  >();
  const selfPrefix = (name: string) =>
    spec.selfNames.find(
      (self) => name.startsWith(`${self}.`) && !name.includes('.', self.length + 1),
    );
  scopes.forEach((scope, index) => {
    const owner = classOf(index);
    if (owner < 0) return;
    let attrs = attributes.get(owner);
    if (!attrs) attributes.set(owner, (attrs = { types: new Map(), annotated: new Set() }));
    for (const [name, type] of scope.types) {
      const self = selfPrefix(name);
      const attribute = self ? name.slice(self.length + 1) : owner === index ? name : null;
      if (!attribute) continue;
      const resolved =
        type === null ? null : type.startsWith('=') ? lookup(index, type.slice(1)) : type;
      const declared = scope.annotated.has(name);
      if (resolved !== null) bindType(attrs, { name: attribute, type: resolved, declared });
      else if (!attrs.annotated.has(attribute)) attrs.types.set(attribute, null);
    }
  });

  // An attribute the class does not assign may come from a base class defined in this file.
  const classIndex = new Map<string, number>();
  raw.forEach((definition, index) => {
    if (isContainer[index]) classIndex.set(definition.name, index);
  });
  const attributeType = (owner: number, attribute: string, depth: number): string | null => {
    if (owner < 0 || depth > 4) return null;
    const own = attributes.get(owner)?.types.get(attribute);
    if (own !== undefined) return own;
    for (const base of spec.bases(raw[owner]!.node)) {
      const index = classIndex.get(base.replace(/[[<(][\s\S]*$/, '').trim());
      if (index !== undefined && index !== owner) {
        const inherited = attributeType(index, attribute, depth + 1);
        if (inherited !== null) return inherited;
      }
    }
    return null;
  };

  // `self.app.config`, `ctx.app.session`: each step after the first is a typed attribute of a
  // class this file defines, at most MAX_ATTRIBUTE_STEPS deep.
  const classOfType = (type: string): number | undefined => {
    const name = typeName(type.replace(/\(\)$/, ''));
    return name === null ? undefined : classIndex.get(name);
  };
  // `ctx = self.context_class(…)` with `context_class: type[Context]`: the call builds a Context.
  const constructedThroughAttribute = (owner: number, type: string): string | null => {
    const call = /^([A-Za-z_$][\w$]*)\.([A-Za-z_$][\w$]*)\(\)$/.exec(type);
    if (!call || !spec.selfNames.includes(call[1]!)) return null;
    const attribute = attributeType(owner, call[2]!, 0);
    const classType = attribute && /^(?:[\w$]+\.)*(?:type|Type)\[(.+)\]$/.exec(attribute.trim());
    return classType ? classType[1]! : null;
  };
  const receiverChainType = (index: number, owner: number, receiver: string): string | null => {
    const self = spec.selfNames.find((name) => receiver.startsWith(`${name}.`));
    const steps = (self ? receiver.slice(self.length + 1) : receiver).split('.');
    if (steps.length > MAX_ATTRIBUTE_STEPS + 1 || !steps.every((step) => IDENTIFIER.test(step)))
      return null;
    let type = self ? attributeType(owner, steps[0]!, 0) : lookup(index, steps[0]!);
    if (type !== null) type = constructedThroughAttribute(owner, type) ?? type;
    for (const step of steps.slice(1)) {
      const holder = type === null ? undefined : classOfType(type);
      type = holder === undefined ? null : attributeType(holder, step, 0);
    }
    return type;
  };

  const definedNames = new Set(raw.map((definition) => definition.name));
  const imported = new Set<string>();
  for (const scope of [moduleScope, ...scopes])
    for (const binding of scope.imports) imported.add(binding.local);

  [-1, ...scopes.keys()].forEach((index) => {
    const scope = scopeAt(index);
    const owner = classOf(index);
    for (let i = 0; i < scope.calls.length; i++) {
      const call = scope.calls[i]!;
      if (!call.receiver || call.receiverType) continue;
      const type =
        blockType(scope, call.receiver, call.line) ??
        receiverChainType(index, owner, call.receiver);
      if (type) scope.calls[i] = { ...call, receiverType: type };
    }
    for (const reference of scope.references) {
      const receiver = reference.receiver;
      const named = receiver
        ? spec.selfNames.includes(receiver) || imported.has(receiver)
        : (definedNames.has(reference.name) || imported.has(reference.name)) &&
          !scope.declared.has(reference.name) &&
          !scope.types.has(reference.name);
      if (named) scope.calls.push(reference);
    }
  });
}

/** The type a block gives `name` at `line` (`except Foo as e:` for the handler's lines). */
function blockType(scope: ScopeFacts, name: string, line: number): string | null {
  const binding = scope.blockTypes.find(
    (block) => block.name === name && block.lines![0] <= line && line <= block.lines![1],
  );
  return binding?.type ?? null;
}

function cleanName(text: string): string {
  return text.replace(/^#/, '').trim();
}

function ownerName(text: string): string {
  return text.replace(/\s+/g, '').replace(/\.prototype$/, '');
}

/** `exports.f = …` and `module.exports.f = …` define module functions, not methods of an object. */
function normalizeOwner(owner: string | null): string | null {
  if (!owner || owner === 'exports' || owner === 'module.exports' || owner === 'module')
    return null;
  return owner;
}

function emptyScope(): ScopeFacts {
  return {
    calls: [],
    raises: [],
    errorStrings: [],
    mutations: [],
    imports: [],
    declared: new Set(),
    globals: new Set(),
    importLines: [],
    types: new Map(),
    annotated: new Set(),
    blockTypes: [],
    references: [],
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}

function truncateDoc(doc: string | null, limit: number): string | null {
  if (!doc) return null;
  const trimmed = doc.trim();
  return trimmed ? truncate(trimmed, limit) : null;
}

function oneLine(text: string, max: number): string {
  return truncate(text.replace(/\s+/g, ' ').trim(), max);
}

export function countLines(source: string): number {
  if (!source) return 0;
  let lines = 1;
  for (let i = source.indexOf('\n'); i >= 0; i = source.indexOf('\n', i + 1)) lines++;
  return source.endsWith('\n') ? lines - 1 : lines;
}
