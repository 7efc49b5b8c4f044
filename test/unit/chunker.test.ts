import { strict as assert } from 'node:assert';
import { planDirectoryUnits } from '../../src/engine/index/directories';
import { unwrap } from '../../src/engine/util/result';
import { chunkSource } from '../helpers/extract';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { openEngine, Scratch } from '../helpers/workspace';

describe('chunker', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('chunks a Python function with a parent file id', async () => {
    const { chunks } = await chunkSource(
      'models/user.py',
      'def get_user(user_id: int) -> User:\n    """Fetch user by ID."""\n    return db.query(User).filter_by(id=user_id).first()\n',
    );
    const functions = chunks.filter((chunk) => chunk.level === 'function');
    assert.equal(functions.length, 1);
    assert.equal(functions[0]!.functionName, 'get_user');
    assert.equal(functions[0]!.startLine, 1);
    assert.equal(functions[0]!.parentFileId, 'models/user.py::None::None::file');
    assert.equal(functions[0]!.id, 'models/user.py::None::get_user::function');
    assert.equal(functions[0]!.isSummarized, false);
    assert.equal(functions[0]!.fullContent, null);
    assert.equal(functions[0]!.originalLineCount, null);
  });

  it('gives class methods their class and file as parents', async () => {
    const { chunks } = await chunkSource(
      'services/user.py',
      'class UserService:\n    def create_user(self, name: str): pass\n    def delete_user(self, user_id: int): pass\n',
    );
    const methods = chunks.filter((chunk) => chunk.level === 'function');
    assert.deepEqual(
      methods.map((chunk) => chunk.id),
      [
        'services/user.py::UserService::create_user::function',
        'services/user.py::UserService::delete_user::function',
      ],
    );
    for (const method of methods) {
      assert.equal(method.className, 'UserService');
      assert.equal(method.parentClassId, 'services/user.py::UserService::None::class');
      assert.equal(method.parentFileId, 'services/user.py::None::None::file');
    }
    const cls = chunks.find((chunk) => chunk.level === 'class')!;
    assert.match(cls.content, /def create_user\(self, name: str\)/);
    assert.doesNotMatch(cls.content, /pass/, 'class chunks hold signatures, not bodies');
  });

  it('never cuts token windows: every function chunk starts with its real signature', async () => {
    const body = Array.from(
      { length: 40 },
      (_, i) =>
        `def f${i}(a, b=${i}):\n    """Doc ${i}."""\n    return a + b * ${i}\n\n\nclass K${i}:\n    def m(self):\n        return ${i}\n`,
    ).join('\n');
    const { chunks } = await chunkSource('big.py', body);
    const functions = chunks.filter((chunk) => chunk.level === 'function');
    assert.equal(functions.length, 80);
    for (const chunk of functions) assert.match(chunk.content, /^\s*(async )?def \w+\(/, chunk.id);
  });

  it('lists at most 400 signatures in a file chunk and says how many more there are', async () => {
    const source = Array.from(
      { length: 450 },
      (_, i) => `def step_${i}():\n    return ${i}\n`,
    ).join('');
    const { chunks } = await chunkSource('generated/steps.py', source);
    const file = chunks.find((chunk) => chunk.level === 'file')!;
    assert.match(file.content, /def step_399\(\)/);
    assert.doesNotMatch(file.content, /def step_400\(\)/);
    assert.match(file.content, /… and 50 more definitions/);
    assert.equal(chunks.filter((chunk) => chunk.level === 'function').length, 450);
  });

  it('flags functions of 150 lines or more for summarisation and keeps their body', async () => {
    const { chunks, flagged } = await chunkSource(
      'big.py',
      `def big_function():\n${'    x = 1\n'.repeat(200)}`,
    );
    const [chunk] = chunks.filter((c) => c.level === 'function');
    assert.equal(chunk!.originalLineCount, 201);
    assert.match(chunk!.content, /^def big_function/);
    assert.equal(chunk!.isSummarized, false);
    assert.deepEqual(
      flagged.map((f) => f.functionName),
      ['big_function'],
    );
  });

  it('keeps decorators, JSDoc and overload signatures inside the chunk', async () => {
    const py = await chunkSource(
      'a.py',
      '@app.route("/")\n@login_required\ndef index():\n    return "hi"\n',
    );
    assert.equal(py.chunks.find((c) => c.level === 'function')!.startLine, 1);
    const ts = await chunkSource(
      'ops.ts',
      'export function map(a: number): number;\nexport function map(a: string): string;\n/** Maps things. */\nexport function map(a: any): any {\n  return a;\n}\n',
    );
    const fn = ts.chunks.find((c) => c.level === 'function')!;
    assert.equal(fn.startLine, 1);
    assert.equal(ts.facts.find((f) => f.name === 'map')!.docstring, 'Maps things.');
  });

  it('records the lines of module-level and class-body code as segments, with that code searchable', async () => {
    const source = [
      'import os', // 1
      '', // 2
      'MESSAGE = "Working outside of the context."', // 3
      '', // 4
      '', // 5
      'class Session:', // 6
      '    """A session."""', // 7
      '    def get(self):', // 8
      '        return 1', // 9
      '', // 10
      '    __setitem__ = clear = _fail', // 11
      '', // 12
      'def helper():', // 13
      '    return MESSAGE', // 14
      '', // 15
      'current = Proxy(MESSAGE)', // 16
      '',
    ].join('\n');
    const { chunks } = await chunkSource('ctx.py', source);
    const file = chunks.find((chunk) => chunk.level === 'file')!;
    assert.deepEqual(file.segments, [
      [1, 3],
      [16, 16],
    ]);
    assert.match(file.content, /MESSAGE = "Working outside of the context\."/);
    const cls = chunks.find((chunk) => chunk.level === 'class')!;
    assert.deepEqual(cls.segments, [
      [6, 7],
      [11, 11],
    ]);
    assert.match(cls.content, /__setitem__ = clear = _fail/);
    assert.equal(chunks.find((chunk) => chunk.level === 'function')!.segments, null);
  });

  it('plans directory chunks for folders of 3 to 20 files only', () => {
    const files = (folder: string, n: number) =>
      Array.from({ length: n }, (_, i) => `${folder}/f${i}.py`);
    assert.deepEqual(planDirectoryUnits(files('two', 2)), []);
    assert.deepEqual(
      planDirectoryUnits(files('five', 5)).map((unit) => [unit.directory, unit.files.length]),
      [['five', 5]],
    );
    const flat = planDirectoryUnits(files('flat', 25));
    assert.deepEqual(flat, [], 'a folder of 25 files is too large for one summary');
    const nested = planDirectoryUnits(
      ['a', 'b', 'c', 'd', 'e'].flatMap((sub) => files(`big/${sub}`, 5)),
    );
    assert.deepEqual(
      nested.map((unit) => unit.directory).sort(),
      ['big/a', 'big/b', 'big/c', 'big/d', 'big/e'],
      '25 files split by subfolder',
    );
  });

  it('builds directory chunks with file summaries, internal imports and exports', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root);
    try {
      unwrap(await engine.index());
      const chunkIds = [...engine.store.catalog.values()]
        .filter((meta) => meta.level === 'directory')
        .map((meta) => meta.id);
      assert.deepEqual(chunkIds, ['shop::None::None::directory']);
      const text = unwrap(engine.store.texts.read(chunkIds[0]!))!;
      assert.match(text, /^Directory: shop\//);
      assert.match(
        text,
        /db\.py: Database connections, cached per path\. imports logging, sqlite3, errors\. defines Database, get_connection, reset_connections/,
      );
      assert.match(text, /service\.py imports from db\.py \(get_connection, reset_connections\)/);
      assert.match(text, /Most exported identifiers:\n {2}log_event/);
      const file = engine.store.catalog.get('shop/db.py::None::None::file')!;
      assert.equal(file.parentDirectoryId, 'shop::None::None::directory');
    } finally {
      engine.dispose();
    }
  });

  it('logs every ERROR and MISSING node with file and byte offset, and still chunks the valid parts', async () => {
    const root = scratch.tree({
      'bad.py': 'def ok():\n    return 1\n\ndef foo(\n    x = 1\n',
      'broken.ts': 'export function good() { return 1 }\nclass A { m() { g( }\n',
    });
    const engine = await openEngine(scratch, root);
    try {
      const { events } = await captureLogs(() => engine.index());
      const errors = eventsNamed(events, 'tree_sitter_error_node');
      const bad = errors.find((event) => event.file_path === 'bad.py');
      assert.ok(bad, 'an ERROR node in bad.py is logged');
      assert.equal(typeof bad!.byte_offset, 'number');
      assert.equal(bad!.level, 'warn');
      assert.ok(
        typeof bad!.surrounding_text === 'string' && (bad!.surrounding_text as string).length <= 80,
      );
      assert.ok(
        eventsNamed(events, 'tree_sitter_missing_node').some(
          (event) => event.file_path === 'broken.ts' && typeof event.byte_offset === 'number',
        ),
      );
      assert.ok(
        engine.store.catalog.has('bad.py::None::ok::function'),
        'valid functions of a broken file are still chunked',
      );
      assert.ok(engine.store.catalog.has('broken.ts::None::good::function'));
    } finally {
      engine.dispose();
    }
  });
});
