import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { FakeServer } from '../helpers/fake-server';
import { Scratch } from '../helpers/workspace';

/** The built CLI, run as a user would (npm run build first; `npm test` does). */
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');

describe('code-oracle CLI', () => {
  const scratch = new Scratch();
  let home: string;
  before(() => {
    home = scratch.folder('oracle-home-');
  });
  after(() => scratch.cleanup());

  function run(...args: string[]): { code: number; stdout: string; stderr: string } {
    const result = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      env: { ...process.env, CODE_ORACLE_HOME: home, CODE_ORACLE_MODEL: 'none' },
    });
    return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  }

  it('indexes a folder and prints a summary naming the four levels', () => {
    const root = scratch.fixture('shop-py');
    const { code, stdout } = run('index', root);
    assert.equal(code, 0);
    assert.match(stdout, /^Indexed 8 files in [\d.]+ s \(8 parsed, 0 unchanged, 0 removed\)$/m);
    assert.match(stdout, /^Chunks: directory 1, file 8, class 4, function 14$/m);
    assert.match(stdout, /^Facts: \d+ · parse errors: 0/m);
    assert.match(stdout, /^Skipped: none$/m);
    assert.match(
      stdout,
      /^Embeddings: none\. Lexical search only: no embedding model is configured\.$/m,
    );
    const again = JSON.parse(run('index', root, '--json').stdout);
    assert.equal(again.indexed, 0);
    assert.deepEqual(again.chunks, { directory: 1, file: 8, class: 4, function: 14 });
    const stats = run('stats', root);
    assert.match(stats.stdout, /^Files: 8 \(python 8\)$/m);
  });

  it('prints the callers tree with path:line', () => {
    const root = scratch.fixture('shop-py');
    const { code, stdout } = run('callers', 'reset_connections', '--dir', root, '--depth', '2');
    assert.equal(code, 0, stdout);
    assert.equal(
      stdout,
      'reset_connections  shop/db.py:36\n└─ OrderService.regenerate  shop/service.py:28\n',
    );
    const json = JSON.parse(run('callers', 'log_event', '--dir', root, '--json').stdout);
    assert.equal(json[0].callers.length, 4);
  });

  it('says how many possible callers there are instead of "no callers found"', () => {
    const root = scratch.fixture('receivers-js');
    const { code, stdout } = run('callers', 'proto.close', '--dir', root);
    assert.equal(code, 0, stdout);
    assert.match(stdout, /\(no resolved callers; 1 possible\)/);
    assert.match(
      stdout,
      /possible callers \(receiver not resolved\):\n {4}lib\/main\.js:13 {2}in start {2}— the type of `other` is not known/,
    );
    const resolved = run('resolve', 'proto.close', '--action', 'callers', '--dir', root).stdout;
    assert.match(resolved, /no resolved callers · 1 possible/);
    assert.match(resolved, /possible lib\/main\.js:13/);
  });

  /** A corpora file naming the shop fixture as the corpus `shop`, in `corpusRoot`. */
  function writeShopCorpora(corpusRoot: string): void {
    writeFileSync(
      path.join(corpusRoot, 'corpora.json'),
      JSON.stringify({
        corpora: [
          {
            id: 'shop',
            extract_dir: path.relative(corpusRoot, scratch.fixture('shop-py')),
            index_subfolder: 'shop',
            language: 'python',
          },
        ],
      }),
    );
  }

  it('answers a callers evaluation set for any corpora file', () => {
    const corpusRoot = scratch.folder();
    const cases = path.join(corpusRoot, 'cases.jsonl');
    writeShopCorpora(corpusRoot);
    writeFileSync(
      cases,
      `${JSON.stringify({ id: 'c1', corpus: 'shop', target: { name: 'get_connection', path: 'db.py', line: 29 }, callers: [{ path: 'service.py', line: 16 }] })}\n`,
    );
    const out = path.join(corpusRoot, 'results.jsonl');
    const { code, stdout } = run(
      'eval',
      '--callers',
      cases,
      '--corpus-root',
      corpusRoot,
      '--out',
      out,
    );
    assert.equal(code, 0, stdout);
    assert.deepEqual(JSON.parse(readFileSync(out, 'utf8')), {
      id: 'c1',
      callers: [{ path: 'service.py', line: 16 }],
    });
    assert.match(stdout, /callers: precision 1\.000, recall 1\.000 over 1 cases/);
  });

  it('eval --trace writes where each result found its chunks: every list and the ranked order', () => {
    const corpusRoot = scratch.folder();
    writeShopCorpora(corpusRoot);
    const questions = path.join(corpusRoot, 'questions.jsonl');
    writeFileSync(
      questions,
      `${JSON.stringify({ id: 'q1', corpus: 'shop', question: 'why is a readonly database refused?' })}\n`,
    );
    const answer = (...flags: string[]) => {
      const out = path.join(corpusRoot, `results${flags.length}.jsonl`);
      const eval_ = ['eval', '--questions', questions, '--corpus-root', corpusRoot, '--out', out];
      const { code, stdout } = run(...eval_, ...flags);
      assert.equal(code, 0, stdout);
      return JSON.parse(readFileSync(out, 'utf8'));
    };
    assert.equal(answer().trace, undefined, 'no trace unless asked');
    const row = answer('--trace');
    type Located = [string, number, number, string];
    const { lists, ranked } = row.trace as {
      lists: { source: string; chunks: Located[] }[];
      ranked: Located[];
    };
    const connect: Located = ['db.py', 20, 26, 'function'];
    assert.deepEqual(
      lists
        .find((list) => list.source === 'lexical')!
        .chunks.find((chunk) => chunk[0] === 'db.py' && chunk[3] === 'function'),
      connect,
    );
    const first = row.results[0] as { path: string; startLine: number; endLine: number };
    const holding = ranked.find(
      ([file, start, end]) =>
        file === first.path && start <= first.startLine && first.endLine <= end,
    );
    assert.ok(holding, 'the ranked order holds the chunk of the first span');
    assert.ok(
      lists.find((list) => list.source === 'lexical')!.chunks.length > 8,
      'each list traced deeper than the 8 hits a search trace keeps',
    );
  });

  it('searches: spans as path:start-end with why, as JSON, and the whole trace with --debug-query', () => {
    const root = scratch.fixture('shop-py');
    const plain = run('search', root, "why do I get 'attempt to write a readonly database'?");
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stdout, /^diagnostic question · (relevant|partial|irrelevant) \([\d.]+\)/m);
    assert.match(
      plain.stdout,
      /^ 1\. shop\/db\.py:20-26, [\d, -]+\n {6}20-26 {2}function Database\.connect: .*holds the message "attempt to write a readonly database"/m,
    );
    const files = [...plain.stdout.matchAll(/^ ?\d+\. (\S+):/gm)].map((match) => match[1]);
    assert.equal(new Set(files).size, files.length, 'each file is listed once');
    const asJson = JSON.parse(
      run('search', root, 'which functions call log_event?', '--json').stdout,
    );
    assert.equal(asJson.metadata.queryMode, 'analytical');
    assert.ok(
      asJson.files.length > 0 &&
        asJson.files.every(
          (file: { path: unknown; ranges: unknown[] }) =>
            typeof file.path === 'string' && file.ranges.length > 0,
        ),
    );
    assert.ok(
      asJson.spans.every(
        (span: Record<string, unknown>) =>
          typeof span.path === 'string' &&
          typeof span.startLine === 'number' &&
          typeof span.why === 'string' &&
          !('chunkId' in span),
      ),
    );
    const debug = run('search', root, 'what does get_connection return?', '--debug-query');
    assert.equal(debug.code, 0, debug.stderr);
    for (const section of [
      'preprocessor',
      'technicality',
      'mode routing',
      'retriever: lexical',
      'retriever: symbol',
      'fusion (weighted RRF)',
      'correction (CRAG)',
      'budgeted context',
      'timings (ms)',
    ]) {
      assert.ok(debug.stdout.includes(`== ${section}`), section);
    }
    assert.match(debug.stderr, /mode_classified/, 'every step is logged as it runs');
    const empty = run('search', root, '  ');
    assert.equal(empty.code, 1);
    assert.match(empty.stderr, /^error: The question is empty\.\n$/);
  });

  it('asks without a model: the evidence, labelled, with sources', () => {
    const root = scratch.fixture('shop-py');
    const { code, stdout } = run(
      'ask',
      root,
      "why do I get 'attempt to write a readonly database'?",
    );
    assert.equal(code, 0);
    assert.match(
      stdout,
      /^\*No language model is configured, so this is the evidence Code Oracle found, not a written answer\.\*$/m,
    );
    assert.match(stdout, /^Sources:\n {2}1\. shop\/db\.py:20-26 {2}function Database\.connect/m);
    assert.match(stdout, /^fast mode · no model · confidence [\d.]+ · no embeddings$/m);
  });

  it('asks a local OpenAI-compatible server, streams the answer, checks citations, and prints JSON', async () => {
    const root = scratch.fixture('shop-py');
    const answer = {
      answer: 'Database.connect raises DatabaseError when the file is read-only.',
      confidence: 0.8,
      citations: [
        { path: 'shop/db.py', startLine: 22, endLine: 24, why: 'the raise' },
        { path: 'shop/nowhere.py', startLine: 1, endLine: 2, why: 'invented' },
      ],
      followUps: ['Who calls get_connection?'],
    };
    const content = JSON.stringify(answer);
    const pieces: string[] = [];
    for (let i = 0; i < content.length; i += 16)
      pieces.push(
        `data: ${JSON.stringify({ choices: [{ delta: { content: content.slice(i, i + 16) } }] })}\n\n`,
      );
    const server = new FakeServer();
    // The first ask streams its answer; the second (--json) asks for it whole.
    server.script(
      { sse: [...pieces, 'data: [DONE]\n\n'] },
      { json: { choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }] } },
    );
    const baseUrl = `${await server.start()}/v1`;
    const ask = (...extra: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(
          process.execPath,
          [
            CLI,
            'ask',
            root,
            "why do I get 'attempt to write a readonly database'?",
            '--provider',
            'ollama',
            '--base-url',
            baseUrl,
            ...extra,
          ],
          { env: { ...process.env, CODE_ORACLE_HOME: home, CODE_ORACLE_MODEL: 'none' } },
        );
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk) => (stdout += chunk));
        child.stderr.on('data', (chunk) => (stderr += chunk));
        child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
      });
    try {
      const streamed = await ask();
      assert.equal(streamed.code, 0, streamed.stderr);
      assert.match(
        streamed.stdout,
        /^Database\.connect raises DatabaseError when the file is read-only\.\n\nSources:\n {2}1\. shop\/db\.py:22-24 {2}the raise\n\n/m,
      );
      assert.match(
        streamed.stdout,
        /fast mode · openai-compatible qwen2\.5-coder:7b · confidence 0\.65 · 1 citation outside the evidence dropped/,
      );
      assert.equal(server.requests[0]!.body.model, 'qwen2.5-coder:7b');
      assert.equal(server.requests[0]!.body.stream, true);
      const asJson = await ask('--json');
      const parsed = JSON.parse(asJson.stdout);
      assert.deepEqual(Object.keys(parsed).slice(0, 5), [
        'answer',
        'confidence',
        'citations',
        'followUps',
        'mode',
      ]);
      assert.deepEqual(parsed.citations, [
        { path: 'shop/db.py', startLine: 22, endLine: 24, why: 'the raise' },
      ]);
    } finally {
      await server.close();
    }
  });

  it('says what went wrong in one line, without a stack trace', () => {
    const missing = run('index', path.join(home, 'no-such-folder'));
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^error: Folder does not exist: .*no-such-folder\n$/);
    const unknown = run('frobnicate');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /^error: unknown command "frobnicate"/);
    const badFlag = run('index', '.', '--depth', '3');
    assert.equal(badFlag.code, 2);
    assert.match(badFlag.stderr, /^error: Unknown option '--depth'/);
    const meaningless = run(
      'eval',
      '--callers',
      'cases.jsonl',
      '--store',
      home,
      '--out',
      'r.jsonl',
    );
    assert.equal(meaningless.code, 2);
    assert.match(
      meaningless.stderr,
      /^error: eval keeps one store per corpus .*--store does not apply/,
    );
    const notFound = run('callers', 'no_such_function', '--dir', scratch.fixture('shop-py'));
    assert.equal(notFound.code, 1);
    assert.match(notFound.stderr, /error: No definition named "no_such_function" is indexed\.\n$/);
  });
});
