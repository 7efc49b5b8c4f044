import type { Node } from 'web-tree-sitter';
import type { ImportBinding } from '../model';
import {
  annotationText,
  headerBefore,
  valueType,
  type LanguageSpec,
  type MethodCallFacts,
  type TypeBinding,
} from './spec';

const QUERY = `
(function_definition name: (identifier) @name) @definition.function
(class_definition name: (identifier) @name) @definition.class

(call function: (identifier) @call.name) @call
(call function: (attribute object: (_) @call.receiver attribute: (identifier) @call.name)) @call

(raise_statement (call function: (_) @raise.type arguments: (argument_list) @raise.args)) @raise
(raise_statement . [(identifier) (attribute)] @raise.type) @raise

(assignment left: (identifier) @mutation.declares) @mutation
(assignment left: (pattern_list (identifier) @mutation.declares)) @mutation
(assignment left: (tuple_pattern (identifier) @mutation.declares)) @mutation
(augmented_assignment left: (identifier) @mutation.declares) @mutation
(assignment left: (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute)) @mutation
(assignment left: (pattern_list (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute))) @mutation
(augmented_assignment left: (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute)) @mutation
(assignment left: (subscript value: (identifier) @mutation.name)) @mutation
(augmented_assignment left: (subscript value: (identifier) @mutation.name)) @mutation
(assignment left: (subscript value: (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute))) @mutation
(delete_statement (subscript value: (identifier) @mutation.name)) @mutation
(delete_statement (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute)) @mutation
(call function: (attribute object: (attribute object: (identifier) @mutation.object attribute: (identifier) @mutation.attribute) attribute: (identifier) @mutation.method)) @mutation
(call function: (identifier) @mutation.setter arguments: (argument_list . (identifier) @mutation.object . (string) @mutation.attribute) (#eq? @mutation.setter "setattr")) @mutation

(global_statement (identifier) @global.name) @global

(typed_parameter) @typed
(typed_default_parameter) @typed
(assignment left: [(identifier) (attribute)] right: [(call) (identifier) (await)]) @typed
(assignment left: [(identifier) (attribute)] type: (_)) @typed
(except_clause value: (as_pattern)) @typed
(decorated_definition definition: (function_definition return_type: (_))) @typed

(argument_list (identifier) @reference.name) @reference
(argument_list (attribute object: (identifier) @reference.receiver attribute: (identifier) @reference.name)) @reference
(keyword_argument value: (identifier) @reference.name) @reference
(keyword_argument value: (attribute object: (identifier) @reference.receiver attribute: (identifier) @reference.name)) @reference
(pair value: (identifier) @reference.name) @reference
(decorator (identifier) @reference.name) @reference
(decorator (attribute object: (identifier) @reference.receiver attribute: (identifier) @reference.name)) @reference

(import_statement) @import
(import_from_statement) @import
`;

const MUTATING_METHODS = new Set([
  'append',
  'extend',
  'insert',
  'remove',
  'pop',
  'popitem',
  'clear',
  'update',
  'setdefault',
  'add',
  'discard',
  'sort',
  'reverse',
  'appendleft',
  'popleft',
  'extendleft',
]);

const ERROR_LOG_METHOD = /^(error|exception|critical|fatal|warn|warning)$/;

/** `logger.error("…")` logs an error; `items.append(x)` changes the list `items` names. */
function methodCallFacts(call: Node, method: string, receiver: Node): MethodCallFacts {
  const args = ERROR_LOG_METHOD.test(method) ? call.childForFieldName('arguments') : null;
  return {
    errorLogArguments: args?.type === 'argument_list' ? args : null,
    mutatedName:
      receiver.type === 'identifier' && MUTATING_METHODS.has(method) ? receiver.text : null,
  };
}

const STRING_LITERAL = /^[rRbBuUfF]{0,2}("""|'''|"|')([\s\S]*)\1$/;

function stringValue(node: Node): string | null {
  if (node.type === 'string') {
    const match = STRING_LITERAL.exec(node.text);
    return match ? match[2]! : node.text;
  }
  if (node.type === 'concatenated_string') {
    return node.namedChildren.map((child) => (child ? (stringValue(child) ?? '') : '')).join('');
  }
  return null;
}

function docstring(definition: Node): string | null {
  const first = definition.childForFieldName('body')?.firstNamedChild;
  if (first?.type !== 'expression_statement') return null;
  const literal = first.firstNamedChild;
  return literal ? stringValue(literal) : null;
}

function moduleDocstring(root: Node): string | null {
  const first = root.firstNamedChild;
  if (first?.type !== 'expression_statement') return null;
  const literal = first.firstNamedChild;
  return literal ? stringValue(literal) : null;
}

function imports(statement: Node): ImportBinding[] {
  const line = statement.startPosition.row + 1;
  if (statement.type === 'import_statement') {
    return statement.childrenForFieldName('name').flatMap((name): ImportBinding[] => {
      if (!name) return [];
      if (name.type === 'aliased_import') {
        const module = name.childForFieldName('name')?.text ?? '';
        return [
          {
            local: name.childForFieldName('alias')?.text ?? module,
            module,
            imported: null,
            kind: 'module',
            line,
          },
        ];
      }
      return [{ local: name.text, module: name.text, imported: null, kind: 'module', line }];
    });
  }
  const module = statement.childForFieldName('module_name')?.text ?? '';
  if (statement.namedChildren.some((child) => child?.type === 'wildcard_import')) {
    return [{ local: '*', module, imported: '*', kind: 'wildcard', line }];
  }
  return statement.childrenForFieldName('name').flatMap((name): ImportBinding[] => {
    if (!name) return [];
    if (name.type === 'aliased_import') {
      const imported = name.childForFieldName('name')?.text ?? '';
      return [
        {
          local: name.childForFieldName('alias')?.text ?? imported,
          module,
          imported,
          kind: 'named',
          line,
        },
      ];
    }
    return [{ local: name.text, module, imported: name.text, kind: 'named', line }];
  });
}

function bases(definition: Node): string[] {
  const superclasses = definition.childForFieldName('superclasses');
  if (!superclasses) return [];
  return superclasses.namedChildren
    .filter(
      (child): child is Node =>
        !!child && (child.type === 'identifier' || child.type === 'attribute'),
    )
    .map((child) => child.text);
}

/**
 * `app: "Flask"`, `session: Session = None`, `self.session = Session()`, `x = make_app()`, and
 * `except ClickException as e` (the handler's name holds an instance of the one class it catches).
 */
function typeBindings(node: Node): TypeBinding[] {
  if (node.type === 'except_clause') return caughtBinding(node);
  if (node.type === 'decorated_definition') return propertyBinding(node);
  if (node.type === 'typed_parameter' || node.type === 'typed_default_parameter') {
    const name = node.childForFieldName('name') ?? node.firstNamedChild;
    const type = annotationText(node.childForFieldName('type'));
    return name?.type === 'identifier' && type ? [{ name: name.text, type, declared: true }] : [];
  }
  const left = node.childForFieldName('left');
  if (!left || (left.type !== 'identifier' && left.type !== 'attribute')) return [];
  const name = left.text.replace(/\s+/g, '');
  const annotation = annotationText(node.childForFieldName('type'));
  if (annotation) return [{ name, type: annotation, declared: true }];
  const type = valueType(node.childForFieldName('right'), ['call'], null);
  return type ? [{ name, type }] : [];
}

/** `@property def params(self) -> QueryParams`: reading `self.params` gives a QueryParams. */
function propertyBinding(decorated: Node): TypeBinding[] {
  const isProperty = decorated.namedChildren.some(
    (child) =>
      child?.type === 'decorator' &&
      /^@(?:[\w.]+\.)?(?:property|cached_property)$/.test(child.text.replace(/\s+/g, '')),
  );
  const definition = decorated.childForFieldName('definition');
  const name = definition?.childForFieldName('name');
  const type = annotationText(definition?.childForFieldName('return_type') ?? null);
  return isProperty && name && type ? [{ name: `self.${name.text}`, type, declared: true }] : [];
}

/**
 * `except Foo as e`: `e` is a `Foo` within the handler (Python unbinds it at the handler's end, so
 * several handlers may reuse the name). A tuple of classes names no single type.
 */
function caughtBinding(clause: Node): TypeBinding[] {
  const pattern = clause.childForFieldName('value');
  const caught = pattern?.firstNamedChild;
  const alias = pattern?.childForFieldName('alias')?.firstNamedChild;
  if (!caught || !alias || alias.type !== 'identifier') return [];
  if (caught.type !== 'identifier' && caught.type !== 'attribute') return [];
  const lines = [clause.startPosition.row + 1, clause.endPosition.row + 1] as const;
  return [{ name: alias.text, type: caught.text, lines }];
}

export const python: LanguageSpec = {
  id: 'python',
  grammar: 'python',
  extensions: ['.py', '.pyi', '.pyw'],
  query: QUERY,
  selfNames: ['self', 'cls'],
  wrapperTypes: ['decorated_definition'],
  commentTypes: ['comment'],
  containerKinds: ['class'],
  moduleSystem: 'python',
  mutatingMethods: MUTATING_METHODS,
  methodCallFacts,
  docstring,
  moduleDocstring,
  signature: (definition) => headerBefore(definition, definition.childForFieldName('body')),
  imports,
  bases,
  typeBindings,
  stringValue,
};
