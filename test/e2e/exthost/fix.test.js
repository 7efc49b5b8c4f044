// The resolver in a real VS Code: the light bulb on a diagnostic offers "Propose a fix", the patch
// opens in the refactor preview, applying it changes the file and discarding it leaves the file as
// it was. The model is a scripted OpenAI-compatible server on 127.0.0.1 inside the extension host.
const assert = require('assert');
const http = require('http');
const vscode = require('vscode');

const EXTENSION_ID = 'code-oracle.code-oracle';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const ORIGINAL = '        _connections[path] = Database(path).connect()\n';
const REPLACEMENT = '        _connections[path] = Database(path, readonly=False).connect()\n';
const PATCH = {
  patches: [
    {
      file: 'shop/db.py',
      original: ORIGINAL,
      replacement: REPLACEMENT,
      explanation: 'Cached connections are opened for writing explicitly.',
      confidence: 0.8,
      otherFilesAffected: [],
    },
  ],
};

/** A chat-completions server answering every request with the patch above; it counts requests. */
function scriptedModel() {
  const model = { requests: 0 };
  model.server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      model.requests++;
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          id: 'c1',
          object: 'chat.completion',
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: JSON.stringify(PATCH) },
              finish_reason: 'stop',
            },
          ],
        }),
      );
    });
  });
  return model;
}

function folder() {
  return vscode.workspace.workspaceFolders[0];
}

async function waitFor(condition, what, ms = 30000) {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(200))
    if (await condition()) return;
  throw new Error(`timed out waiting for ${what}`);
}

suite('Propose a fix in a real VS Code', () => {
  const model = scriptedModel();
  const uri = () => vscode.Uri.joinPath(folder().uri, 'shop', 'db.py');
  const range = new vscode.Range(31, 8, 31, 55);
  let api;
  let diagnostics;
  let diagnostic;

  suiteSetup(async () => {
    await new Promise((resolve) => model.server.listen(0, '127.0.0.1', resolve));
    const config = vscode.workspace.getConfiguration('codeOracle');
    // the model settings are machine-scoped (a workspace must not choose where code is sent)
    const target = vscode.ConfigurationTarget.Global;
    await config.update('llm.summarizeLongFunctions', false, target);
    await config.update('llm.provider', 'openai-compatible', target);
    await config.update(
      'llm.baseUrl',
      `http://127.0.0.1:${model.server.address().port}/v1`,
      target,
    );
    api = await vscode.extensions.getExtension(EXTENSION_ID).activate();
    await api.ready;
    // a model setting restarts the folders' engines: wait until the index answers again
    await sleep(1500);
    await waitFor(async () => {
      const stats = await api.client.stats(folder().uri.fsPath);
      return stats.ok && stats.value.files > 0;
    }, 'the index after the settings change');
    diagnostics = vscode.languages.createDiagnosticCollection('e2e-fix');
    diagnostic = new vscode.Diagnostic(
      range,
      'DatabaseError: attempt to write a readonly database',
      vscode.DiagnosticSeverity.Error,
    );
    diagnostic.source = 'e2e';
    diagnostics.set(uri(), [diagnostic]);
  });

  suiteTeardown(async () => {
    diagnostics?.dispose();
    const config = vscode.workspace.getConfiguration('codeOracle');
    for (const key of ['llm.provider', 'llm.baseUrl', 'llm.summarizeLongFunctions'])
      await config.update(key, undefined, vscode.ConfigurationTarget.Global);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    await new Promise((resolve) => model.server.close(resolve));
  });

  test('the light bulb on a diagnostic offers "Propose a fix with Code Oracle"', async () => {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri()));
    const actions = await vscode.commands.executeCommand(
      'vscode.executeCodeActionProvider',
      uri(),
      range,
      vscode.CodeActionKind.QuickFix.value,
    );
    const titles = actions.map((action) => action.title);
    assert.ok(titles.includes('Explain this error with Code Oracle'), JSON.stringify(titles));
    const propose = actions.find((action) => action.title === 'Propose a fix with Code Oracle');
    assert.ok(propose, `no "Propose a fix" among ${JSON.stringify(titles)}`);
    assert.strictEqual(propose.command.command, 'codeOracle.proposeFix');
    assert.strictEqual(propose.command.arguments[0].toString(), uri().toString());
  });

  /**
   * Runs the quick fix's command and waits until the refactor preview holds the patch: the model
   * was asked, the command has not finished and the file is still as it was (the edit waits for
   * the user). Then `decide` applies or discards it from the preview.
   */
  async function proposeAndDecide(decision) {
    const document = await vscode.workspace.openTextDocument(uri());
    const before = document.getText();
    const asked = model.requests;
    let settled = false;
    const running = Promise.resolve(
      vscode.commands.executeCommand('codeOracle.proposeFix', uri(), diagnostic),
    ).finally(() => (settled = true));
    await waitFor(() => model.requests > asked, 'the model to be asked for a patch');
    await sleep(1500);
    assert.strictEqual(settled, false, 'the patch was applied without a preview');
    assert.strictEqual(document.getText(), before, 'the file changed before the user decided');
    // changes that need confirmation start unticked in the preview: the user ticks, then applies
    if (decision === 'refactorPreview.apply') {
      await sleep(1000);
      await vscode.commands.executeCommand('list.focusFirst');
      await vscode.commands.executeCommand('refactorPreview.toggleCheckedState');
    }
    await waitFor(async () => {
      await vscode.commands.executeCommand(decision).then(undefined, () => undefined);
      return settled;
    }, `${decision} to close the preview`);
    await running;
    return { document, before };
  }

  test('discarding the refactor preview leaves the file untouched', async () => {
    const { document, before } = await proposeAndDecide('refactorPreview.discard');
    assert.strictEqual(document.getText(), before);
    assert.strictEqual(document.isDirty, false);
  });

  test('applying the refactor preview changes the file with the patch', async () => {
    const { document, before } = await proposeAndDecide('refactorPreview.apply');
    assert.strictEqual(document.getText(), before.replace(ORIGINAL, REPLACEMENT));
    assert.ok(document.getText().includes('Database(path, readonly=False)'));
    // put the fixture back for whatever runs next: the disk still holds the original text
    const restore = new vscode.WorkspaceEdit();
    restore.replace(document.uri, new vscode.Range(0, 0, document.lineCount, 0), before);
    assert.ok(await vscode.workspace.applyEdit(restore));
    assert.ok(await document.save());
    assert.strictEqual(document.getText(), before);
  });
});
