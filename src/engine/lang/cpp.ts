import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { headerBefore, leadingFileComment, type LanguageSpec } from './spec';

/**
 * C++, also used for C (the C++ grammar parses C sources and headers). Methods defined in a class
 * body nest in it; out-of-class definitions take the qualifier as `@owner`, so `void Foo::bar() {}`
 * is `Foo.bar` (for `a::Foo::bar` the innermost qualifier, up to three levels). Member
 * declarations, fields and file-level prototypes are member lines rather than definitions, so a
 * method declared in its class and defined outside it is one definition.
 */
const MEMBER_NAME = '[(identifier) (destructor_name) (operator_name)] @name';
/** Alternatives are listed flat: a bracketed alternation nested directly in another never matched. */
const PLAIN_NAME =
  '(identifier) @name (field_identifier) @name (destructor_name) @name (operator_name) @name';
const SCOPE = '[(namespace_identifier) @owner (template_type name: (type_identifier) @owner)]';
const QUALIFIED_ONCE = `(qualified_identifier scope: ${SCOPE} name: ${MEMBER_NAME})`;
const QUALIFIED_TWICE = `(qualified_identifier name: ${QUALIFIED_ONCE})`;
const QUALIFIED_THRICE = `(qualified_identifier name: ${QUALIFIED_TWICE})`;
const FUNCTION_DECLARATOR = `(function_declarator declarator: [${PLAIN_NAME} ${QUALIFIED_ONCE} ${QUALIFIED_TWICE} ${QUALIFIED_THRICE}])`;
/** `T f()`, `T* f()`, `T& f()`: the function declarator may sit under a pointer or reference. */
const DECLARATOR = `[
  ${FUNCTION_DECLARATOR}
  (pointer_declarator declarator: ${FUNCTION_DECLARATOR})
  (reference_declarator ${FUNCTION_DECLARATOR})]`;

const FIELD =
  '(field_expression argument: (_) @mutation.object field: (field_identifier) @mutation.attribute)';

const QUERY = `
(function_definition declarator: ${DECLARATOR}) @definition.function
(class_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.class
(struct_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(union_specifier name: (type_identifier) @name body: (field_declaration_list)) @definition.struct
(enum_specifier name: (type_identifier) @name body: (enumerator_list)) @definition.enum
(type_definition
  type: [(struct_specifier !name body: (_)) (union_specifier !name body: (_))]
  declarator: (type_identifier) @name) @definition.struct
(type_definition type: (enum_specifier !name body: (_)) declarator: (type_identifier) @name) @definition.enum

(call_expression function: (identifier) @call.name) @call
(call_expression function: (template_function name: (identifier) @call.name)) @call
(call_expression function: (field_expression argument: (_) @call.receiver field: (field_identifier) @call.name)) @call
(call_expression function: (field_expression argument: (_) @call.receiver field: (template_method name: (field_identifier) @call.name))) @call
(call_expression function: (qualified_identifier scope: (_) @call.receiver name: (identifier) @call.name)) @call
(call_expression function: (qualified_identifier scope: (_) @call.receiver name: (template_function name: (identifier) @call.name))) @call
(call_expression function: (qualified_identifier name: (qualified_identifier scope: (_) @call.receiver name: (identifier) @call.name))) @call
(new_expression type: (type_identifier) @call.name) @call
(new_expression type: (template_type name: (type_identifier) @call.name)) @call
(new_expression type: (qualified_identifier scope: (_) @call.receiver name: (type_identifier) @call.name)) @call

(throw_statement
  (call_expression
    function: [(identifier) @raise.type (qualified_identifier name: (identifier) @raise.type)]
    arguments: (argument_list) @raise.args)) @raise
(throw_statement (new_expression type: (_) @raise.type arguments: (argument_list)? @raise.args)) @raise

(call_expression
  function: [(field_expression field: (field_identifier) @errorlog.method) (qualified_identifier name: (identifier) @errorlog.method)]
  arguments: (argument_list) @errorlog.args
  (#match? @errorlog.method "^(error|critical|fatal|warn)$")) @errorlog

(field_declaration type: (_) . declarator: (_) @binding.name) @binding
(field_declaration_list (declaration declarator: (function_declarator) @binding.name) @binding)
(translation_unit (declaration declarator: (function_declarator) @binding.name) @binding)
(declaration_list (declaration declarator: (function_declarator) @binding.name) @binding)
(enumerator name: (identifier) @binding.name) @binding
(declaration declarator: (identifier) @binding.name) @binding
(declaration declarator: (init_declarator declarator: (identifier) @binding.name)) @binding
(assignment_expression left: (identifier) @mutation.name) @mutation
(update_expression argument: (identifier) @mutation.name) @mutation
(assignment_expression left: ${FIELD}) @mutation
(assignment_expression left: (subscript_expression argument: ${FIELD})) @mutation
(update_expression argument: ${FIELD}) @mutation
(call_expression function: (field_expression argument: ${FIELD} field: (field_identifier) @mutation.method)) @mutation

(preproc_include) @import
`;

const MUTATING_METHODS = new Set([
  'push_back',
  'emplace_back',
  'push_front',
  'emplace_front',
  'pop_back',
  'pop_front',
  'push',
  'pop',
  'emplace',
  'insert',
  'insert_or_assign',
  'try_emplace',
  'erase',
  'clear',
  'resize',
  'reserve',
  'assign',
  'append',
  'swap',
  'reset',
  'release',
  'sort',
  'splice',
  'merge',
  'remove',
  'remove_if',
]);

function stringValue(node: Node): string | null {
  switch (node.type) {
    case 'string_literal':
      return node.text.replace(/^[LuU8]*"|"$/g, '');
    case 'raw_string_literal':
      return node.namedChildren.find((child) => child.type === 'raw_string_content')?.text ?? '';
    case 'concatenated_string':
      return node.namedChildren.map((part) => stringValue(part) ?? '').join('');
    default:
      return null;
  }
}

/** `#include "x.h"` and `#include <map>` bring in everything the header declares. */
function imports(statement: Node): ImportBinding[] {
  const path = statement.childForFieldName('path');
  if (!path) return [];
  const module =
    path.type === 'system_lib_string' ? path.text.slice(1, -1) : (stringValue(path) ?? path.text);
  return [
    { local: '*', module, imported: '*', kind: 'wildcard', line: statement.startPosition.row + 1 },
  ];
}

/** Base classes without access specifiers or template arguments. */
function bases(definition: Node): string[] {
  const clause = definition.namedChildren.find((child) => child.type === 'base_class_clause');
  return (clause?.namedChildren ?? [])
    .filter((child) => child.type !== 'access_specifier')
    .map((child) => child.text.replace(/<[\s\S]*>$/, ''));
}

/** Everything before the body; a constructor's member initializer list is left out. */
function signature(definition: Node): string {
  const initializers = definition.namedChildren.find(
    (child) => child.type === 'field_initializer_list',
  );
  return headerBefore(definition, initializers ?? definition.childForFieldName('body')).replace(
    /;$/,
    '',
  );
}

export const cpp: LanguageSpec = {
  id: 'cpp',
  grammar: 'cpp',
  extensions: ['.cpp', '.cc', '.cxx', '.hpp', '.hh', '.hxx', '.c', '.h'],
  query: QUERY,
  selfNames: ['this'],
  wrapperTypes: ['template_declaration'],
  commentTypes: ['comment'],
  containerKinds: ['class', 'struct', 'enum'],
  moduleSystem: 'none',
  mutatingMethods: MUTATING_METHODS,
  docstring: () => null,
  moduleDocstring: (root) => leadingFileComment(root, ['comment']),
  signature,
  imports,
  bases,
  stringValue,
};
