import { strict as assert } from 'node:assert';
import { MODULE_QUALIFIED_NAME, type CodeFact, type SymbolKind } from '../../../src/engine/model';
import { warmUpQuestions, type FactSource } from '../../../src/engine/search/warm-questions';

interface Given {
  readonly name: string;
  readonly kind?: SymbolKind;
  readonly docstring?: string;
  readonly errorStrings?: string[];
}

function fact(path: string, given: Given): CodeFact {
  const kind = given.kind ?? 'function';
  const qualifiedName = kind === 'module' ? MODULE_QUALIFIED_NAME : given.name;
  return {
    id: `${path}::${qualifiedName}`,
    path,
    language: 'python',
    qualifiedName,
    name: given.name,
    kind,
    className: null,
    parent: null,
    startLine: 1,
    endLine: 2,
    signature: `def ${given.name}()`,
    docstring: given.docstring ?? null,
    chunkId: null,
    calls: [],
    raises: [],
    errorStrings: given.errorStrings ?? [],
    mutates: [],
    imports: [],
    bases: [],
  };
}

function source(files: Record<string, Given[]>): FactSource {
  return {
    files: () => Object.keys(files),
    factsInFile: (path) => (files[path] ?? []).map((given) => fact(path, given)),
  };
}

describe('the questions an index asks itself to warm the search up', () => {
  it('takes one question of each kind in turn, at most one of a kind per file', () => {
    const questions = warmUpQuestions(
      source({
        'a.py': [
          { name: 'a', kind: 'module', docstring: 'The module of things that are a.' },
          {
            name: 'parse_header',
            docstring: 'Parses one header of an archive.\nMore lines follow.',
            errorStrings: ['the header is truncated here'],
          },
          { name: 'second_in_a', docstring: 'Not taken: a.py gave its docstring line.' },
        ],
        'b.py': [
          { name: 'Reader', kind: 'class', docstring: 'Reads archives one entry at a time.' },
          { name: 'next_entry', errorStrings: ['no more entries to read'] },
        ],
      }),
      2,
    );
    assert.deepEqual(questions, [
      'parse_header',
      // the module's docstring is the file's first, and a module is no definition to name
      'The module of things that are a.',
      'the header is truncated here',
      'who calls parse_header',
      'Reader',
      'Reads archives one entry at a time.',
      'no more entries to read',
      // a class is not asked about by its callers: its methods are
      'who calls next_entry',
    ]);
  });

  it('leaves out docstring lines and messages of fewer than three words, and repeats', () => {
    const questions = warmUpQuestions(
      source({
        'a.py': [{ name: 'run', docstring: 'Runs it.', errorStrings: ['bad value'] }],
        'b.py': [{ name: 'run', docstring: '  Starts   the\tserver now  ' }],
      }),
      4,
    );
    assert.deepEqual(questions, ['run', 'Starts the server now', 'who calls run']);
  });

  it('cuts long lines, and spreads the questions over the files at even steps', () => {
    const files: Record<string, Given[]> = {};
    for (let i = 0; i < 10; i++) files[`f${i}.py`] = [{ name: `name_${i}` }];
    files['f5.py'] = [{ name: 'name_5', docstring: `word ${'x'.repeat(200)} end` }];
    const questions = warmUpQuestions(source(files), 2);
    // files 0 and 5 first (a step of five), one question of each kind they can give
    assert.deepEqual(questions.slice(0, 4), [
      'name_0',
      `word ${'x'.repeat(200)} end`.slice(0, 120),
      'who calls name_0',
      'name_5',
    ]);
    assert.equal(questions.length, 5);
    assert.deepEqual(warmUpQuestions(source(files), 2), questions, 'always the same questions');
  });

  it('asks nothing of an index without definitions', () => {
    assert.deepEqual(warmUpQuestions(source({}), 8), []);
    assert.deepEqual(warmUpQuestions(source({ 'a.py': [{ name: 'a', kind: 'module' }] }), 8), []);
  });
});
