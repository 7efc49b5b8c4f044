import { strict as assert } from 'node:assert';
import { checkedResult } from '../../src/engine/host/client';
import { forkEngine } from '../../src/engine/host/engine-process';
import { METHODS, WorkerMessage } from '../../src/engine/host/protocol';

/** The worker protocol's pairs: requests checked by the worker, responses by the client. */
describe('worker protocol', function () {
  this.timeout(30_000);

  it('pairs every method with a request and a response schema', () => {
    for (const [method, pair] of Object.entries(METHODS)) {
      assert.ok(pair.request.safeParse, `${method} has a request schema`);
      assert.ok(pair.response.safeParse, `${method} has a response schema`);
    }
  });

  it('passes a response that fits its method and refuses one that does not, naming the field', () => {
    const stats = {
      root: '/r',
      storeDir: '/s',
      files: 2,
      skippedFiles: {},
      chunks: { directory: 0, file: 2, class: 0, function: 3 },
      facts: 3,
      languages: { python: 2 },
      embedding: { available: false, modelId: null, dimensions: 0, reason: 'none', note: null },
      updatedAt: '2026-01-01T00:00:00Z',
    };
    assert.deepEqual(checkedResult('stats', { ok: true, value: stats }), {
      ok: true,
      value: stats,
    });
    const broken = checkedResult('stats', { ok: true, value: { ...stats, files: 'two' } });
    assert.ok(!broken.ok);
    assert.equal(broken.error.code, 'io_error');
    assert.match(broken.error.message, /answer to stats did not match the protocol \(files: /);
    const failed = checkedResult('stats', {
      ok: false,
      error: { code: 'not_found', message: 'No index is open for /r.' },
    });
    assert.deepEqual(failed, {
      ok: false,
      error: { code: 'not_found', message: 'No index is open for /r.' },
    });
  });

  it('has the engine process refuse a request whose params do not fit its method, naming the field', async () => {
    const worker = forkEngine('error');
    try {
      const response = new Promise<unknown>((resolve) =>
        worker.on('message', (raw: unknown) => {
          const message = WorkerMessage.parse(raw);
          if (message.type === 'response') resolve(message);
        }),
      );
      worker.send({ type: 'request', id: 7, method: 'search', params: { root: '/r' } });
      const answered = (await response) as { id: number; result: { ok: boolean; error: unknown } };
      assert.equal(answered.id, 7);
      assert.equal(answered.result.ok, false);
      assert.match(
        JSON.stringify(answered.result.error),
        /"code":"invalid_input".*Malformed search request \(query: /,
      );
    } finally {
      worker.kill();
    }
  });
});
