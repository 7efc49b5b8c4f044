import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { commentText, headerBefore, type LanguageSpec } from './spec';

/**
 * Go. Methods are declared outside their type, so the receiver type is the method's `@owner`
 * (`func (s *Server) Serve()` is `Server.Serve`). Every named type is a class-level container;
 * struct fields and embedded types are its member lines. Receivers are named per method, so there
 * is no fixed `self` name: field assignments through a receiver are not recorded as mutations.
 */
const RECEIVER_TYPE = `[
  (type_identifier) @owner
  (pointer_type (type_identifier) @owner)
  (generic_type type: (type_identifier) @owner)
  (pointer_type (generic_type type: (type_identifier) @owner))]`;

/** Every type expression a `type_spec` can name other than a struct or an interface. */
const OTHER_TYPE = `[(type_identifier) (qualified_type) (generic_type) (pointer_type) (function_type)
  (map_type) (slice_type) (array_type) (channel_type) (parenthesized_type) (negated_type)]`;

const SELECTOR_TARGET =
  '(selector_expression operand: (identifier) @mutation.object field: (field_identifier) @mutation.attribute)';

const QUERY = `
(function_declaration name: (identifier) @name) @definition.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: ${RECEIVER_TYPE}))
  name: (field_identifier) @name) @definition.function
(type_spec name: (type_identifier) @name type: (struct_type)) @definition.struct
(type_spec name: (type_identifier) @name type: (interface_type)) @definition.interface
(type_spec name: (type_identifier) @name type: ${OTHER_TYPE}) @definition.type
(type_alias name: (type_identifier) @name) @definition.type
(method_elem name: (field_identifier) @name) @definition.function

(call_expression function: (identifier) @call.name) @call
(call_expression function: (selector_expression operand: (_) @call.receiver field: (field_identifier) @call.name)) @call
(composite_literal type: (type_identifier) @call.name) @call
(composite_literal type: (generic_type type: (type_identifier) @call.name)) @call
(composite_literal type: (qualified_type package: (package_identifier) @call.receiver name: (type_identifier) @call.name)) @call

(call_expression function: (identifier) @raise.type arguments: (argument_list) @raise.args (#eq? @raise.type "panic")) @raise

(call_expression
  function: (selector_expression operand: (identifier) @errorlog.package field: (field_identifier) @errorlog.method)
  arguments: (argument_list) @errorlog.args
  (#eq? @errorlog.package "errors")
  (#eq? @errorlog.method "New")) @errorlog
(call_expression
  function: (selector_expression field: (field_identifier) @errorlog.method)
  arguments: (argument_list) @errorlog.args
  (#match? @errorlog.method "^(Errorf|Error|Fatal|Fatalf|Fatalln|Panic|Panicf|Panicln|Warn|Warnf|Warning)$")) @errorlog

(var_spec . name: (identifier) @binding.name) @binding
(const_spec . name: (identifier) @binding.name) @binding
(field_declaration . name: (field_identifier) @binding.name) @binding
(field_declaration !name type: (_) @binding.name) @binding
(short_var_declaration left: (expression_list (identifier) @mutation.declares)) @mutation
(range_clause left: (expression_list (identifier) @mutation.declares)) @mutation
(assignment_statement left: (expression_list (identifier) @mutation.name)) @mutation
(assignment_statement left: (expression_list (index_expression operand: (identifier) @mutation.name))) @mutation
(assignment_statement left: (expression_list ${SELECTOR_TARGET})) @mutation
(inc_statement (identifier) @mutation.name) @mutation
(dec_statement (identifier) @mutation.name) @mutation
(inc_statement ${SELECTOR_TARGET}) @mutation
(dec_statement ${SELECTOR_TARGET}) @mutation
(call_expression function: (selector_expression operand: (identifier) @mutation.name field: (field_identifier) @mutation.method)) @mutation
(call_expression
  function: (identifier) @mutation.builtin
  arguments: (argument_list . (identifier) @mutation.name)
  (#eq? @mutation.builtin "delete")) @mutation

(import_declaration) @import
`;

/** Methods of the standard library's containers and writers that change their receiver. */
const MUTATING_METHODS = new Set([
  'Add',
  'Set',
  'Del',
  'Delete',
  'Store',
  'LoadOrStore',
  'LoadAndDelete',
  'Swap',
  'CompareAndSwap',
  'Put',
  'Push',
  'PushBack',
  'PushFront',
  'Remove',
  'Reset',
  'Init',
  'Write',
  'WriteString',
  'WriteByte',
  'WriteRune',
  'Grow',
  'Truncate',
]);

function stringValue(node: Node): string | null {
  if (node.type === 'interpreted_string_literal' || node.type === 'raw_string_literal')
    return node.text.slice(1, -1);
  return null;
}

/** `import "net/http"`, `import (h "net/http"; . "fmt"; _ "embed")`: one binding per package. */
function imports(statement: Node): ImportBinding[] {
  return statement.descendantsOfType('import_spec').flatMap((spec): ImportBinding[] => {
    const path = spec.childForFieldName('path');
    if (!path) return [];
    const module = stringValue(path) ?? path.text;
    const alias = spec.childForFieldName('name')?.text;
    const line = spec.startPosition.row + 1;
    if (alias === '.') return [{ local: '*', module, imported: '*', kind: 'wildcard', line }];
    return [{ local: alias ?? packageName(module), module, imported: null, kind: 'module', line }];
  });
}

/** The name a package is referred to by: its path's last segment, skipping a `/v2` major version. */
function packageName(path: string): string {
  const segments = path.split('/');
  const last = segments[segments.length - 1] ?? path;
  return /^v\d+$/.test(last) && segments.length > 1 ? segments[segments.length - 2]! : last;
}

/** Embedded types: anonymous struct fields and interfaces listed inside an interface. */
function bases(definition: Node): string[] {
  const type = definition.childForFieldName('type');
  if (type?.type === 'struct_type') {
    const fields = type.namedChildren.find((child) => child.type === 'field_declaration_list');
    return (fields?.namedChildren ?? []).flatMap((field) =>
      field.type === 'field_declaration' && !field.childForFieldName('name')
        ? [embeddedName(field.childForFieldName('type'))]
        : [],
    );
  }
  if (type?.type === 'interface_type') {
    return type.namedChildren.flatMap((child) => (child.type === 'type_elem' ? [child.text] : []));
  }
  return [];
}

function embeddedName(type: Node | null): string {
  return (type?.text ?? '').replace(/^\*/, '');
}

/** Types read `type Server struct`; functions and methods end before their body. */
function signature(definition: Node): string {
  if (definition.type === 'type_spec' || definition.type === 'type_alias')
    return `type ${headerBefore(definition, null)}`;
  return headerBefore(definition, definition.childForFieldName('body'));
}

/** The package documentation: the comment block directly above the `package` clause. */
function moduleDocstring(root: Node): string | null {
  const clause = root.namedChildren.find((child) => child.type === 'package_clause');
  const lines: string[] = [];
  let boundaryRow = clause?.startPosition.row ?? 0;
  for (
    let previous = clause?.previousNamedSibling;
    previous?.type === 'comment';
    previous = previous.previousNamedSibling
  ) {
    if (previous.endPosition.row < boundaryRow - 1) break;
    lines.unshift(commentText(previous.text));
    boundaryRow = previous.startPosition.row;
  }
  return lines.join('\n').trim() || null;
}

export const go: LanguageSpec = {
  id: 'go',
  grammar: 'go',
  extensions: ['.go'],
  query: QUERY,
  selfNames: [],
  wrapperTypes: ['type_declaration'],
  commentTypes: ['comment'],
  containerKinds: ['struct', 'interface', 'type'],
  moduleSystem: 'go',
  mutatingMethods: MUTATING_METHODS,
  docstring: () => null,
  moduleDocstring,
  signature,
  imports,
  bases,
  stringValue,
};
