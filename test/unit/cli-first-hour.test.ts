import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { Scratch, writeTree } from '../helpers/workspace';

/** What a newcomer runs first with the built CLI (npm run build first; `npm test` does). */
const CLI = path.resolve(__dirname, '..', '..', 'dist', 'cli.js');
const ROOT = path.resolve(__dirname, '..', '..');

describe('code-oracle CLI, the first hour', () => {
  const scratch = new Scratch();
  let home: string;
  beforeEach(() => {
    home = scratch.folder('oracle-home-');
  });
  after(() => scratch.cleanup());

  function run(
    args: string[],
    options: { input?: string; env?: Record<string, string | undefined> } = {},
  ): { code: number; stdout: string; stderr: string } {
    const env: Record<string, string | undefined> = {
      ...process.env,
      CODE_ORACLE_HOME: home,
      CODE_ORACLE_MODEL: undefined,
      CODE_ORACLE_LLM_PROVIDER: undefined,
      ANTHROPIC_API_KEY: undefined,
      CODE_ORACLE_LLM_API_KEY: undefined,
      ...options.env,
    };
    const result = spawnSync(process.execPath, [CLI, ...args], {
      encoding: 'utf8',
      env: Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined)),
      ...(options.input !== undefined ? { input: options.input } : {}),
    });
    return { code: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  }

  it('prints its version', () => {
    const { version } = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      version: string;
    };
    const { code, stdout } = run(['--version']);
    assert.equal(code, 0);
    assert.equal(stdout, `code-oracle ${version}\n`);
  });

  it('without a terminal, index prints one line per stage, then the summary', () => {
    const { code, stdout, stderr } = run(['index', scratch.fixture('shop-py'), '--model', 'none']);
    assert.equal(code, 0, stderr);
    assert.deepEqual(stderr.trim().split('\n'), [
      'Finding files …',
      'Parsing (8 files) …',
      'Linking calls …',
      'Embedding …',
      'Writing the index …',
    ]);
    assert.match(stdout, /^Indexed 8 files in/m);
  });

  it('reads the question from standard input when it is -', () => {
    const root = scratch.fixture('shop-py');
    const { code, stdout, stderr } = run(['search', root, '-', '--model', 'none', '--json'], {
      input: 'reset_connections\n',
    });
    assert.equal(code, 0, stderr);
    const { spans } = JSON.parse(stdout) as { spans: { path: string }[] };
    assert.equal(spans[0]!.path, 'shop/db.py');
    const empty = run(['search', root, '-', '--model', 'none'], { input: '  \n' });
    assert.equal(empty.code, 2);
    assert.match(empty.stderr, /^error: the question read from standard input \(-\) is empty$/m);
  });

  it('remembers --exclude and --model, and refuses to silently rebuild with others', () => {
    const root = scratch.fixture('shop-py');
    const indexed = run(['index', root, '--model', 'none', '--exclude', 'shop/db.py']);
    assert.match(indexed.stdout, /^Skipped: excluded 1$/m);
    // No flags: the index keeps its options (db.py stays out, no vectors, nothing rebuilt).
    const again = JSON.parse(run(['index', root, '--json']).stdout);
    assert.equal(again.indexed, 0);
    assert.equal(again.files, 7);
    assert.equal(again.embedding.available, false);
    const stats = run(['stats', root]);
    assert.match(
      stats.stdout,
      /^Built with: --model none, --exclude shop\/db\.py, --max-file-size 1048576 \(the default\)$/m,
    );
    const conflict = run(['search', root, 'connections', '--exclude', 'shop/api.py']);
    assert.equal(conflict.code, 1);
    assert.equal(conflict.stdout, '');
    assert.match(
      conflict.stderr,
      /^error: the index of \S+ was built with --exclude shop\/db\.py, and this command asks for --exclude shop\/api\.py\. To rebuild it with the new options, run: code-oracle index \S+ --model none --exclude shop\/api\.py$/m,
    );
    const rebuilt = run(['index', root, '--exclude', 'shop/api.py', '--json']);
    assert.match(
      rebuilt.stderr,
      /^note: rebuilding with --exclude shop\/api\.py \(was --exclude shop\/db\.py\)\.$/m,
    );
    assert.equal(JSON.parse(rebuilt.stdout).skipped.excluded, 1);
  });

  it('says which model the index uses and why, in stats and after every answer', () => {
    const root = scratch.fixture('shop-py');
    const offline = { CODE_ORACLE_HUB_URL: 'http://127.0.0.1:1' };
    const indexed = run(['index', root, '--json'], { env: offline });
    assert.equal(JSON.parse(indexed.stdout).embedding.modelId, 'potion-base-2M');
    const stats = run(['stats', root], { env: offline });
    assert.match(
      stats.stdout,
      /^Embeddings: potion-base-2M \(64 dimensions\): could not download potion-code-16M \(.*\), so the index uses the bundled potion-base-2M/m,
    );
    const answer = run(['ask', root, 'where are orders created'], { env: offline });
    assert.equal(answer.code, 0, answer.stderr);
    assert.match(
      answer.stdout,
      /^fast mode · no model · confidence [\d.]+ · embeddings potion-base-2M$/m,
    );
    assert.match(
      answer.stderr,
      /^note: Embeddings: potion-base-2M .*could not download potion-code-16M/m,
    );
  });

  it('says a configured model could not answer, which one and why, and fails', () => {
    const root = scratch.fixture('shop-py');
    const ollama = run([
      'ask',
      root,
      'where are orders created',
      '--model',
      'none',
      '--provider',
      'ollama',
      '--base-url',
      'http://127.0.0.1:1/v1',
    ]);
    assert.equal(ollama.code, 1);
    assert.doesNotMatch(ollama.stdout, /No language model is configured/);
    assert.match(ollama.stdout, /^\*The language model could not answer \(/m);
    assert.match(
      ollama.stderr,
      /^error: the configured model \(openai-compatible qwen2\.5-coder:7b\) could not answer: .*127\.0\.0\.1:1.* Is the server \(Ollama, LM Studio, llama\.cpp\) running at that address\?/m,
    );
    const anthropic = run(['ask', root, 'where are orders created', '--provider', 'anthropic']);
    assert.equal(anthropic.code, 1);
    assert.match(anthropic.stderr, /could not answer: No Anthropic API key/);
  });

  it('says thinking and deep need a model instead of silently answering in fast mode', () => {
    const root = scratch.fixture('shop-py');
    for (const mode of ['thinking', 'deep']) {
      const { code, stdout, stderr } = run([
        'ask',
        root,
        'where are orders created',
        '--model',
        'none',
        '--mode',
        mode,
      ]);
      assert.equal(code, 0, stderr);
      assert.match(
        stderr,
        new RegExp(
          `^note: --mode ${mode} needs a language model and none is configured .*answering in fast mode`,
          'm',
        ),
      );
      assert.match(stdout, /No language model is configured/);
      assert.match(stdout, /^fast mode · no model/m);
    }
  });

  it('reports an index with no supported files as empty, not as nothing matching', () => {
    const root = scratch.folder();
    writeTree(root, { 'notes.txt': 'hello\n', 'data.csv': 'a,b\n' });
    const { code, stdout, stderr } = run(['search', root, 'hello', '--model', 'none']);
    assert.equal(code, 1);
    assert.doesNotMatch(stdout, /No matching code found/);
    assert.match(
      stderr,
      /^error: the index of .* is empty: the folder has no source files in a supported language \(Python, /m,
    );
  });

  it('explains a bad --max-file-size instead of the parser’s message, and refuses 0', () => {
    const root = scratch.fixture('shop-py');
    const negative = run(['index', root, '--max-file-size', '-5']);
    assert.equal(negative.code, 2);
    assert.match(
      negative.stderr,
      /^error: --max-file-size needs a whole number of bytes greater than 0, got "-5"$/m,
    );
    assert.doesNotMatch(negative.stderr, /ambiguous/);
    const zero = run(['index', root, '--max-file-size', '0']);
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /^error: --max-file-size 0 would leave every file out of the index/m);
  });
});
