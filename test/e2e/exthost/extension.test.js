// Runs inside the real VS Code extension host (code-server, Node 24), against the extension loaded
// from this repository (extensionDevelopmentPath) and a scratch copy of test/fixtures/shop-py.
const assert = require('assert');
const path = require('path');
const vscode = require('vscode');

const EXTENSION_ID = 'code-oracle.code-oracle'; // package.json publisher.name
const ROOT = path.resolve(__dirname, '..', '..', '..');
const COMMANDS = ['codeOracle.reindex', 'codeOracle.clearIndex', 'codeOracle.showLog'];

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** The workspace folder run.sh opened (a copy of the fixture). */
function folder() {
  const folders = vscode.workspace.workspaceFolders || [];
  assert.strictEqual(folders.length, 1, 'expected exactly one workspace folder');
  return folders[0];
}

/**
 * What the engine worker holds for the folder. activate() returns the extension's context (Ctx);
 * asking its engine client is the one way to tell "the command finished" from "the index works":
 * reindex resolves even when indexing failed (the failure only reaches the status bar).
 */
async function indexStats(api) {
  assert.ok(api && api.client && typeof api.client.stats === 'function', 'activate() should return the Ctx, with client.stats()');
  const result = await api.client.stats(folder().uri.fsPath);
  assert.ok(result.ok, `engine stats failed: ${JSON.stringify(result.error)}`);
  return result.value;
}

const pythonFiles = () => vscode.workspace.findFiles('**/*.py').then((uris) => uris.length);
const chunkCount = (stats) => Object.values(stats.chunks).reduce((a, b) => a + b, 0);

suite('Code Oracle in a real VS Code extension host', () => {
  let api;

  test('runs in VS Code 1.139 on Node 24 with the fixture open', async () => {
    assert.match(vscode.version, /^1\.139\./);
    assert.match(process.version, /^v24\./);
    assert.ok(await pythonFiles() >= 1, 'the workspace has no Python files');
  });

  test('the extension is present, loaded from this repository, and activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} not found`);
    assert.strictEqual(ext.extensionPath, ROOT, 'not the development copy');
    api = await ext.activate();
    assert.ok(ext.isActive);
    assert.ok(api, 'activate() returned nothing');
  });

  test('its commands are registered', async () => {
    const all = await vscode.commands.getCommands(true);
    for (const command of COMMANDS) assert.ok(all.includes(command), `${command} is not registered`);
  });

  test('the first index (started by activation) completes in the engine worker', async () => {
    await api.ready; // the Ctx's promise for every folder's first index
    const stats = await indexStats(api);
    assert.strictEqual(stats.files, await pythonFiles());
    assert.ok(chunkCount(stats) >= stats.files, `too few chunks: ${JSON.stringify(stats.chunks)}`);
    assert.ok(stats.facts > 0, 'no definitions were extracted');
  });

  test('codeOracle.reindex completes and leaves a working index', async () => {
    await vscode.commands.executeCommand('codeOracle.reindex');
    const stats = await indexStats(api);
    assert.strictEqual(stats.files, await pythonFiles());
    assert.ok(chunkCount(stats) >= stats.files);
  });

  test('saving an edited file works and the index picks the change up', async () => {
    const before = await indexStats(api);
    const uri = vscode.Uri.joinPath(folder().uri, 'shop', 'util.py');
    const doc = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(doc);
    const end = doc.lineAt(doc.lineCount - 1).range.end;
    assert.ok(await editor.edit((b) => b.insert(end, '\n\n\ndef e2e_added_function():\n    """Added by the e2e suite."""\n    return 42\n')));
    assert.ok(doc.isDirty);
    assert.strictEqual(await doc.save(), true, 'save failed');
    assert.ok(!doc.isDirty);
    // The extension re-indexes saved files after a 400 ms debounce: wait for the new definition.
    let after = before;
    for (let i = 0; i < 100 && after.facts <= before.facts; i++) {
      await sleep(100);
      after = await indexStats(api);
    }
    assert.ok(after.facts > before.facts, `the saved definition was not indexed (facts ${before.facts} -> ${after.facts})`);
    assert.strictEqual(after.files, before.files);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});
