import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import { commentText, headerBefore, type LanguageSpec } from './spec';

/**
 * Rust. Structs, enums, unions and traits are class-level containers; functions in an `impl` block
 * take the implemented type as `@owner` (`impl Display for Foo { fn fmt }` is `Foo.fmt`), so an
 * impl adds methods to its type rather than a second definition of it. Attributes (`#[derive]`,
 * `#[test]`) are listed as comment types so that they stay in their item's chunk; the item's
 * documentation is read from its comments alone.
 */
const IMPL_TYPE = `[
  (type_identifier) @owner
  (generic_type type: (type_identifier) @owner)
  (scoped_type_identifier name: (type_identifier) @owner)
  (generic_type type: (scoped_type_identifier name: (type_identifier) @owner))]`;

const FUNCTION =
  '[(function_item name: (identifier) @name) (function_signature_item name: (identifier) @name)]';

const CALLEE_PATH = '(scoped_identifier path: (_) @call.receiver name: (identifier) @call.name)';
const SELF_FIELD =
  '(field_expression value: (self) @mutation.object field: (field_identifier) @mutation.attribute)';

const QUERY = `
(impl_item type: ${IMPL_TYPE} body: (declaration_list ${FUNCTION} @definition.function))
(source_file ${FUNCTION} @definition.function)
(mod_item body: (declaration_list ${FUNCTION} @definition.function))
(trait_item body: (declaration_list ${FUNCTION} @definition.function))
(foreign_mod_item body: (declaration_list ${FUNCTION} @definition.function))
(block (function_item name: (identifier) @name) @definition.function)
(struct_item name: (type_identifier) @name) @definition.struct
(union_item name: (type_identifier) @name) @definition.struct
(enum_item name: (type_identifier) @name) @definition.enum
(trait_item name: (type_identifier) @name) @definition.trait
(type_item name: (type_identifier) @name) @definition.type

(call_expression function: (identifier) @call.name) @call
(call_expression function: (field_expression value: (_) @call.receiver field: (field_identifier) @call.name)) @call
(call_expression function: ${CALLEE_PATH}) @call
(call_expression function: (generic_function function: (identifier) @call.name)) @call
(call_expression function: (generic_function function: (field_expression value: (_) @call.receiver field: (field_identifier) @call.name))) @call
(call_expression function: (generic_function function: ${CALLEE_PATH})) @call

(macro_invocation
  macro: (identifier) @raise.type
  (token_tree) @raise.args
  (#match? @raise.type "^(panic|unreachable|unimplemented|todo)$")) @raise

(macro_invocation
  macro: [(identifier) (scoped_identifier)] @errorlog.macro
  (token_tree) @errorlog.args
  (#match? @errorlog.macro "^((log|tracing)::)?(error|warn)$|^(anyhow|bail|format_err)$")) @errorlog

(field_declaration name: (field_identifier) @binding.name) @binding
(enum_variant name: (identifier) @binding.name) @binding
(const_item name: (identifier) @binding.name) @binding
(static_item name: (identifier) @binding.name) @binding
(let_declaration pattern: (identifier) @mutation.declares) @mutation
(let_declaration pattern: (tuple_pattern (identifier) @mutation.declares)) @mutation
(assignment_expression left: (identifier) @mutation.name) @mutation
(compound_assignment_expr left: (identifier) @mutation.name) @mutation
(assignment_expression left: ${SELF_FIELD}) @mutation
(compound_assignment_expr left: ${SELF_FIELD}) @mutation
(assignment_expression left: (index_expression . ${SELF_FIELD})) @mutation
(call_expression function: (field_expression value: ${SELF_FIELD} field: (field_identifier) @mutation.method)) @mutation

(use_declaration) @import
`;

const MUTATING_METHODS = new Set([
  'push',
  'push_str',
  'push_back',
  'push_front',
  'pop',
  'pop_back',
  'pop_front',
  'insert',
  'remove',
  'clear',
  'extend',
  'append',
  'truncate',
  'retain',
  'drain',
  'sort',
  'sort_by',
  'sort_by_key',
  'sort_unstable',
  'dedup',
  'reverse',
  'swap',
  'entry',
  'get_mut',
  'take',
  'replace',
  'resize',
]);

const RAW_STRING = /^r(#*)"([\s\S]*)"\1$/;

function stringValue(node: Node): string | null {
  if (node.type === 'raw_string_literal') {
    const match = RAW_STRING.exec(node.text);
    return match ? match[2]! : node.text;
  }
  if (node.type === 'string_literal') return node.text.replace(/^b?"|"$/g, '');
  return null;
}

/**
 * `use a::b::C;` binds `C` from `a::b`; `use a::b::{c, d as e, self};` binds each name of the list;
 * `use a::b::*;` brings in everything.
 */
function imports(statement: Node): ImportBinding[] {
  const argument = statement.childForFieldName('argument');
  return argument ? useTree(argument, '', statement.startPosition.row + 1) : [];
}

function useTree(node: Node, prefix: string, line: number): ImportBinding[] {
  const join = (path: string) => (prefix && path ? `${prefix}::${path}` : prefix || path);
  switch (node.type) {
    case 'scoped_use_list': {
      const path = join(node.childForFieldName('path')?.text ?? '');
      const list = node.childForFieldName('list');
      return list ? list.namedChildren.flatMap((item) => useTree(item, path, line)) : [];
    }
    case 'use_list':
      return node.namedChildren.flatMap((item) => useTree(item, prefix, line));
    case 'use_wildcard':
      return [
        {
          local: '*',
          module: join(node.namedChildren[0]?.text ?? ''),
          imported: '*',
          kind: 'wildcard',
          line,
        },
      ];
    case 'use_as_clause':
      return [
        binding(
          join(node.childForFieldName('path')?.text ?? ''),
          node.childForFieldName('alias')?.text ?? null,
          line,
        ),
      ];
    case 'self':
      return [
        {
          local: prefix.slice(prefix.lastIndexOf(':') + 1),
          module: prefix,
          imported: null,
          kind: 'module',
          line,
        },
      ];
    default:
      return [binding(join(node.text), null, line)];
  }
}

/** `a::b::c` is the item `c` of module `a::b`; a single segment is a crate or module. */
function binding(path: string, alias: string | null, line: number): ImportBinding {
  const separator = path.lastIndexOf('::');
  if (separator < 0)
    return { local: alias ?? path, module: path, imported: null, kind: 'module', line };
  const imported = path.slice(separator + 2);
  return {
    local: alias ?? imported,
    module: path.slice(0, separator),
    imported,
    kind: 'named',
    line,
  };
}

/** A trait's supertraits (`trait A: B + C`). */
function bases(definition: Node): string[] {
  const bounds = definition.childForFieldName('bounds');
  return bounds ? bounds.namedChildren.map((bound) => bound.text) : [];
}

/** Everything before the body; bodiless items (`fn f();`, `struct S;`, `type T = U;`) end at their semicolon. */
function signature(definition: Node): string {
  return headerBefore(definition, definition.childForFieldName('body')).replace(/;$/, '');
}

const COMMENT_TYPES = ['line_comment', 'block_comment'];

/**
 * The comments directly above an item, looking past its attributes. Empty rather than null when
 * there are none, so that the extractor does not fall back to the attribute text above the item.
 */
function docstring(definition: Node): string {
  const lines: string[] = [];
  let boundaryRow = definition.startPosition.row;
  for (
    let previous = definition.previousNamedSibling;
    previous;
    previous = previous.previousNamedSibling
  ) {
    if (previous.endPosition.row < boundaryRow - 2) break;
    if (COMMENT_TYPES.includes(previous.type)) lines.unshift(commentText(previous.text));
    else if (previous.type !== 'attribute_item') break;
    boundaryRow = previous.startPosition.row;
  }
  return lines.join('\n').trim();
}

/** The crate or module documentation: the leading inner doc comments (`//!` lines or a `/*!` block). */
function moduleDocstring(root: Node): string | null {
  const lines: string[] = [];
  for (const child of root.namedChildren) {
    if (!COMMENT_TYPES.includes(child.type) || !/^\/[/*]!/.test(child.text)) break;
    lines.push(commentText(child.text.replace(/^(\/[/*])!/, '$1')));
  }
  return lines.join('\n').trim() || null;
}

export const rust: LanguageSpec = {
  id: 'rust',
  grammar: 'rust',
  extensions: ['.rs'],
  query: QUERY,
  selfNames: ['self', 'Self'],
  wrapperTypes: [],
  commentTypes: [...COMMENT_TYPES, 'attribute_item'],
  containerKinds: ['struct', 'enum', 'trait'],
  moduleSystem: 'none',
  mutatingMethods: MUTATING_METHODS,
  docstring,
  moduleDocstring,
  signature,
  imports,
  bases,
  stringValue,
};
