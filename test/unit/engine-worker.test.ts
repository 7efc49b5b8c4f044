import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EngineWorkerClient } from '../../src/engine/host/client';
import type { RemoteCall } from '../../src/engine/host/remote-llm';
import { ok } from '../../src/engine/util/result';
import type { IndexProgress } from '../../src/engine/index/indexer';
import { crashEngine } from '../helpers/engine-process';
import { threadNiceValues } from '../helpers/threads';
import { Scratch, writeTree } from '../helpers/workspace';
import { getPriority } from 'node:os';
import { existsSync, readFileSync } from 'node:fs';
import type { LogEvent } from '../../src/engine/log/logger';

/** The engine in its own process, driven through the typed protocol the extension uses. */
describe('engine worker', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  let client: EngineWorkerClient;
  before(() => {
    client = new EngineWorkerClient({ logLevel: 'warn' });
  });
  after(() => {
    client.dispose();
    scratch.cleanup();
  });

  function folder(root: string) {
    return {
      root,
      storeDir: path.join(scratch.folder(), 'store'),
      storageRoot: scratch.folder(),
      model: { kind: 'none' as const },
      workers: 0,
    };
  }

  it('opens, indexes with progress, searches, traces and updates a folder', async () => {
    const root = scratch.fixture('shop-py');
    const opened = await client.open(folder(root));
    assert.ok(opened.ok, JSON.stringify(opened));
    const progress: IndexProgress[] = [];
    const summary = await client.index(root, (event) => progress.push(event));
    assert.ok(summary.ok);
    assert.equal(summary.value.files, 8);
    assert.deepEqual(
      [...new Set(progress.map((event) => event.stage))],
      ['walk', 'parse', 'facts', 'embed', 'write'],
    );
    const spans = await client.search(root, 'readonly database error');
    assert.ok(spans.ok && spans.value.spans.some((span) => span.path === 'shop/db.py'));
    const trace = await client.trace(root, 'reset_connections', 2);
    assert.ok(
      trace.ok && trace.value[0]!.callers[0]!.symbol.qualifiedName === 'OrderService.regenerate',
    );
    const changes: string[][] = [];
    client.onDidChangeIndex((change) => changes.push(change.paths));
    writeTree(root, { 'shop/extra.py': 'def extra():\n    return 1\n' });
    const updated = await client.update(root, [path.join(root, 'shop/extra.py')]);
    assert.ok(updated.ok && updated.value.indexed === 1);
    assert.deepEqual(changes, [['shop/extra.py']]);
    const stats = await client.stats(root);
    assert.ok(stats.ok && stats.value.files === 9);
  });

  it('runs in a process of its own, every thread below the priority of the editor, which keeps its own (Linux)', async function () {
    if (process.platform !== 'linux') this.skip();
    const editor = getPriority();
    const engine = new EngineWorkerClient({ logLevel: 'warn' });
    try {
      const root = scratch.tree({ 'a.py': 'def a():\n    return 1\n' });
      // a parse pool of its own: the parse worker threads must be lowered too
      assert.ok((await engine.open({ ...folder(root), workers: 1 })).ok);
      assert.ok((await engine.index(root)).ok);
      const pid = engine.processId!;
      assert.notEqual(pid, process.pid);
      const nice = threadNiceValues(pid);
      assert.ok(nice.length > 1, 'the engine process runs threads');
      assert.deepEqual(
        nice.filter((value) => value !== 10),
        [],
        'every thread of the engine process is at nice 10',
      );
      assert.equal(getPriority(), editor);
    } finally {
      engine.dispose();
    }
  });

  it('gives the engine process the memory settings and runs it as Node under Electron', async function () {
    if (process.platform !== 'linux') this.skip();
    const engine = new EngineWorkerClient({ logLevel: 'warn' });
    try {
      assert.ok((await engine.close('/nothing-open')).ok, 'the engine answers');
      const environment = new Map(
        readFileSync(`/proc/${engine.processId}/environ`, 'utf8')
          .split('\0')
          .map((entry) => [
            entry.slice(0, entry.indexOf('=')),
            entry.slice(entry.indexOf('=') + 1),
          ]),
      );
      assert.equal(
        environment.get('MALLOC_TRIM_THRESHOLD_'),
        process.env.MALLOC_TRIM_THRESHOLD_ ?? '131072',
      );
      assert.equal(environment.get('MALLOC_ARENA_MAX'), process.env.MALLOC_ARENA_MAX ?? '2');
      assert.equal(environment.get('ELECTRON_RUN_AS_NODE'), '1');
    } finally {
      engine.dispose();
    }
  });

  it('ends the engine process on dispose, which frees the index lock of a run it cut short', async () => {
    const engine = new EngineWorkerClient({ logLevel: 'warn' });
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`m${i}.py`] = `def f${i}():\n    return ${i}\n`;
    const root = scratch.tree(files);
    const options = folder(root);
    assert.ok((await engine.open(options)).ok);
    const pid = engine.processId!;
    // the run holds the lock while it parses, until it commits
    const indexing = engine.index(
      root,
      (progress) => progress.stage === 'parse' && engine.dispose(),
    );
    const result = await indexing;
    assert.match(!result.ok ? result.error.message : '', /the engine was shut down/);
    await waitUntil(() => !processRuns(pid));
    assert.equal(existsSync(path.join(options.storeDir, 'index.lock')), false);
  });

  it('passes on what the engine process writes to its output as log events, and says how it exited', async () => {
    // Node writes a warning to stderr when a process exits with --trace-exit: the engine leaves
    // through process.exit when stopped by a signal from outside (as a system shutdown does)
    const options = process.env.NODE_OPTIONS;
    process.env.NODE_OPTIONS = `${options ?? ''} --trace-exit`;
    const engine = new EngineWorkerClient({ logLevel: 'warn' });
    if (options === undefined) delete process.env.NODE_OPTIONS;
    else process.env.NODE_OPTIONS = options;
    try {
      const events: LogEvent[] = [];
      engine.onLog((event) => events.push(event));
      const exited = new Promise<string>((resolve) => engine.onDidExit(resolve));
      assert.ok((await engine.close('/nothing-open')).ok);
      process.kill(engine.processId!, 'SIGTERM');
      assert.equal(await exited, 'the engine exited (code 143)');
      await waitUntil(() => events.some((event) => event.event === 'engine_output'));
      const output = events.filter((event) => event.event === 'engine_output');
      assert.ok(
        output.some((event) => /Exited the environment with code 143/.test(String(event.line))),
        JSON.stringify(output),
      );
      assert.ok(output.every((event) => event.level === 'warn' && event.stream === 'stderr'));
    } finally {
      engine.dispose();
    }
  });

  it('fails a request made after the engine stopped, instead of leaving it unanswered', async () => {
    const stopping = new EngineWorkerClient({ logLevel: 'warn' });
    try {
      const exited = new Promise<string>((resolve) => stopping.onDidExit(resolve));
      assert.ok((await stopping.close('/nothing-open')).ok);
      crashEngine(stopping);
      assert.match(await exited, /the engine exited \(signal SIGKILL\)/);
      const closed = await stopping.close(scratch.folder());
      assert.equal(closed.ok, false);
      assert.match(
        !closed.ok ? closed.error.message : '',
        /The request failed because the engine exited/,
      );
    } finally {
      stopping.dispose();
    }
  });

  it('runs opens and closes of a folder in order: two opens and a close leave nothing open', async () => {
    const root = scratch.fixture('shop-py');
    const [first, second, closed] = await Promise.all([
      client.open(folder(root)),
      client.open(folder(root)),
      client.close(root),
    ]);
    assert.ok(first.ok && second.ok && closed.ok);
    const stats = await client.stats(root);
    assert.equal(!stats.ok && stats.error.code, 'not_found');
  });

  it('answers with typed errors: unknown folders, missing folders, cancelled runs', async () => {
    const unknown = await client.search('/not/open', 'x');
    assert.ok(!unknown.ok && unknown.error.code === 'not_found');
    const missing = await client.open(folder(path.join(scratch.folder(), 'gone')));
    assert.ok(!missing.ok && /Folder does not exist/.test(missing.error.message));
    const files: Record<string, string> = {};
    for (let i = 0; i < 400; i++) files[`m${i}.py`] = `def f${i}():\n    return ${i}\n`;
    const root = scratch.tree(files);
    assert.ok((await client.open(folder(root))).ok);
    const controller = new AbortController();
    const run = client.index(root, () => controller.abort(), controller.signal);
    const result = await run;
    assert.ok(!result.ok && result.error.code === 'cancelled', JSON.stringify(result));
    const resumed = await client.index(root);
    assert.ok(resumed.ok && resumed.value.files === 400, 'a cancelled run finishes next time');
  });

  it('answers through the worker: evidence-only, and with a model the editor runs, streamed, cancellable', async () => {
    const root = scratch.fixture('shop-py');
    assert.ok((await client.open(folder(root))).ok);
    assert.ok((await client.index(root)).ok);
    const question = "why do I get 'attempt to write a readonly database'?";
    const plain = await client.ask(root, { question, mode: 'fast', llm: { provider: 'none' } });
    assert.ok(
      plain.ok && plain.value.evidenceOnly && plain.value.citations[0]!.path === 'shop/db.py',
    );

    const calls: RemoteCall[] = [];
    client.setLlmHandler(async (call, onDelta) => {
      calls.push(call);
      const json = JSON.stringify({
        answer: 'connect() refuses writes on read-only files.',
        confidence: 0.9,
        citations: [{ path: 'shop/db.py', startLine: 24, endLine: 24, why: 'the raise' }],
        followUps: [],
      });
      // a model streams over time (the worker passes on the latest text at most every 50 ms)
      for (let i = 0; i < json.length; i += 10) {
        onDelta(json.slice(i, i + 10));
        await new Promise((resolve) => setTimeout(resolve, 60));
      }
      return ok(json);
    });
    const texts: string[] = [];
    const answered = await client.ask(
      root,
      { question, mode: 'fast', llm: { provider: 'vscode', model: 'id:test-model' } },
      { onText: (text) => texts.push(text) },
    );
    assert.ok(answered.ok, JSON.stringify(answered));
    assert.equal(answered.value.answer, 'connect() refuses writes on read-only files.');
    assert.deepEqual(answered.value.metadata.model, { backend: 'vscode', name: 'id:test-model' });
    assert.equal(calls[0]!.kind, 'text');
    assert.equal(calls[0]!.model, 'id:test-model');
    assert.ok(
      texts.length > 2 && texts[texts.length - 1] === answered.value.answer,
      'the answer streams through both threads',
    );

    let sawAbort = false;
    client.setLlmHandler(
      (_call, _onDelta, signal) =>
        new Promise((resolve) =>
          signal.addEventListener('abort', () => {
            sawAbort = true;
            resolve(ok('{}'));
          }),
        ),
    );
    const controller = new AbortController();
    const pending = client.ask(
      root,
      { question, mode: 'fast', llm: { provider: 'vscode' } },
      {},
      controller.signal,
    );
    setTimeout(() => controller.abort(), 300);
    const cancelled = await pending;
    assert.ok(!cancelled.ok && cancelled.error.code === 'cancelled', JSON.stringify(cancelled));
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.ok(sawAbort, 'the editor is told to stop the model call');

    // a model handler that throws (VS Code refusing the request) still answers the worker
    client.setLlmHandler(() =>
      Promise.reject(new Error('the user declined the language model request')),
    );
    const refused = await client.ask(root, { question, mode: 'fast', llm: { provider: 'vscode' } });
    assert.ok(refused.ok && refused.value.evidenceOnly, JSON.stringify(refused));
    assert.match(
      refused.value.metadata.notices[0]!,
      /the user declined the language model request/,
    );
    client.setLlmHandler(null);
  });

  it('serves code lenses and language-model tools: an outline with caller counts, tool text', async () => {
    const root = scratch.fixture('shop-py');
    assert.ok((await client.open(folder(root))).ok);
    assert.ok((await client.index(root)).ok);
    const outline = await client.outline(root, 'shop/db.py');
    assert.ok(outline.ok);
    assert.deepEqual(
      outline.value.map((entry) => [
        entry.qualifiedName,
        entry.kind,
        entry.startLine,
        entry.callers,
      ]),
      [
        ['Database', 'class', 12, 1],
        ['Database.__init__', 'method', 15, 0],
        ['Database.connect', 'method', 20, 1],
        ['get_connection', 'function', 29, 1],
        ['reset_connections', 'function', 36, 1],
      ],
    );
    const traced = await client.tool(root, 'trace_callers', {
      symbol_name: 'reset_connections',
      depth: 2,
    });
    assert.ok(traced.ok);
    assert.match(
      traced.value,
      /^reset_connections \(shop\/db\.py:36\)\n {2}← OrderService\.regenerate \(calls at shop\/service\.py:28\)/,
    );
    const bad = await client.tool(root, 'resolve_symbol', { symbol_name: 'x' });
    assert.ok(!bad.ok && /Invalid input for resolve_symbol/.test(bad.error.message));
  });
});

/** Polls until `done` holds (events that cross a process boundary arrive in their own time). */
async function waitUntil(done: () => boolean, timeoutMs = 10_000): Promise<void> {
  const started = Date.now();
  while (!done()) {
    if (Date.now() - started > timeoutMs) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
