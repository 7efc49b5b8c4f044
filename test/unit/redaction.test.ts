import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { OpenAiCompatibleClient } from '../../src/engine/llm/openai-compatible';
import { getLogger } from '../../src/engine/log/logger';
import { redact } from '../../src/engine/util/redact';
import { FakeServer } from '../helpers/fake-server';
import { captureLogs } from '../helpers/logs';

describe('secret redaction', () => {
  const KEY = 'sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';
  const server = new FakeServer();
  let baseUrl: string;
  before(async () => {
    baseUrl = `${await server.start()}/v1`;
  });
  after(() => server.close());

  it('keeps a key that a server echoes in its error body out of the error and the logs', async () => {
    // what some proxies do: the error body repeats the request headers
    const echo = {
      status: 400,
      json: {
        error: {
          message: `bad request; headers were {"authorization": "Bearer ${KEY}", "x-api-key": "${KEY}"}`,
        },
      },
    };
    server.script(echo, echo, echo);
    const client = new OpenAiCompatibleClient({
      baseUrl,
      apiKey: KEY,
      backoff: { baseDelayMs: 1, maxDelayMs: 5 },
    });
    const { result, events } = await captureLogs(() =>
      client.complete({
        system: 'You answer.',
        prompt: 'Hello?',
        schema: z.object({ answer: z.string() }),
        schemaName: 'Answer',
      }),
    );
    assert.equal(result.ok, false);
    if (!result.ok) {
      assert.ok(!result.error.message.includes(KEY), result.error.message);
      assert.match(result.error.message, /refused the request \(400\).*\[redacted\]/);
    }
    assert.equal(server.requests[0]!.headers.authorization, `Bearer ${KEY}`, 'the key was sent');
    const logged = JSON.stringify(events);
    assert.ok(!logged.includes(KEY) && !logged.includes(KEY.slice(3)), logged);
  });

  it('removes registered keys and key-shaped values from every log event, nested fields too', async () => {
    const { events } = await captureLogs(async () =>
      getLogger('test').warn('upstream_failed', {
        error: `401 for ${KEY}`,
        detail: { header: 'Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==', list: [`token=${KEY}`] },
        count: 3,
      }),
    );
    const text = JSON.stringify(events);
    assert.ok(!text.includes(KEY) && !text.includes('dXNlcjpwYXNzd29yZDEyMw'), text);
    assert.equal(events[0]!.count, 3);
  });

  it('leaves ordinary text alone', () => {
    const text = 'def api_key_for(user): return lookup(user) # the key is cached';
    assert.equal(redact(text), text);
    assert.equal(redact('Bearer of bad news'), 'Bearer of bad news');
  });
});
