import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { commentText, firstLine, leadingFileComment, type LanguageSpec } from './spec';

/**
 * Ruby. Classes and modules are containers (a module is recorded with kind `class`: kind `module`
 * is the file's own fact); `def` and `def self.x` are methods of the enclosing one, including
 * those in `class << self`. `Foo.new(…)` is a call of `Foo`, as `new Foo()` is elsewhere.
 *
 * Mutations: `self.x = …` is recorded as `self.x`. Instance-variable assignments (`@x = …`) are
 * not: the extractor only credits an object's attribute when a receiver node names `self`, and an
 * instance variable is a single token.
 */
const NAMED_CONSTANT = '[(constant) (scope_resolution)]';

const QUERY = `
(class name: ${NAMED_CONSTANT} @name) @definition.class
(module name: ${NAMED_CONSTANT} @name) @definition.class
(method name: (_) @name) @definition.function
(singleton_method name: (_) @name) @definition.function

(call receiver: (_) @call.receiver method: (identifier) @call.name (#not-eq? @call.name "new")) @call
(call !receiver method: (identifier) @call.name (#not-match? @call.name "^(raise|fail|require|require_relative)$")) @call
(call receiver: (constant) @call.name method: (identifier) @call.new (#eq? @call.new "new")) @call
(call receiver: (scope_resolution scope: (_) @call.receiver name: (constant) @call.name) method: (identifier) @call.new (#eq? @call.new "new")) @call

(call
  !receiver
  method: (identifier) @raise.method
  arguments: (argument_list . ${NAMED_CONSTANT} @raise.type . (_)? @raise.args)
  (#match? @raise.method "^(raise|fail)$")) @raise
(call
  !receiver
  method: (identifier) @raise.method
  arguments: (argument_list . (call receiver: ${NAMED_CONSTANT} @raise.type method: (identifier) @raise.new arguments: (argument_list)? @raise.args))
  (#match? @raise.method "^(raise|fail)$")
  (#eq? @raise.new "new")) @raise
(call
  !receiver
  method: (identifier) @raise.method
  arguments: (argument_list . (string) @raise.args)
  (#match? @raise.method "^(raise|fail)$")) @raise

(call
  method: (identifier) @errorlog.method
  arguments: (argument_list) @errorlog.args
  (#match? @errorlog.method "^(error|fatal|warn)$")) @errorlog

(assignment left: (constant) @binding.name) @binding
(call
  !receiver
  method: (identifier) @binding.name
  (#match? @binding.name "^(attr_reader|attr_writer|attr_accessor|include|extend|prepend)$")) @binding
(program (assignment left: (global_variable) @binding.name) @binding)
(assignment left: (global_variable) @mutation.name) @mutation
(operator_assignment left: (global_variable) @mutation.name) @mutation
(assignment left: (instance_variable) @mutation.self) @mutation
(operator_assignment left: (instance_variable) @mutation.self) @mutation
(assignment left: (call receiver: (self) @mutation.object method: (identifier) @mutation.attribute)) @mutation
(operator_assignment left: (call receiver: (self) @mutation.object method: (identifier) @mutation.attribute)) @mutation
(call receiver: (instance_variable) @mutation.self method: (identifier) @mutation.method) @mutation

(call
  !receiver
  method: (identifier) @import.method
  arguments: (argument_list . (string))
  (#match? @import.method "^(require|require_relative|load)$")) @import
`;

/** Methods of Array, Hash and String that change their receiver (`@items.push(x)`). */
const MUTATING_METHODS = new Set([
  'push',
  'pop',
  'shift',
  'unshift',
  'delete',
  'clear',
  'store',
  'merge!',
  'update',
  'concat',
  'insert',
  '<<',
  'replace',
  'sort!',
  'map!',
  'reject!',
  'select!',
  'compact!',
  'uniq!',
]);

/**
 * The text between a string's delimiters, interpolations included. `raise Error, "message"` hands
 * over the message itself as the raise's arguments, so its first part stands for the whole string.
 */
function stringValue(node: Node): string | null {
  if (node.type === 'string_content' && node.parent?.type === 'string')
    return stringValue(node.parent);
  if (node.type !== 'string') return null;
  const open = node.firstChild;
  const close = node.lastChild;
  if (!open || !close || open === close) return '';
  return node.text.slice(open.endIndex - node.startIndex, close.startIndex - node.startIndex);
}

/** `require 'json'` and `require_relative 'store/base'` load a file's definitions into the program. */
function imports(statement: Node): ImportBinding[] {
  const argument = statement.childForFieldName('arguments')?.firstNamedChild;
  const module = argument ? stringValue(argument) : null;
  if (!module) return [];
  return [
    { local: '*', module, imported: '*', kind: 'wildcard', line: statement.startPosition.row + 1 },
  ];
}

function bases(definition: Node): string[] {
  const superclass = definition.childForFieldName('superclass');
  return superclass ? superclass.namedChildren.map((child) => child.text) : [];
}

/**
 * `def name(params)`, `class Name < Base`: the header ends with the parameters or superclass, since
 * comments before the first statement sit between it and the body.
 */
function signature(definition: Node): string {
  const last = ['parameters', 'superclass', 'name']
    .map((field) => definition.childForFieldName(field))
    .find(Boolean);
  const text = last
    ? definition.text.slice(0, last.endIndex - definition.startIndex)
    : firstLine(definition.text);
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The grammar leaves the comments before a body's first statement outside the body, so the first
 * method of a class (or first class of a module) finds its comment above the body, not beside it.
 */
function docstring(definition: Node): string | null {
  const body = definition.parent;
  if (body?.type !== 'body_statement' || definition.previousNamedSibling) return null;
  const lines: string[] = [];
  let boundaryRow = definition.startPosition.row;
  for (
    let previous = body.previousNamedSibling;
    previous?.type === 'comment';
    previous = previous.previousNamedSibling
  ) {
    if (previous.endPosition.row < boundaryRow - 2) break;
    lines.unshift(commentText(previous.text));
    boundaryRow = previous.startPosition.row;
  }
  return lines.join('\n').trim() || null;
}

export const ruby: LanguageSpec = {
  id: 'ruby',
  grammar: 'ruby',
  extensions: ['.rb'],
  query: QUERY,
  selfNames: ['self'],
  wrapperTypes: [],
  commentTypes: ['comment'],
  containerKinds: ['class'],
  moduleSystem: 'none',
  mutatingMethods: MUTATING_METHODS,
  docstring,
  moduleDocstring: (root) => leadingFileComment(root, ['comment']),
  signature,
  imports,
  bases,
  stringValue,
};
