import { strict as assert } from 'node:assert';
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { FakeGitHub } from '../../helpers/fake-github';
import { FakeServer, type Reply } from '../../helpers/fake-server';
import { Scratch } from '../../helpers/workspace';

/** The built CLI, run as a user would (npm run build first; `npm test` does). */
const CLI = path.resolve(__dirname, '..', '..', '..', 'dist', 'cli.js');

/** A chat completion whose content is the given patch blocks, as an OpenAI-compatible server sends it. */
const patchReply = (...patches: object[]): Reply => ({
  json: {
    id: 'c1',
    object: 'chat.completion',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: JSON.stringify({ patches }) },
        finish_reason: 'stop',
      },
    ],
  },
});

const CART_FIX = {
  file: 'src/cart.js',
  original: '  for (let i = 1; i < items.length; i++) {\n',
  replacement: '  for (let i = 0; i < items.length; i++) {\n',
  explanation: 'The loop started at 1 and skipped the first item.',
  confidence: 0.95,
  otherFilesAffected: [],
};

const DISCOUNT_FIX = {
  file: 'pricing.py',
  original: '    return price * percent / 100\n',
  replacement: '    return price * (100 - percent) / 100\n',
  explanation: 'It returned the discount instead of the discounted price.',
  confidence: 0.9,
  otherFilesAffected: [],
};

describe('code-oracle fix (a scripted model on 127.0.0.1)', function () {
  this.timeout(120_000);
  const scratch = new Scratch();
  const model = new FakeServer();
  const github = new FakeGitHub();
  let env: NodeJS.ProcessEnv;
  before(async () => {
    const modelUrl = await model.start();
    const apiUrl = await github.start();
    env = {
      ...process.env,
      CODE_ORACLE_HOME: scratch.folder('oracle-home-'),
      CODE_ORACLE_MODEL: 'none',
      CODE_ORACLE_LLM_PROVIDER: 'openai',
      CODE_ORACLE_LLM_BASE_URL: `${modelUrl}/v1`,
      GITHUB_API_URL: apiUrl,
      GITHUB_TOKEN: 'test-token',
    };
  });
  after(async () => {
    await model.close();
    await github.close();
    scratch.cleanup();
  });

  function run(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [CLI, ...args], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (piece: Buffer) => (stdout += piece.toString()));
      child.stderr.on('data', (piece: Buffer) => (stderr += piece.toString()));
      child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
    });
  }

  it('fixes the Python fixture from a GitHub issue: the diff, pytest passing, the dry-run PR body', async () => {
    const root = scratch.fixture('fix-py');
    const before = readFileSync(path.join(root, 'pricing.py'), 'utf8');
    github.issues.set('shop/pricing#42', {
      title: 'apply_discount returns the wrong price',
      body: 'A 25% discount on 80 gives 20 instead of 60.',
    });
    model.script(patchReply(DISCOUNT_FIX));
    const { code, stdout, stderr } = await run('fix', root, '--issue', 'shop/pricing#42', '--pr');
    assert.equal(code, 0, stderr);
    assert.match(stdout, /identifiers in the index: apply_discount/);
    assert.match(stdout, /^- {4}return price \* percent \/ 100$/m);
    assert.match(stdout, /^\+ {4}return price \* \(100 - percent\) \/ 100$/m);
    assert.match(stdout, /Tests \(python3 -m pytest -q\): passed — 4 passed, 0 failed, 4 total/);
    assert.match(stdout, /dry run: nothing pushed, GitHub not called/);
    assert.match(stdout, /branch: oracle\/fix-issue-42/);
    assert.match(stdout, /> Closes #42/);
    assert.match(stdout, /Confidence:\*\* 0\.90/);
    // the issue was read; nothing else was asked of GitHub
    assert.deepEqual(
      github.requests.map((request) => `${request.method} ${request.path}`),
      ['GET /repos/shop/pricing/issues/42'],
    );
    assert.match(model.requests[0]!.body.messages.at(-1).content, /gives 20 instead of 60/);
    assert.equal(readFileSync(path.join(root, 'pricing.py'), 'utf8'), before);
    assert.equal(
      spawnSync('python3', ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], { cwd: root }).status,
      1,
    );
  });

  it('fixes the JavaScript fixture after a refused patch, verifies it with node --test and writes it', async () => {
    const root = scratch.fixture('fix-js');
    const wrong = { ...CART_FIX, original: '  for (let i = 1; i < items.length; ++i) {\n' };
    model.script(patchReply(wrong), patchReply(CART_FIX));
    const { code, stdout, stderr } = await run(
      'fix',
      root,
      'cartTotal is too low\nThe first item of the cart is not counted.',
      '--test',
      '--write',
      '--json',
    );
    assert.equal(code, 0, stderr);
    const outcome = JSON.parse(stdout);
    assert.equal(outcome.proposal.attempts, 2);
    assert.match(outcome.proposal.retriedFor[0].reason, /not found in src\/cart\.js/);
    assert.match(
      model.requests[1]!.body.messages.at(-1).content,
      /Your previous patch was refused/,
    );
    assert.equal(outcome.tests.passed, true);
    assert.equal(outcome.tests.framework, 'node');
    assert.equal(outcome.tests.totalTests, 3);
    assert.deepEqual(outcome.written, ['src/cart.js']);
    assert.match(
      outcome.diffs['src/cart.js'],
      /^\+ {2}for \(let i = 0; i < items\.length; i\+\+\) \{$/m,
    );
    assert.equal(spawnSync('npm', ['test', '--silent'], { cwd: root }).status, 0);
  });

  it('reports a patch refused twice and writes nothing', async () => {
    const root = scratch.fixture('fix-js');
    const before = readFileSync(path.join(root, 'src/cart.js'), 'utf8');
    const wrong = { ...CART_FIX, original: 'for (i = 1; i < n; i++)' };
    model.script(patchReply(wrong), patchReply(wrong));
    const { code, stderr } = await run('fix', root, 'cartTotal is too low', '--write');
    assert.equal(code, 1);
    assert.match(stderr, /refused: src\/cart\.js: The original text was not found/);
    assert.match(stderr, /could not be applied, even after it was told why/);
    assert.equal(readFileSync(path.join(root, 'src/cart.js'), 'utf8'), before);
  });

  it('says how to set a model when there is none', async () => {
    const root = scratch.fixture('fix-js');
    const saved = env;
    env = { ...env, CODE_ORACLE_LLM_PROVIDER: '' };
    try {
      const { code, stderr } = await run('fix', root, 'cartTotal is too low');
      assert.equal(code, 1);
      assert.match(stderr, /needs a language model.*Set CODE_ORACLE_LLM_PROVIDER/);
    } finally {
      env = saved;
    }
  });
});
