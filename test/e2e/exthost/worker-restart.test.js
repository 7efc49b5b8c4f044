// Runs inside the real VS Code extension host, after extension.test.js (files run in name order):
// the engine's process dies or is restarted, and the extension comes back with it.
const assert = require('assert');
const vscode = require('vscode');

const EXTENSION_ID = 'code-oracle.code-oracle';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function folderRoot() {
  return vscode.workspace.workspaceFolders[0].uri.fsPath;
}

/** Waits until the engine runs again and every folder is open and indexed in it. */
async function backInService(api, what) {
  for (let waited = 0; waited < 30000; waited += 100) {
    if (api.client.state.running && api.indexReady) break;
    await sleep(100);
  }
  assert.ok(api.client.state.running, `${what}: the engine is not running again`);
  await api.ready;
  // the folders reopen in the new engine one request at a time: give the last one a moment
  let stats = await api.client.stats(folderRoot());
  for (let waited = 0; !stats.ok && waited < 15000; waited += 250) {
    await sleep(250);
    stats = await api.client.stats(folderRoot());
  }
  assert.ok(
    stats.ok,
    `${what}: the folder is not open in the new engine: ${JSON.stringify(stats)}`,
  );
  assert.ok(stats.value.files > 0, `${what}: the reopened index is empty`);
}

suite('Code Oracle follows the engine worker', () => {
  let api;

  suiteSetup(async () => {
    api = await vscode.extensions.getExtension(EXTENSION_ID).activate();
    await api.ready;
  });

  test('a crashed engine is replaced and the folders are opened in the new one', async () => {
    const stopped = new Promise((resolve) => {
      const subscription = api.client.onDidChangeState((state) => {
        if (!state.running) {
          subscription.dispose();
          resolve(state);
        }
      });
    });
    // the engine runs in a process of its own: a crash of it is that process dying, and the
    // extension host (this process) lives on
    const crashed = api.client.processId;
    assert.ok(crashed && crashed !== process.pid, `the engine's process is ${crashed}`);
    process.kill(crashed, 'SIGKILL');
    const state = await stopped;
    assert.match(state.reason, /the engine exited \(signal SIGKILL\)/);
    await backInService(api, 'after a crash');
    assert.notEqual(api.client.processId, crashed, 'a new engine process serves the folders');
  });

  test('"Code Oracle: Restart Engine" starts a new engine with the folders open', async () => {
    await vscode.commands.executeCommand('codeOracle.restartEngine');
    await backInService(api, 'after Restart Engine');
  });
});
