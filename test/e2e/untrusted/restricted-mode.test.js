// Restricted Mode in a real VS Code: run.sh opens a copy of test/fixtures/restricted-js in a
// code-server started with workspace trust on, so the folder is not trusted. Code Oracle's resolver
// must then run none of the project's tests, ask no model and write nothing, and tell the user why.
// The fixture's tests append a line to E2E_TEST_MARKER (a file outside the workspace) whenever they
// run, on the user's files or on a patched copy alike, so any run leaves a trace.
const assert = require('assert');
const crypto = require('crypto');
const childProcess = require('child_process');
const fs = require('fs');
const http = require('http');
const os = require('os');
const path = require('path');
const vscode = require('vscode');

const EXTENSION_ID = 'code-oracle.code-oracle';
const ROOT = path.resolve(__dirname, '..', '..', '..');
const FIXTURE = path.join(ROOT, 'test', 'fixtures', 'restricted-js');
const MARKER = process.env.E2E_TEST_MARKER;
const BUGGY_LINE = 'for (let i = 1; i < items.length; i++) {';
const FIXED_LINE = 'for (let i = 0; i < items.length; i++) {';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function folder() {
  const folders = vscode.workspace.workspaceFolders || [];
  assert.strictEqual(folders.length, 1, 'expected exactly one workspace folder');
  return folders[0];
}

/** Every file under `root`, by relative path, with a hash of its content. */
function snapshot(root) {
  const files = {};
  const walk = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else
        files[path.relative(root, full)] = crypto
          .createHash('sha256')
          .update(fs.readFileSync(full))
          .digest('hex');
    }
  };
  walk(root);
  return files;
}

/**
 * Records the messages the extension shows (the extension and this suite share one `vscode` API
 * object). A modal question, such as "Run the project's tests?", is recorded and answered "no" at
 * once: a wrong path then fails the check instead of waiting on a dialog nobody answers.
 */
function recordMessages() {
  const shown = [];
  const window = vscode.window;
  const originals = {};
  for (const kind of ['showInformationMessage', 'showWarningMessage', 'showErrorMessage']) {
    originals[kind] = window[kind];
    window[kind] = (message, ...rest) => {
      const modal = typeof rest[0] === 'object' && rest[0] !== null && rest[0].modal === true;
      shown.push({ kind, message, modal });
      return modal ? Promise.resolve(undefined) : originals[kind].call(window, message, ...rest);
    };
  }
  return {
    shown,
    since: (count) => shown.slice(count),
    restore: () => Object.assign(window, originals),
  };
}

/** A chat-completions server that counts requests and refuses them all. */
function countingModel() {
  const model = { requests: 0 };
  model.server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      model.requests++;
      response.writeHead(503, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ error: { message: 'this model must not be asked' } }));
    });
  });
  return model;
}

/** Runs the fixture's test command itself (on a scratch copy): its tests write `marker`. */
function runFixtureTestsInto(marker) {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'restricted-probe-'));
  try {
    fs.cpSync(FIXTURE, copy, { recursive: true });
    // the fixture's bug makes its test fail: the exit code does not matter, the trace does
    childProcess.spawnSync('npm', ['test', '--silent'], {
      cwd: copy,
      env: { ...process.env, E2E_TEST_MARKER: marker },
      stdio: 'ignore',
      timeout: 60000,
    });
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

async function waitFor(condition, what, ms = 30000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(200))
    if (await condition()) return;
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A refused command returns at once; one that went on waits for an answer nobody gives here (a
 * preview, a question), so it is given a few seconds, not mocha's minute.
 */
function promptly(command, ...args) {
  let timer;
  return Promise.race([
    Promise.resolve(vscode.commands.executeCommand(command, ...args)),
    new Promise((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`${command} did not return within 10 s`)), 10000);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Waits for the folder's index to answer (after activation, or after a restart). */
async function indexed(api) {
  await api.ready;
  await waitFor(async () => {
    const stats = await api.client.stats(folder().uri.fsPath);
    return stats.ok && stats.value.files > 0;
  }, "the folder's index");
}

suite('Restricted Mode: an untrusted workspace runs no tests and writes nothing', () => {
  const model = countingModel();
  const cart = () => vscode.Uri.joinPath(folder().uri, 'src', 'cart.js');
  let messages;
  let api;
  let diagnostics;

  suiteSetup(async () => {
    assert.ok(MARKER, 'E2E_TEST_MARKER is not set (run through scripts/e2e/run.sh)');
    messages = recordMessages();
    await new Promise((resolve) => model.server.listen(0, '127.0.0.1', resolve));
    api = await vscode.extensions.getExtension(EXTENSION_ID).activate();
    // Code Oracle indexes and searches in Restricted Mode; the first index finishes before the
    // settings below restart the folder's engine
    await indexed(api);
    // The user has a model configured (user settings apply in Restricted Mode): only the missing
    // trust may keep Code Oracle from using it.
    const config = vscode.workspace.getConfiguration('codeOracle');
    const target = vscode.ConfigurationTarget.Global;
    await config.update('llm.summarizeLongFunctions', false, target);
    await config.update('llm.provider', 'openai-compatible', target);
    await config.update(
      'llm.baseUrl',
      `http://127.0.0.1:${model.server.address().port}/v1`,
      target,
    );
    await sleep(1500);
    await indexed(api);
    diagnostics = vscode.languages.createDiagnosticCollection('e2e-restricted');
  });

  suiteTeardown(async () => {
    diagnostics?.dispose();
    messages?.restore();
    const config = vscode.workspace.getConfiguration('codeOracle');
    for (const key of ['llm.provider', 'llm.baseUrl', 'llm.summarizeLongFunctions'])
      await config.update(key, undefined, vscode.ConfigurationTarget.Global);
    await new Promise((resolve) => model.server.close(resolve));
  });

  test('the folder is open in Restricted Mode, and its own tests leave a trace when run', () => {
    assert.strictEqual(vscode.workspace.isTrusted, false, 'the workspace is trusted');
    assert.strictEqual(fs.existsSync(MARKER), false, `${MARKER} exists before any check`);
    // the trace the checks below look for does appear when the project's tests run
    const probe = `${MARKER}.probe`;
    runFixtureTestsInto(probe);
    assert.match(fs.readFileSync(probe, 'utf8'), /^tests ran in /);
    fs.rmSync(probe);
  });

  test('"Propose a fix" asks no model, opens no preview and says why', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(cart()));
    const diagnostic = new vscode.Diagnostic(
      new vscode.Range(4, 2, 4, 43),
      'cartTotal skips the first item',
      vscode.DiagnosticSeverity.Error,
    );
    diagnostic.source = 'e2e';
    diagnostics.set(cart(), [diagnostic]);
    const before = messages.shown.length;
    await promptly('codeOracle.proposeFix', cart(), diagnostic);
    assert.strictEqual(model.requests, 0, 'the model was asked for a patch');
    const told = messages.since(before);
    assert.ok(
      told.some(
        ({ kind, message }) =>
          kind === 'showWarningMessage' &&
          /^Restricted Mode: Code Oracle proposes, runs and writes nothing/.test(message),
      ),
      `the user was not told why: ${JSON.stringify(told)}`,
    );
  });

  test('"Resolve an Issue…" is refused the same way', async () => {
    const before = messages.shown.length;
    await promptly('codeOracle.resolveIssue', 'cartTotal skips the first item of the cart');
    assert.strictEqual(model.requests, 0, 'the model was asked for a patch');
    assert.ok(
      messages.since(before).some(({ message }) => /^Restricted Mode: /.test(message)),
      `the user was not told why: ${JSON.stringify(messages.since(before))}`,
    );
  });

  test('"Run Tests for the Proposed Fix" runs nothing', async () => {
    const before = messages.shown.length;
    await promptly('codeOracle.runFixTests');
    assert.deepStrictEqual(
      messages.since(before).map(({ message }) => message),
      ['Code Oracle: propose a fix first.'],
    );
    assert.strictEqual(fs.existsSync(MARKER), false, 'the project tests ran');
  });

  test("a patch's Run Tests path asks nothing, runs no tests and says why", async () => {
    // What "Run Tests" (the notification's button, the chat's button, the command) hands to the
    // consent rule: a real patch that fixes the fixture's bug, for this folder.
    const text = fs.readFileSync(cart().fsPath, 'utf8');
    const start = text.indexOf(BUGGY_LINE);
    assert.ok(start >= 0, 'the fixture changed: its buggy line is gone');
    const patch = {
      file: 'src/cart.js',
      original: BUGGY_LINE,
      replacement: FIXED_LINE,
      explanation: 'Count the first item too.',
      confidence: 0.9,
      otherFilesAffected: [],
    };
    const proposed = {
      chatId: null,
      folder: api.folderFor(cart()),
      issue: { title: 'cartTotal skips the first item', body: '', number: null, repo: null },
      proposal: {
        analysis: {
          relevantFiles: ['src/cart.js'],
          relevantChunks: [],
          identifiers: ['cartTotal'],
          suggestedFixScope: 'single_function',
          query: 'cartTotal skips the first item',
        },
        patches: [patch],
        edits: [
          {
            file: 'src/cart.js',
            before: text,
            after: text.replace(BUGGY_LINE, FIXED_LINE),
            replacements: [{ start, end: start + BUGGY_LINE.length, text: FIXED_LINE }],
          },
        ],
        attempts: 1,
        retriedFor: [],
      },
      accepted: true,
      tests: null,
    };
    assert.ok(proposed.folder, 'Code Oracle has no index for the folder');
    const before = messages.shown.length;
    const result = await api.fixes.runTests(proposed);
    assert.strictEqual(result, null, `tests ran: ${JSON.stringify(result)}`);
    const told = messages.since(before);
    assert.deepStrictEqual(
      told.filter(({ modal }) => modal),
      [],
      'the user was asked to run tests in Restricted Mode',
    );
    assert.deepStrictEqual(
      told.map(({ message }) => message),
      [
        'Code Oracle: Restricted Mode: Code Oracle runs no tests in a workspace you have not trusted.',
      ],
    );
    assert.strictEqual(fs.existsSync(MARKER), false, 'the project tests ran');
    assert.strictEqual(proposed.tests, null);
  });

  test('no file of the workspace changed, on disk or in the editor', () => {
    assert.strictEqual(fs.existsSync(MARKER), false, 'the project tests ran');
    assert.deepStrictEqual(snapshot(folder().uri.fsPath), snapshot(FIXTURE));
    const dirty = vscode.workspace.textDocuments.filter((document) => document.isDirty);
    assert.deepStrictEqual(
      dirty.map((document) => document.uri.toString()),
      [],
    );
  });
});
