import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { headerBefore, leadingFileComment, type LanguageSpec } from './spec';

/**
 * C#. Methods, constructors and local functions are definitions; fields, properties, events and
 * enum members are the class chunk's member lines (code in property accessors belongs to the
 * class). Namespaces only group declarations and are not definitions. `this` and `base` are
 * anonymous nodes in this grammar, hence the `_` wildcards where a receiver may be one of them.
 */
const THIS_MEMBER =
  '(member_access_expression expression: "this" @mutation.object name: (identifier) @mutation.attribute)';
const CALLED_NAME = '[(identifier) @call.name (generic_name (identifier) @call.name)]';

const QUERY = `
(class_declaration name: (identifier) @name) @definition.class
(record_declaration name: (identifier) @name) @definition.class
(struct_declaration name: (identifier) @name) @definition.struct
(interface_declaration name: (identifier) @name) @definition.interface
(enum_declaration name: (identifier) @name) @definition.enum
(method_declaration name: (identifier) @name) @definition.function
(constructor_declaration name: (identifier) @name) @definition.function
(local_function_statement name: (identifier) @name) @definition.function

(invocation_expression function: ${CALLED_NAME}) @call
(invocation_expression function: (member_access_expression expression: _ @call.receiver name: ${CALLED_NAME})) @call
(invocation_expression
  function: (conditional_access_expression condition: (_) @call.receiver (member_binding_expression name: ${CALLED_NAME}))) @call
(object_creation_expression type: ${CALLED_NAME}) @call
(object_creation_expression type: (qualified_name qualifier: (_) @call.receiver name: ${CALLED_NAME})) @call

(throw_statement (object_creation_expression type: (_) @raise.type arguments: (argument_list)? @raise.args)) @raise
(throw_expression (object_creation_expression type: (_) @raise.type arguments: (argument_list)? @raise.args)) @raise

(invocation_expression
  function: (member_access_expression name: (identifier) @errorlog.method)
  arguments: (argument_list) @errorlog.args
  (#match? @errorlog.method "^(LogError|LogCritical|LogWarning|Error|Fatal|Critical|Warn|Warning)$")) @errorlog

(field_declaration (variable_declaration type: (_) . (variable_declarator name: (identifier) @binding.name))) @binding
(event_field_declaration (variable_declaration type: (_) . (variable_declarator name: (identifier) @binding.name))) @binding
(property_declaration name: (identifier) @binding.name) @binding
(enum_member_declaration name: (identifier) @binding.name) @binding
(assignment_expression left: ${THIS_MEMBER}) @mutation
(assignment_expression left: (element_access_expression expression: ${THIS_MEMBER})) @mutation
(postfix_unary_expression ${THIS_MEMBER}) @mutation
(prefix_unary_expression ${THIS_MEMBER}) @mutation
(invocation_expression function: (member_access_expression expression: ${THIS_MEMBER} name: (identifier) @mutation.method)) @mutation

(using_directive) @import
`;

const MUTATING_METHODS = new Set([
  'Add',
  'AddRange',
  'Insert',
  'InsertRange',
  'Remove',
  'RemoveAt',
  'RemoveAll',
  'RemoveRange',
  'Clear',
  'Push',
  'Pop',
  'Enqueue',
  'Dequeue',
  'Sort',
  'Reverse',
  'TryAdd',
  'TryRemove',
  'AddOrUpdate',
  'GetOrAdd',
  'Append',
  'AppendLine',
  'Set',
]);

function stringValue(node: Node): string | null {
  switch (node.type) {
    case 'string_literal':
      return node.text.slice(1, -1);
    case 'verbatim_string_literal':
      return node.text.slice(2, -1).replaceAll('""', '"');
    case 'raw_string_literal':
    case 'interpolated_string_expression':
      return node.text.replace(/^[$@]*"+|"+$/g, '');
    default:
      return null;
  }
}

/**
 * `using A.B;` and `using static A.B.C;` bring a namespace's (or type's) members into scope;
 * `using X = A.B;` binds the alias `X`.
 */
function imports(statement: Node): ImportBinding[] {
  const target = statement.lastNamedChild;
  if (!target) return [];
  const line = statement.startPosition.row + 1;
  const alias = statement.childForFieldName('name')?.text;
  if (alias) return [{ local: alias, module: target.text, imported: null, kind: 'module', line }];
  return [{ local: '*', module: target.text, imported: '*', kind: 'wildcard', line }];
}

/** The base class and interfaces, without type arguments. */
function bases(definition: Node): string[] {
  const list = definition.namedChildren.find((child) => child.type === 'base_list');
  return (list?.namedChildren ?? []).map((type) => type.text.replace(/<[\s\S]*>$/, ''));
}

/** Everything before the body (a block or `=>`); abstract and interface members end at their semicolon. */
function signature(definition: Node): string {
  return headerBefore(definition, definition.childForFieldName('body')).replace(/;$/, '');
}

export const csharp: LanguageSpec = {
  id: 'csharp',
  grammar: 'c-sharp',
  extensions: ['.cs'],
  query: QUERY,
  selfNames: ['this'],
  wrapperTypes: [],
  commentTypes: ['comment'],
  containerKinds: ['class', 'struct', 'interface', 'enum'],
  moduleSystem: 'none',
  mutatingMethods: MUTATING_METHODS,
  docstring: () => null,
  moduleDocstring: (root) => leadingFileComment(root, ['comment']),
  signature,
  imports,
  bases,
  stringValue,
};
