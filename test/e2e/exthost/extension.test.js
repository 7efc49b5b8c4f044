// Runs inside the real VS Code extension host (code-server, Node 24), against the extension loaded
// from this repository (extensionDevelopmentPath) and a scratch copy of test/fixtures/shop-py.
const assert = require('assert');
const path = require('path');
const vscode = require('vscode');

const EXTENSION_ID = 'code-oracle.code-oracle'; // package.json publisher.name
const ROOT = path.resolve(__dirname, '..', '..', '..');
// every command the manifest contributes must be registered by activation
const COMMANDS = require(path.join(ROOT, 'package.json')).contributes.commands.map(
  (entry) => entry.command,
);

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
  assert.ok(
    api && api.client && typeof api.client.stats === 'function',
    'activate() should return the Ctx, with client.stats()',
  );
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
    assert.ok((await pythonFiles()) >= 1, 'the workspace has no Python files');
  });

  test('the extension is present, loaded from this repository, and activates', async () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext, `${EXTENSION_ID} not found`);
    assert.strictEqual(ext.extensionPath, ROOT, 'not the development copy');
    api = await ext.activate();
    assert.ok(ext.isActive);
    assert.ok(api, 'activate() returned nothing');
  });

  test('every command it contributes is registered', async () => {
    assert.ok(COMMANDS.length >= 8, `package.json contributes only ${COMMANDS.join(', ')}`);
    const all = await vscode.commands.getCommands(true);
    for (const command of COMMANDS)
      assert.ok(all.includes(command), `${command} is not registered`);
  });

  test('the first index (started by activation) completes in the engine worker', async () => {
    await api.ready; // the Ctx's promise for every folder's first index
    const stats = await indexStats(api);
    assert.strictEqual(stats.files, await pythonFiles());
    assert.ok(chunkCount(stats) >= stats.files, `too few chunks: ${JSON.stringify(stats.chunks)}`);
    assert.ok(stats.facts > 0, 'no definitions were extracted');
  });

  test('offline, the index uses the model shipped in the extension and says why', async () => {
    // run.sh points the model hub at a blocked port: the default model cannot be downloaded
    await api.ready;
    const { embedding } = await indexStats(api);
    assert.strictEqual(embedding.available, true, embedding.reason);
    assert.strictEqual(embedding.modelId, 'potion-base-2M');
    assert.match(
      embedding.note,
      /^could not download potion-code-16M \(.*\), so the index uses the bundled potion-base-2M/,
    );
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
    assert.ok(
      await editor.edit((b) =>
        b.insert(
          end,
          '\n\n\ndef e2e_added_function():\n    """Added by the e2e suite."""\n    return 42\n',
        ),
      ),
    );
    assert.ok(doc.isDirty);
    const saved = await doc.save();
    if (!saved) {
      // save() answers false without a reason: say what the editor and the disk hold.
      const onDisk = Buffer.from(await vscode.workspace.fs.readFile(uri)).toString('utf8');
      assert.fail(
        `save failed: the document is ${doc.isDirty ? 'still dirty' : 'clean'}, ` +
          `the file on disk ${onDisk.includes('e2e_added_function') ? 'has' : 'lacks'} the edit`,
      );
    }
    assert.ok(!doc.isDirty);
    // The extension re-indexes saved files after a 400 ms debounce: wait for the new definition.
    let after = before;
    for (let i = 0; i < 100 && after.facts <= before.facts; i++) {
      await sleep(100);
      after = await indexStats(api);
    }
    assert.ok(
      after.facts > before.facts,
      `the saved definition was not indexed (facts ${before.facts} -> ${after.facts})`,
    );
    assert.strictEqual(after.files, before.files);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('the code-lens provider puts "N callers" over the functions of a fixture file', async () => {
    const uri = vscode.Uri.joinPath(folder().uri, 'shop', 'service.py');
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
    const lenses = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri);
    const ours = lenses.filter(
      (lens) => lens.command && lens.command.command === 'codeOracle.showCallers',
    );
    const byLine = new Map(ours.map((lens) => [lens.range.start.line + 1, lens.command]));
    // __init__ 9, create_order 13 (called by api.create_order_endpoint), _validate 22, regenerate 26
    assert.deepStrictEqual(
      [...byLine.keys()].sort((a, b) => a - b),
      [9, 13, 22, 26],
    );
    assert.strictEqual(byLine.get(13).title, '1 caller');
    assert.strictEqual(byLine.get(26).title, 'no callers found');
    assert.deepStrictEqual(byLine.get(13).arguments.slice(1), ['create_order', 13]);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('in an unsaved edit the lenses stay on their definitions', async () => {
    const uri = vscode.Uri.joinPath(folder().uri, 'shop', 'service.py');
    const document = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(document);
    assert.ok(await editor.edit((b) => b.insert(new vscode.Position(0, 0), '# one\n# two\n')));
    try {
      const lenses = await vscode.commands.executeCommand('vscode.executeCodeLensProvider', uri);
      const lines = lenses
        .filter((lens) => lens.command && lens.command.command === 'codeOracle.showCallers')
        .map((lens) => lens.range.start.line + 1)
        .sort((a, b) => a - b);
      assert.deepStrictEqual(lines, [11, 15, 24, 28], 'each lens moved down with its definition');
    } finally {
      await vscode.commands.executeCommand('workbench.action.files.revert');
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });

  test('the lenses follow the index: a caller added and saved is counted', async () => {
    const service = vscode.Uri.joinPath(folder().uri, 'shop', 'service.py');
    const createOrderLens = async () => {
      const lenses = await vscode.commands.executeCommand(
        'vscode.executeCodeLensProvider',
        service,
      );
      const lens = lenses.find(
        (candidate) => candidate.command && candidate.range.start.line === 12,
      );
      return lens && lens.command.title;
    };
    assert.strictEqual(await createOrderLens(), '1 caller');
    const api = await vscode.workspace.openTextDocument(
      vscode.Uri.joinPath(folder().uri, 'shop', 'api.py'),
    );
    const editor = await vscode.window.showTextDocument(api);
    const end = api.lineAt(api.lineCount - 1).range.end;
    assert.ok(
      await editor.edit((b) =>
        b.insert(
          end,
          '\n\n\ndef reorder_endpoint(request):\n    service = OrderService(request["db"])\n    return service.create_order(request["previous_items"])\n',
        ),
      ),
    );
    assert.strictEqual(await api.save(), true);
    let title;
    for (let i = 0; i < 100 && (title = await createOrderLens()) !== '2 callers'; i++)
      await sleep(100);
    assert.strictEqual(title, '2 callers');
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  test('a call the index cannot resolve is counted as possible, never as none', async () => {
    const service = vscode.Uri.joinPath(folder().uri, 'shop', 'service.py');
    const regenerateLens = async () => {
      const lenses = await vscode.commands.executeCommand(
        'vscode.executeCodeLensProvider',
        service,
      );
      const lens = lenses.find(
        (candidate) => candidate.command && candidate.range.start.line === 25,
      );
      return lens && lens.command.title;
    };
    assert.strictEqual(await regenerateLens(), 'no callers found');
    // A second `regenerate` makes `service.regenerate()` on an untyped receiver ambiguous.
    const jobs = vscode.Uri.joinPath(folder().uri, 'shop', 'jobs.py');
    await vscode.workspace.fs.writeFile(
      jobs,
      Buffer.from(
        'class Draft:\n    def regenerate(self):\n        return None\n\n\n' +
          'def regenerate_all(services):\n    for service in services:\n        service.regenerate()\n',
      ),
    );
    try {
      let title;
      for (let i = 0; i < 100 && (title = await regenerateLens()) === 'no callers found'; i++)
        await sleep(100);
      assert.strictEqual(title, 'no resolved callers · 1 possible');
      // the lens opens the Callers tree, where the possible caller has a group of its own
      const lenses = await vscode.commands.executeCommand(
        'vscode.executeCodeLensProvider',
        service,
      );
      const lens = lenses.find(
        (candidate) => candidate.command && candidate.range.start.line === 25,
      );
      await vscode.commands.executeCommand(lens.command.command, ...(lens.command.arguments || []));
      const [root] = await api.callersTree.getChildren();
      assert.ok(root, 'the Callers tree is empty');
      const groups = (await api.callersTree.getChildren(root)).filter(
        (child) => child.type === 'group',
      );
      const possible = groups.find((child) => child.label.startsWith('Possible callers'));
      assert.ok(
        possible,
        `no "Possible callers" group: ${JSON.stringify(groups.map((g) => g.label))}`,
      );
      const sites = await api.callersTree.getChildren(possible);
      assert.deepStrictEqual(
        sites.map((site) => `${site.path}:${site.line}`),
        ['shop/jobs.py:8'],
      );
      assert.ok(sites[0].reason, 'the possible caller does not say why it is unresolved');
    } finally {
      await vscode.workspace.fs.delete(jobs);
    }
  });

  test('the code-action provider offers "Explain this error" on a diagnostic', async () => {
    const uri = vscode.Uri.joinPath(folder().uri, 'shop', 'db.py');
    const diagnostics = vscode.languages.createDiagnosticCollection('e2e');
    try {
      const range = new vscode.Range(23, 8, 23, 60);
      const diagnostic = new vscode.Diagnostic(
        range,
        'DatabaseError: attempt to write a readonly database',
        vscode.DiagnosticSeverity.Error,
      );
      diagnostic.source = 'e2e';
      diagnostics.set(uri, [diagnostic]);
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
      const actions = await vscode.commands.executeCommand(
        'vscode.executeCodeActionProvider',
        uri,
        range,
        vscode.CodeActionKind.QuickFix.value,
      );
      const explain = actions.find(
        (action) => action.title === 'Explain this error with Code Oracle',
      );
      assert.ok(
        explain,
        `no "Explain this error" among ${JSON.stringify(actions.map((action) => action.title))}`,
      );
      assert.strictEqual(explain.command.command, 'codeOracle.explainError');
      assert.strictEqual(explain.command.arguments[0].toString(), uri.toString());
      assert.strictEqual(explain.command.arguments[1].message, diagnostic.message);
      assert.strictEqual(explain.kind.value, vscode.CodeActionKind.QuickFix.value);
    } finally {
      diagnostics.dispose();
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    }
  });

  test('the engine answers in the extension host with no model: citations inside the workspace', async () => {
    const result = await api.client.ask(folder().uri.fsPath, {
      question: "Why do I get 'attempt to write a readonly database'?",
      mode: 'fast',
      llm: { provider: 'none' },
    });
    assert.ok(result.ok, `ask failed: ${JSON.stringify(result.error)}`);
    assert.strictEqual(result.value.evidenceOnly, true);
    assert.ok(
      result.value.citations.some(
        (citation) =>
          citation.path === 'shop/db.py' && citation.startLine <= 24 && citation.endLine >= 24,
      ),
      JSON.stringify(result.value.citations),
    );
  });
});
