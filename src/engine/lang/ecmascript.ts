import type { Node } from 'web-tree-sitter';
import type { ImportBinding, LanguageId } from '../model';
import {
  annotationText,
  headerBefore,
  leadingFileComment,
  valueType,
  type LanguageSpec,
  type TypeBinding,
} from './spec';

/** JavaScript, TypeScript and TSX share one query; TypeScript adds its declaration forms. */
const FUNCTION_VALUE = '[(arrow_function) (function_expression) (generator_function)]';

const COMMON_QUERY = `
(function_declaration name: (identifier) @name) @definition.function
(generator_function_declaration name: (identifier) @name) @definition.function
(class_declaration name: (_) @name) @definition.class
(method_definition name: (_) @name) @definition.function
(variable_declarator name: (identifier) @name value: ${FUNCTION_VALUE} @definition.function)
(assignment_expression
  left: (member_expression object: (_) @owner property: (_) @name)
  right: ${FUNCTION_VALUE} @definition.function)
(assignment_expression
  left: (subscript_expression object: (identifier) @owner index: (_) @name.computed)
  right: ${FUNCTION_VALUE} @definition.function)
(pair key: [(property_identifier) (string) (identifier)] @name value: ${FUNCTION_VALUE} @definition.function)
(variable_declarator name: (identifier) @owner
  value: (object (pair key: [(property_identifier) (string) (identifier)] @name value: ${FUNCTION_VALUE} @definition.function)))
(variable_declarator name: (identifier) @owner
  value: (object (method_definition name: (_) @name) @definition.function))
(assignment_expression left: [(identifier) (member_expression)] @owner
  right: (object (pair key: [(property_identifier) (string) (identifier)] @name value: ${FUNCTION_VALUE} @definition.function)))
(assignment_expression left: [(identifier) (member_expression)] @owner
  right: (object (method_definition name: (_) @name) @definition.function))

(call_expression function: (identifier) @call.name) @call
(call_expression function: (member_expression object: (_) @call.receiver property: (_) @call.name)) @call
; \`await f<T>(x)\` parses as a call of \`await f\`: the call is still \`f\`'s.
(call_expression function: (await_expression (identifier) @call.name)) @call
(call_expression function: (await_expression (member_expression object: (_) @call.receiver property: (_) @call.name))) @call
(new_expression constructor: (identifier) @call.name) @call
(new_expression constructor: (member_expression object: (_) @call.receiver property: (_) @call.name)) @call

(throw_statement (new_expression constructor: (_) @raise.type arguments: (arguments)? @raise.args)) @raise
(throw_statement (call_expression function: (_) @raise.type arguments: (arguments) @raise.args)) @raise
(throw_statement (identifier) @raise.type) @raise

(call_expression
  function: (member_expression property: (property_identifier) @errorlog.method)
  arguments: (arguments) @errorlog.args
  (#match? @errorlog.method "^(error|warn|fatal|exception)$")) @errorlog
(new_expression
  constructor: (identifier) @errorlog.type
  arguments: (arguments) @errorlog.args
  (#match? @errorlog.type "Error$")) @errorlog

(variable_declarator name: (identifier) @binding.name) @binding
(assignment_expression left: (identifier) @mutation.name) @mutation
(augmented_assignment_expression left: (identifier) @mutation.name) @mutation
(update_expression argument: (identifier) @mutation.name) @mutation
(assignment_expression left: (member_expression object: (_) @mutation.object property: (_) @mutation.attribute)) @mutation
(augmented_assignment_expression left: (member_expression object: (_) @mutation.object property: (_) @mutation.attribute)) @mutation
(update_expression argument: (member_expression object: (_) @mutation.object property: (_) @mutation.attribute)) @mutation
(assignment_expression left: (subscript_expression object: (identifier) @mutation.name)) @mutation
(assignment_expression left: (subscript_expression object: (member_expression object: (this) @mutation.object property: (_) @mutation.attribute))) @mutation
(call_expression function: (member_expression object: (identifier) @mutation.name property: (property_identifier) @mutation.method)) @mutation
(call_expression function: (member_expression object: (member_expression object: [(this) (identifier)] @mutation.object property: (_) @mutation.attribute) property: (property_identifier) @mutation.method)) @mutation
(assignment_expression left: (subscript_expression object: (member_expression object: (identifier) @mutation.object property: (_) @mutation.attribute))) @mutation
(call_expression function: (member_expression object: (identifier) @mutation.setter property: (property_identifier) @mutation.setterMethod) arguments: (arguments . [(identifier) @mutation.name (member_expression object: [(this) (identifier)] @mutation.object property: (_) @mutation.attribute)]) (#eq? @mutation.setter "Object") (#eq? @mutation.setterMethod "assign")) @mutation

(variable_declarator value: [(call_expression) (new_expression) (identifier) (this) (await_expression)]) @typed
(assignment_expression right: [(call_expression) (new_expression) (identifier) (this) (await_expression)]) @typed

(arguments (identifier) @reference.name) @reference
(arguments (member_expression object: [(this) (identifier)] @reference.receiver property: (property_identifier) @reference.name)) @reference
(pair value: (identifier) @reference.name) @reference
(pair value: (member_expression object: [(this) (identifier)] @reference.receiver property: (property_identifier) @reference.name)) @reference
(decorator (identifier) @reference.name) @reference

(import_statement) @import
(export_statement source: (_)) @import
(variable_declarator value: (call_expression function: (identifier) @require.fn (#eq? @require.fn "require"))) @import
(variable_declarator value: (member_expression object: (call_expression function: (identifier) @require.fn (#eq? @require.fn "require")))) @import
`;

const JAVASCRIPT_QUERY = `${COMMON_QUERY}
(field_definition property: (_) @name value: ${FUNCTION_VALUE} @definition.function)
(field_definition property: (_) @binding.name) @binding
(field_definition) @typed
`;

const TYPESCRIPT_QUERY = `${COMMON_QUERY}
(abstract_class_declaration name: (_) @name) @definition.class
(interface_declaration name: (_) @name) @definition.interface
(enum_declaration name: (_) @name) @definition.enum
(type_alias_declaration name: (_) @name) @definition.type
(public_field_definition name: (_) @name value: ${FUNCTION_VALUE} @definition.function)
(public_field_definition name: (_) @binding.name) @binding
(public_field_definition) @typed
(variable_declarator type: (_)) @typed
(method_definition "get" return_type: (type_annotation)) @typed
(required_parameter) @typed
(optional_parameter) @typed
`;

const MUTATING_METHODS = new Set([
  'push',
  'pop',
  'shift',
  'unshift',
  'splice',
  'sort',
  'reverse',
  'fill',
  'copyWithin',
  'set',
  'delete',
  'clear',
  'add',
]);

function stringValue(node: Node): string | null {
  if (node.type === 'string') return node.text.slice(1, -1);
  if (node.type === 'template_string') return node.text.slice(1, -1);
  return null;
}

function moduleOf(node: Node | null): string {
  return node ? (stringValue(node) ?? node.text) : '';
}

function imports(statement: Node): ImportBinding[] {
  const line = statement.startPosition.row + 1;
  if (statement.type === 'variable_declarator') return requireBindings(statement, line);
  const module = moduleOf(statement.childForFieldName('source'));
  if (statement.type === 'export_statement') return reexports(statement, module, line);
  const clause = statement.namedChildren.find((child) => child?.type === 'import_clause');
  if (!clause) return [];
  const bindings: ImportBinding[] = [];
  for (const part of clause.namedChildren) {
    if (!part) continue;
    if (part.type === 'identifier')
      bindings.push({ local: part.text, module, imported: 'default', kind: 'default', line });
    if (part.type === 'namespace_import') {
      const local = part.namedChildren.find((child) => child?.type === 'identifier')?.text;
      if (local) bindings.push({ local, module, imported: null, kind: 'namespace', line });
    }
    if (part.type === 'named_imports') {
      for (const specifier of part.namedChildren) {
        if (specifier?.type !== 'import_specifier') continue;
        const imported = specifier.childForFieldName('name')?.text ?? '';
        const local = specifier.childForFieldName('alias')?.text ?? imported;
        bindings.push({ local, module, imported, kind: 'named', line });
      }
    }
  }
  return bindings;
}

function reexports(statement: Node, module: string, line: number): ImportBinding[] {
  const clause = statement.namedChildren.find((child) => child?.type === 'export_clause');
  if (!clause)
    return [{ local: '*', module, imported: '*', kind: 'wildcard', line, reexport: true }];
  return clause.namedChildren.flatMap((specifier): ImportBinding[] => {
    if (specifier?.type !== 'export_specifier') return [];
    const imported = specifier.childForFieldName('name')?.text ?? '';
    const local = specifier.childForFieldName('alias')?.text ?? imported;
    return [{ local, module, imported, kind: 'named', line, reexport: true }];
  });
}

/** `const x = require('./x')`, `const { a, b: c } = require('./x')`, `const y = require('./x').y`. */
function requireBindings(declarator: Node, line: number): ImportBinding[] {
  const name = declarator.childForFieldName('name');
  let value = declarator.childForFieldName('value');
  let member: string | null = null;
  if (value?.type === 'member_expression') {
    member = value.childForFieldName('property')?.text ?? null;
    value = value.childForFieldName('object');
  }
  const argument = value?.childForFieldName('arguments')?.firstNamedChild ?? null;
  const module = moduleOf(argument);
  if (!name || !module) return [];
  if (name.type === 'identifier') {
    return [
      { local: name.text, module, imported: member, kind: member ? 'named' : 'module', line },
    ];
  }
  if (name.type !== 'object_pattern') return [];
  return name.namedChildren.flatMap((property): ImportBinding[] => {
    if (!property) return [];
    if (property.type === 'shorthand_property_identifier_pattern') {
      return [{ local: property.text, module, imported: property.text, kind: 'named', line }];
    }
    if (property.type === 'pair_pattern') {
      const key = property.childForFieldName('key')?.text ?? '';
      const local = property.childForFieldName('value')?.text ?? key;
      return [{ local, module, imported: key, kind: 'named', line }];
    }
    return [];
  });
}

/** Where a definition's header starts: the declaration or assignment that names a function value. */
function headerNode(definition: Node): Node {
  const parent = definition.parent;
  if (parent?.type === 'variable_declarator') {
    const declaration = parent.parent;
    return declaration &&
      (declaration.type === 'lexical_declaration' || declaration.type === 'variable_declaration')
      ? declaration
      : parent;
  }
  if (
    parent &&
    ['assignment_expression', 'pair', 'public_field_definition', 'field_definition'].includes(
      parent.type,
    )
  )
    return parent;
  return definition;
}

function signature(definition: Node): string {
  const header = headerNode(definition);
  const body = definition.childForFieldName('body');
  if (
    !body ||
    (body.type !== 'statement_block' &&
      body.type !== 'class_body' &&
      body.type !== 'interface_body' &&
      body.type !== 'object_type' &&
      body.type !== 'enum_body')
  ) {
    return headerBefore(header, null);
  }
  return headerBefore(header, body);
}

function bases(definition: Node): string[] {
  const heritage = definition.namedChildren.find((child) => child?.type === 'class_heritage');
  if (!heritage) {
    const extendsClause = definition.namedChildren.find(
      (child) => child?.type === 'extends_type_clause',
    );
    return extendsClause
      ? extendsClause.namedChildren.flatMap((child) => (child ? [child.text] : []))
      : [];
  }
  // JavaScript: class_heritage holds the expression directly; TypeScript wraps it in extends/implements clauses.
  const values: string[] = [];
  for (const child of heritage.namedChildren) {
    if (!child) continue;
    if (child.type === 'extends_clause') {
      const value = child.childForFieldName('value');
      if (value) values.push(value.text);
    } else if (child.type === 'implements_clause') {
      for (const type of child.namedChildren) if (type) values.push(type.text);
    } else values.push(child.text);
  }
  return values.map((value) => value.replace(/<[\s\S]*>$/, ''));
}

const CALL_TYPES = ['call_expression'];

/**
 * `ctx: Vitest`, `constructor(private ctx: Vitest)` (also `this.ctx`), `const s = new Server()`,
 * `this.ctx = ctx`, `let x: Foo = make()`, class fields.
 */
function typeBindings(node: Node): TypeBinding[] {
  switch (node.type) {
    case 'required_parameter':
    case 'optional_parameter': {
      const name = node.childForFieldName('pattern');
      const type = annotationText(node.childForFieldName('type'));
      if (name?.type !== 'identifier' || !type) return [];
      const property =
        node.namedChildren.some(
          (child) =>
            child?.type === 'accessibility_modifier' || child?.type === 'override_modifier',
        ) || /^\s*readonly\b/.test(node.text);
      return property
        ? [
            { name: name.text, type, declared: true },
            { name: `this.${name.text}`, type, declared: true },
          ]
        : [{ name: name.text, type, declared: true }];
    }
    case 'variable_declarator':
      return bindingOf(
        node.childForFieldName('name'),
        node.childForFieldName('type'),
        node.childForFieldName('value'),
      );
    case 'assignment_expression':
      return bindingOf(node.childForFieldName('left'), null, node.childForFieldName('right'));
    case 'public_field_definition':
      return bindingOf(
        node.childForFieldName('name'),
        node.childForFieldName('type'),
        node.childForFieldName('value'),
      );
    case 'method_definition': {
      // `get provider(): CoverageProvider`: reading the accessor gives a value of that type.
      const name = node.childForFieldName('name');
      const type = annotationText(node.childForFieldName('return_type'));
      return name && type ? [{ name: `this.${name.text}`, type, declared: true }] : [];
    }
    case 'field_definition':
      return bindingOf(node.childForFieldName('property'), null, node.childForFieldName('value'));
  }
  return [];
}

function bindingOf(name: Node | null, annotation: Node | null, value: Node | null): TypeBinding[] {
  if (!name) return [];
  const isName =
    name.type === 'identifier' ||
    name.type === 'property_identifier' ||
    (name.type === 'member_expression' && name.childForFieldName('object')?.type === 'this');
  if (!isName) return [];
  const text = name.text.replace(/\s+/g, '');
  const declared = annotationText(annotation);
  if (declared) return [{ name: text, type: declared, declared: true }];
  const type = valueType(value, CALL_TYPES, 'new_expression');
  return type ? [{ name: text, type }] : [];
}

function spec(id: LanguageId, grammar: string, extensions: string[], query: string): LanguageSpec {
  return {
    id,
    grammar,
    extensions,
    query,
    selfNames: ['this'],
    wrapperTypes: [
      'export_statement',
      'variable_declarator',
      'lexical_declaration',
      'variable_declaration',
      'assignment_expression',
      'expression_statement',
      'pair',
      'public_field_definition',
      'field_definition',
    ],
    commentTypes: ['comment'],
    containerKinds: ['class', 'interface', 'enum'],
    moduleSystem: 'ecmascript',
    mutatingMethods: MUTATING_METHODS,
    docstring: () => null,
    moduleDocstring: (root) => leadingFileComment(root, ['comment']),
    signature,
    imports,
    bases,
    typeBindings,
    stringValue,
  };
}

export const javascript = spec(
  'javascript',
  'javascript',
  ['.js', '.jsx', '.mjs', '.cjs'],
  JAVASCRIPT_QUERY,
);
export const typescript = spec(
  'typescript',
  'typescript',
  ['.ts', '.mts', '.cts'],
  TYPESCRIPT_QUERY,
);
export const tsx = spec('tsx', 'tsx', ['.tsx'], TYPESCRIPT_QUERY);
