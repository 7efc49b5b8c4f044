import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { headerBefore, leadingFileComment, type LanguageSpec } from './spec';

/**
 * Java. Methods and constructors live in class, interface, enum and record bodies; fields and enum
 * constants are the class chunk's member lines. Assignments to a field without `this.` cannot be
 * told from local variables by syntax, so only `this.x` counts as a mutation of the object (and
 * `Type.x` as one of `Type`, when that class is declared in the same file).
 */
const FIELD_ACCESS =
  '(field_access object: (_) @mutation.object field: (identifier) @mutation.attribute)';

const QUERY = `
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(interface_declaration name: (identifier) @name) @definition.interface
(annotation_type_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(compact_constructor_declaration name: (identifier) @name) @definition.function

(method_invocation object: (_) @call.receiver name: (identifier) @call.name) @call
(method_invocation !object name: (identifier) @call.name) @call
(object_creation_expression type: (type_identifier) @call.name) @call
(object_creation_expression type: (generic_type (type_identifier) @call.name)) @call
(object_creation_expression type: (scoped_type_identifier (_) @call.receiver . (type_identifier) @call.name .)) @call
(object_creation_expression
  type: (generic_type (scoped_type_identifier (_) @call.receiver . (type_identifier) @call.name .))) @call

(throw_statement (object_creation_expression type: (_) @raise.type arguments: (argument_list) @raise.args)) @raise

(method_invocation
  name: (identifier) @errorlog.method
  arguments: (argument_list) @errorlog.args
  (#match? @errorlog.method "^(error|warn|warning|severe|fatal)$")) @errorlog

(field_declaration type: (_) . declarator: (variable_declarator name: (identifier) @binding.name)) @binding
(constant_declaration type: (_) . declarator: (variable_declarator name: (identifier) @binding.name)) @binding
(enum_constant name: (identifier) @binding.name) @binding
(assignment_expression left: ${FIELD_ACCESS}) @mutation
(assignment_expression left: (array_access array: ${FIELD_ACCESS})) @mutation
(update_expression ${FIELD_ACCESS}) @mutation
(method_invocation object: ${FIELD_ACCESS} name: (identifier) @mutation.method) @mutation

(import_declaration) @import
`;

const MUTATING_METHODS = new Set([
  'add',
  'addAll',
  'put',
  'putAll',
  'putIfAbsent',
  'remove',
  'removeAll',
  'removeIf',
  'retainAll',
  'clear',
  'set',
  'push',
  'pop',
  'offer',
  'poll',
  'addFirst',
  'addLast',
  'removeFirst',
  'removeLast',
  'sort',
  'append',
  'insert',
  'delete',
  'setLength',
  'compute',
  'computeIfAbsent',
  'computeIfPresent',
  'merge',
  'replaceAll',
]);

function stringValue(node: Node): string | null {
  if (node.type !== 'string_literal') return null;
  return node.text.startsWith('"""') ? node.text.slice(3, -3) : node.text.slice(1, -1);
}

/**
 * `import a.b.C;` binds `C` to the class `a.b.C`; `import static a.b.C.m;` binds the member `m`
 * of `a.b.C`; `import a.b.*;` and `import static a.b.C.*;` bring in everything.
 */
function imports(statement: Node): ImportBinding[] {
  const path = statement.namedChildren.find(
    (child) => child.type === 'scoped_identifier' || child.type === 'identifier',
  );
  if (!path) return [];
  const line = statement.startPosition.row + 1;
  const module = path.text.replace(/\s+/g, '');
  if (statement.namedChildren.some((child) => child.type === 'asterisk')) {
    return [{ local: '*', module, imported: '*', kind: 'wildcard', line }];
  }
  const dot = module.lastIndexOf('.');
  const local = module.slice(dot + 1);
  if (statement.children.some((child) => child.type === 'static') && dot > 0) {
    return [{ local, module: module.slice(0, dot), imported: local, kind: 'named', line }];
  }
  return [{ local, module, imported: null, kind: 'module', line }];
}

/** The superclass and implemented interfaces (or, for an interface, the extended ones), without type arguments. */
function bases(definition: Node): string[] {
  const types: Node[] = [];
  for (const clause of definition.namedChildren) {
    if (clause.type === 'superclass') types.push(...clause.namedChildren);
    if (clause.type === 'super_interfaces' || clause.type === 'extends_interfaces') {
      types.push(...clause.descendantsOfType('type_list').flatMap((list) => list.namedChildren));
    }
  }
  return types.map((type) => type.text.replace(/<[\s\S]*>$/, ''));
}

/** Everything before the body; abstract and interface methods end at their semicolon. */
function signature(definition: Node): string {
  return headerBefore(definition, definition.childForFieldName('body')).replace(/;$/, '');
}

const COMMENT_TYPES = ['block_comment', 'line_comment'];

export const java: LanguageSpec = {
  id: 'java',
  grammar: 'java',
  extensions: ['.java'],
  query: QUERY,
  selfNames: ['this'],
  wrapperTypes: [],
  commentTypes: COMMENT_TYPES,
  containerKinds: ['class', 'interface', 'enum'],
  moduleSystem: 'java',
  mutatingMethods: MUTATING_METHODS,
  docstring: () => null,
  moduleDocstring: (root) => leadingFileComment(root, COMMENT_TYPES),
  signature,
  imports,
  bases,
  stringValue,
};
