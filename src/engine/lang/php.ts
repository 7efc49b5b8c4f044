import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { commentText, headerBefore, type LanguageSpec } from './spec';

/**
 * PHP. Methods live in class, interface, trait and enum bodies; properties, constants, enum cases
 * and `use Trait;` are the class chunk's member lines. Globals follow Python's rule: a function
 * assigns a file-level `$name` only after declaring it `global $name`.
 */
const CALLED_NAME = '[(name) @call.name (qualified_name (name) @call.name)]';
const THIS_PROPERTY =
  '(member_access_expression object: (variable_name) @mutation.object name: (name) @mutation.attribute)';
const STATIC_PROPERTY =
  '(scoped_property_access_expression scope: (_) @mutation.object name: (variable_name) @mutation.attribute)';
const PROPERTY = `[${THIS_PROPERTY} ${STATIC_PROPERTY}]`;

const QUERY = `
(class_declaration name: (name) @name) @definition.class
(interface_declaration name: (name) @name) @definition.interface
(trait_declaration name: (name) @name) @definition.trait
(enum_declaration name: (name) @name) @definition.enum
(method_declaration name: (name) @name) @definition.function
(function_definition name: (name) @name) @definition.function

(function_call_expression function: ${CALLED_NAME}) @call
(member_call_expression object: (_) @call.receiver name: (name) @call.name) @call
(nullsafe_member_call_expression object: (_) @call.receiver name: (name) @call.name) @call
(scoped_call_expression scope: (_) @call.receiver name: (name) @call.name) @call
(object_creation_expression ${CALLED_NAME}) @call

(throw_expression
  (object_creation_expression [(name) @raise.type (qualified_name (name) @raise.type)] (arguments)? @raise.args)) @raise

(member_call_expression
  name: (name) @errorlog.method
  arguments: (arguments) @errorlog.args
  (#match? @errorlog.method "^(error|critical|alert|emergency|warning)$")) @errorlog
(scoped_call_expression
  name: (name) @errorlog.method
  arguments: (arguments) @errorlog.args
  (#match? @errorlog.method "^(error|critical|alert|emergency|warning)$")) @errorlog
(function_call_expression
  function: (name) @errorlog.function
  arguments: (arguments) @errorlog.args
  (#match? @errorlog.function "^(error_log|trigger_error)$")) @errorlog

(property_declaration (property_element name: (variable_name) @binding.name)) @binding
(const_declaration (const_element (name) @binding.name)) @binding
(enum_case name: (name) @binding.name) @binding
(use_declaration . (name) @binding.name) @binding
(global_declaration (variable_name) @global.name) @global
(assignment_expression left: (variable_name) @mutation.declares) @mutation
(augmented_assignment_expression left: (variable_name) @mutation.name) @mutation
(update_expression argument: (variable_name) @mutation.name) @mutation
(assignment_expression left: (subscript_expression . (variable_name) @mutation.name)) @mutation
(assignment_expression left: ${PROPERTY}) @mutation
(augmented_assignment_expression left: ${PROPERTY}) @mutation
(update_expression argument: ${PROPERTY}) @mutation
(assignment_expression left: (subscript_expression . ${THIS_PROPERTY})) @mutation
(member_call_expression object: ${THIS_PROPERTY} name: (name) @mutation.method) @mutation

(namespace_use_declaration) @import
(expression_statement [(require_expression) (require_once_expression) (include_expression) (include_once_expression)]) @import
`;

const MUTATING_METHODS = new Set([
  'add',
  'set',
  'put',
  'push',
  'pop',
  'shift',
  'unshift',
  'append',
  'prepend',
  'remove',
  'forget',
  'clear',
  'offsetSet',
  'offsetUnset',
  'attach',
  'detach',
  'enqueue',
  'dequeue',
  'insert',
  'merge',
]);

function stringValue(node: Node): string | null {
  if (node.type === 'string' || node.type === 'encapsed_string') return node.text.slice(1, -1);
  return null;
}

/**
 * `use A\B;`, `use A\B as C;`, `use A\{B, C as D};` (also `use function` / `use const`) bind the
 * last name or the alias; `require 'x.php'` and its variants load a whole file.
 */
function imports(statement: Node): ImportBinding[] {
  const line = statement.startPosition.row + 1;
  if (statement.type === 'expression_statement') {
    const path = statement.descendantsOfType(['string', 'encapsed_string'])[0];
    const module = path ? stringValue(path) : null;
    return module ? [{ local: '*', module, imported: '*', kind: 'wildcard', line }] : [];
  }
  const group = statement.childForFieldName('body');
  const prefix = group
    ? `${statement.namedChildren.find((child) => child.type === 'namespace_name')?.text ?? ''}\\`
    : '';
  return (group ?? statement).namedChildren.flatMap((clause): ImportBinding[] => {
    if (clause.type !== 'namespace_use_clause') return [];
    const alias = clause.childForFieldName('alias');
    const target = clause.namedChildren.find((child) => child !== alias);
    if (!target) return [];
    const module = `${prefix}${target.text}`.replace(/^\\/, '');
    const local = alias?.text ?? module.slice(module.lastIndexOf('\\') + 1);
    return [{ local, module, imported: null, kind: 'module', line }];
  });
}

/** The extended class and implemented interfaces. */
function bases(definition: Node): string[] {
  return definition.namedChildren
    .filter((child) => child.type === 'base_clause' || child.type === 'class_interface_clause')
    .flatMap((clause) => clause.namedChildren.map((type) => type.text.replace(/^\\/, '')));
}

/** Everything before the body; interface and abstract methods end at their semicolon. */
function signature(definition: Node): string {
  return headerBefore(definition, definition.childForFieldName('body')).replace(/;$/, '');
}

/** The file's first comment after `<?php`, unless it states a licence. */
function moduleDocstring(root: Node): string | null {
  const first = root.namedChildren.find((child) => child.type !== 'php_tag');
  if (first?.type !== 'comment') return null;
  const text = commentText(first.text);
  return /copyright|licen[cs]e|spdx/i.test(text) ? null : text;
}

export const php: LanguageSpec = {
  id: 'php',
  grammar: 'php',
  extensions: ['.php'],
  query: QUERY,
  selfNames: ['$this', 'self', 'static'],
  wrapperTypes: [],
  commentTypes: ['comment'],
  containerKinds: ['class', 'interface', 'trait', 'enum'],
  moduleSystem: 'none',
  mutatingMethods: MUTATING_METHODS,
  docstring: () => null,
  moduleDocstring,
  signature,
  imports,
  bases,
  stringValue,
};
