import { strict as assert } from 'node:assert';
import * as path from 'node:path';
import { EngineWorkerClient, type WorkerState } from '../../src/engine/host/client';
import { crashEngine } from '../helpers/engine-process';
import { Scratch } from '../helpers/workspace';

function nextState(client: EngineWorkerClient, count: number): Promise<WorkerState[]> {
  const states: WorkerState[] = [];
  return new Promise((resolve) => {
    client.onDidChangeState((state) => {
      states.push(state);
      if (states.length === count) resolve(states);
    });
  });
}

/** The engine's state, which the editor's commands follow: stopped with a reason, running again. */
describe('engine worker state', function () {
  this.timeout(60_000);
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  function folder(root: string) {
    return {
      root,
      storeDir: path.join(scratch.folder(), 'store'),
      storageRoot: scratch.folder(),
      model: { kind: 'none' as const },
      workers: 0,
    };
  }

  it('reports a crash as stopped, with the reason, and serves requests again after restart()', async () => {
    const client = new EngineWorkerClient({ logLevel: 'warn' });
    try {
      assert.deepEqual(client.state, { running: true });
      const stopped = nextState(client, 1);
      crashEngine(client);
      const [state] = await stopped;
      assert.equal(state!.running, false);
      assert.match(!state!.running ? state!.reason : '', /the engine exited/);
      assert.deepEqual(client.state, state);
      const refused = await client.stats('/anywhere');
      assert.match(!refused.ok ? refused.error.message : '', /failed because the engine exited/);

      const running = nextState(client, 1);
      client.restart();
      assert.deepEqual(await running, [{ running: true }]);
      const root = scratch.fixture('shop-py');
      assert.ok((await client.open(folder(root))).ok);
      assert.ok((await client.index(root)).ok);
      const stats = await client.stats(root);
      assert.ok(stats.ok && stats.value.files === 8);
    } finally {
      client.dispose();
    }
  });

  it('fails requests in flight when restarted by hand, and ignores the old worker afterwards', async () => {
    const client = new EngineWorkerClient({ logLevel: 'warn' });
    try {
      const root = scratch.fixture('shop-py');
      assert.ok((await client.open(folder(root))).ok);
      const indexing = client.index(root);
      client.restart();
      const result = await indexing;
      assert.match(!result.ok ? result.error.message : '', /the engine was restarted/);
      assert.deepEqual(client.state, { running: true });
      // the new worker has no folder open until someone opens it again
      const stats = await client.stats(root);
      assert.equal(!stats.ok && stats.error.code, 'not_found');
    } finally {
      client.dispose();
    }
  });

  it('restarts itself after a crash, up to the limit, then stays stopped', async () => {
    const client = new EngineWorkerClient({
      logLevel: 'warn',
      restartAfterCrash: { times: 1, windowMs: 60_000 },
    });
    try {
      const first = nextState(client, 2);
      crashEngine(client);
      const states = await first;
      assert.deepEqual(
        states.map((state) => state.running),
        [false, true],
      );
      assert.ok((await client.close('/nothing-open')).ok, 'the restarted worker answers');

      const second = nextState(client, 1);
      crashEngine(client);
      assert.equal((await second)[0]!.running, false);
      await new Promise((resolve) => setTimeout(resolve, 200));
      assert.equal(client.state.running, false, 'a worker that keeps dying stays stopped');
    } finally {
      client.dispose();
    }
  });
});
