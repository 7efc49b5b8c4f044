import { strict as assert } from 'node:assert';
import { z } from 'zod';
import { AnthropicClient } from '../../../src/engine/llm/anthropic';
import type { ConversationMessage, LlmClient, ToolSpec } from '../../../src/engine/llm/client';
import { createLlmClient, llmSettingsFromEnv } from '../../../src/engine/llm/factory';
import { OpenAiCompatibleClient } from '../../../src/engine/llm/openai-compatible';
import { extractPartialStringField } from '../../../src/engine/llm/structured';
import type { LogEvent } from '../../../src/engine/log/logger';
import { FakeServer, type Reply } from '../../helpers/fake-server';
import { captureLogs, eventsNamed } from '../../helpers/logs';

const Answer = z.object({ answer: z.string().min(1), confidence: z.number().min(0).max(1) });
const ReadFile = z.object({ path: z.string() });
const READ_FILE: ToolSpec = {
  name: 'read_file',
  description: 'Reads a file of the workspace',
  schema: ReadFile,
};
const FAST_BACKOFF = { baseDelayMs: 1, maxDelayMs: 150 };
const QUESTION = {
  system: 'You answer questions about code.',
  prompt: 'What does main() do?',
  schema: Answer,
  schemaName: 'Answer',
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a request body is whatever JSON the client sent
function lastUserText(body: any): string {
  const last = body.messages.at(-1);
  return typeof last.content === 'string' ? last.content : JSON.stringify(last.content);
}

function only(events: readonly LogEvent[], name: string): LogEvent {
  const named = eventsNamed(events, name);
  assert.equal(named.length, 1, `one ${name} event, got ${named.length}`);
  return named[0]!;
}

// ---------------------------------------------------------------------------------------------
// Anthropic: the real SDK against a fake Messages API

const anthropicMessage = (content: unknown[], stopReason = 'end_turn') => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-6',
  content,
  stop_reason: stopReason,
  stop_sequence: null,
  usage: { input_tokens: 12, output_tokens: 34 },
});
const toolUse = (input: unknown, name = 'Answer', id = 'toolu_1') => ({
  json: anthropicMessage([{ type: 'tool_use', id, name, input }], 'tool_use'),
});
const anthropicError = (
  status: number,
  type: string,
  message: string,
  headers: Record<string, string> = {},
) => ({ status, headers, json: { type: 'error', error: { type, message } } });
const sse = (event: string, data: object) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;

/** A streamed Messages API answer with one content block, delivered in `pieces`. */
function anthropicStream(
  block: { type: 'tool_use'; name: string } | { type: 'text' },
  pieces: readonly string[],
): Reply {
  const start =
    block.type === 'text'
      ? { type: 'text', text: '' }
      : { type: 'tool_use', id: 'toolu_1', name: block.name, input: {} };
  const delta = (piece: string) =>
    block.type === 'text'
      ? { type: 'text_delta', text: piece }
      : { type: 'input_json_delta', partial_json: piece };
  return {
    sse: [
      sse('message_start', {
        type: 'message_start',
        message: {
          ...anthropicMessage([], null as unknown as string),
          usage: { input_tokens: 12, output_tokens: 1 },
        },
      }),
      sse('content_block_start', { type: 'content_block_start', index: 0, content_block: start }),
      ...pieces.map((piece) =>
        sse('content_block_delta', { type: 'content_block_delta', index: 0, delta: delta(piece) }),
      ),
      sse('content_block_stop', { type: 'content_block_stop', index: 0 }),
      sse('message_delta', {
        type: 'message_delta',
        delta: {
          stop_reason: block.type === 'text' ? 'end_turn' : 'tool_use',
          stop_sequence: null,
        },
        usage: { output_tokens: 34 },
      }),
      sse('message_stop', { type: 'message_stop' }),
    ],
  };
}

describe('LLM clients', () => {
  describe('AnthropicClient', () => {
    const server = new FakeServer();
    let baseUrl: string;
    before(async () => {
      baseUrl = await server.start();
    });
    after(() => server.close());
    // Not the default model: the SDK prints a deprecation warning for each call to that one.
    const client = (options: Partial<ConstructorParameters<typeof AnthropicClient>[0]> = {}) =>
      new AnthropicClient({
        apiKey: 'test-key',
        baseUrl,
        model: 'claude-sonnet-4-6',
        backoff: FAST_BACKOFF,
        ...options,
      });

    it('forces the schema as a tool and parses its input into the zod type', async () => {
      server.script(toolUse({ answer: 'It starts the server.', confidence: 0.9 }));
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.deepEqual(result, {
        ok: true,
        value: { answer: 'It starts the server.', confidence: 0.9 },
      });
      const [request] = server.requests;
      assert.equal(request!.path, '/v1/messages');
      assert.equal(request!.headers.authorization, 'Bearer test-key');
      assert.deepEqual(request!.body.tool_choice, { type: 'tool', name: 'Answer' });
      assert.equal(request!.body.tools[0].input_schema.type, 'object');
      assert.deepEqual(request!.body.tools[0].input_schema.required, ['answer', 'confidence']);
      assert.equal(request!.body.model, 'claude-sonnet-4-6');
      const started = only(events, 'llm_call_started');
      assert.deepEqual(
        [started.backend, started.model, started.output_schema],
        ['anthropic', 'claude-sonnet-4-6', 'Answer'],
      );
      assert.equal(
        started.prompt_token_estimate,
        Math.round(`${QUESTION.system}\n\n${QUESTION.prompt}`.length / 4),
      );
      const completed = only(events, 'llm_call_completed');
      assert.deepEqual([completed.retry_count, completed.success], [0, true]);
      assert.equal(typeof completed.latency_ms, 'number');
    });

    it('sends a failed validation back to the model and logs the retry', async () => {
      server.script(
        toolUse({ answer: '', confidence: 2 }),
        toolUse({ answer: 'Fixed.', confidence: 0.5 }),
      );
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.deepEqual(result, { ok: true, value: { answer: 'Fixed.', confidence: 0.5 } });
      const retry = only(events, 'llm_call_retry');
      assert.equal(retry.level, 'warn');
      assert.equal(retry.attempt, 1);
      assert.match(retry.validation_error as string, /answer/);
      assert.match(retry.validation_error as string, /confidence/);
      const second = server.requests[1]!.body;
      assert.equal(second.messages.length, 3, 'the question, the invalid answer, the feedback');
      assert.equal(second.messages[1].role, 'assistant');
      assert.match(second.messages[1].content, /"confidence":2/);
      assert.match(lastUserText(second), /did not match the Answer schema/);
      assert.match(lastUserText(second), /confidence/);
      assert.equal(only(events, 'llm_call_completed').retry_count, 1);
    });

    it('gives up after three invalid answers with a typed error', async () => {
      server.script(toolUse({ answer: 1 }), toolUse({ answer: 2 }), toolUse({ answer: 3 }));
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.error.code, 'model_unavailable');
      assert.match(
        !result.ok ? result.error.message : '',
        /^The model gave no valid Answer in 3 attempts; the last problem: .*expected string.*\.$/,
      );
      assert.equal(
        eventsNamed(events, 'llm_call_retry').length,
        2,
        'the third failure is not followed by a retry',
      );
      const failed = only(events, 'llm_call_failed');
      assert.equal(failed.level, 'error');
      assert.equal(failed.total_attempts, 3);
      assert.match(failed.last_validation_error as string, /expected string/);
      assert.equal(typeof failed.total_latency_ms, 'number');
      assert.equal(eventsNamed(events, 'llm_call_completed').length, 0);
    });

    it('streams the answer field as it is written, then returns the parsed object', async () => {
      const pieces = [
        '{"ans',
        'wer": "It st',
        'arts\\n the \\"se',
        'rver\\u0021',
        '", "confidence": 0.8}',
      ];
      server.script(anthropicStream({ type: 'tool_use', name: 'Answer' }, pieces));
      const seen: string[] = [];
      const result = await client().complete({
        ...QUESTION,
        stream: { field: 'answer', onText: (text) => seen.push(text) },
      });
      assert.deepEqual(result, {
        ok: true,
        value: { answer: 'It starts\n the "server!', confidence: 0.8 },
      });
      assert.deepEqual(seen, ['It st', 'It starts\n the "se', 'It starts\n the "server!']);
      assert.equal(server.requests[0]!.body.stream, true);
    });

    it('streams a field cut anywhere, even inside escapes and surrogate pairs, as it reads in one go', async () => {
      const json =
        '{"answer": "caf\\u00e9 \\"q\\" a\\nb smile \\ud83d\\ude00 end", "confidence": 0.5}';
      const pieces = [...json];
      server.script(anthropicStream({ type: 'tool_use', name: 'Answer' }, pieces));
      const seen: string[] = [];
      const result = await client().complete({
        ...QUESTION,
        stream: { field: 'answer', onText: (text) => seen.push(text) },
      });
      assert.deepEqual(result, {
        ok: true,
        value: { answer: 'café "q" a\nb smile 😀 end', confidence: 0.5 },
      });
      const expected: string[] = [];
      for (let end = 1; end <= json.length; end++) {
        const text = extractPartialStringField(json.slice(0, end), 'answer');
        if (text !== null && text !== (expected[expected.length - 1] ?? '')) expected.push(text);
      }
      assert.deepEqual(seen, expected);
    });

    it('starts the streamed field again from empty when an answer fails validation', async () => {
      server.script(
        anthropicStream({ type: 'tool_use', name: 'Answer' }, [
          '{"answer": "Wrong"',
          ', "confidence": 7}',
        ]),
        anthropicStream({ type: 'tool_use', name: 'Answer' }, [
          '{"answer": "Right", "confidence": 0.7}',
        ]),
      );
      const seen: string[] = [];
      const result = await client().complete({
        ...QUESTION,
        stream: { field: 'answer', onText: (text) => seen.push(text) },
      });
      assert.equal(result.ok, true);
      assert.deepEqual(seen, ['Wrong', '', 'Right']);
    });

    it('backs off on 429 for as long as Retry-After asks, capped', async () => {
      server.script(
        anthropicError(429, 'rate_limit_error', 'Slow down', { 'retry-after': '1' }),
        toolUse({ answer: 'After the wait.', confidence: 1 }),
      );
      const start = performance.now();
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      const elapsed = performance.now() - start;
      assert.equal(result.ok, true);
      assert.equal(server.requests.length, 2);
      // Retry-After: 1 (s) capped at maxDelayMs 150; without the header the wait would be 1 ms.
      assert.ok(elapsed >= 140 && elapsed < 900, `waited ${elapsed} ms`);
      const retry = only(events, 'llm_http_retry');
      assert.deepEqual([retry.try, retry.delay_ms], [1, 150]);
      assert.match(retry.reason as string, /429/);
      assert.equal(
        only(events, 'llm_call_completed').retry_count,
        0,
        'an HTTP retry is not a validation retry',
      );
    });

    it('gives up with a clear error after three 5xx answers', async () => {
      const overloaded = anthropicError(529, 'overloaded_error', 'Overloaded');
      server.script(anthropicError(500, 'api_error', 'Internal error'), overloaded, overloaded);
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.deepEqual(result, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message: 'Gave up after 3 tries: the Anthropic API answered 529 (Overloaded).',
        },
      });
      assert.equal(server.requests.length, 3);
      assert.equal(eventsNamed(events, 'llm_http_retry').length, 2);
      assert.equal(only(events, 'llm_call_failed').total_attempts, 1);
    });

    it('returns cancelled promptly when the caller aborts', async () => {
      server.script('hang');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 50);
      const start = performance.now();
      const { result, events } = await captureLogs(() =>
        client().complete({ ...QUESTION, signal: controller.signal }),
      );
      assert.equal(!result.ok && result.error.code, 'cancelled');
      assert.ok(performance.now() - start < 1000);
      assert.equal(
        eventsNamed(events, 'llm_call_failed').length,
        0,
        'a cancellation is not logged as a failure',
      );
      assert.equal(only(events, 'llm_call_cancelled').level, 'info');
    });

    it('returns cancelled at once for a signal aborted before the call', async () => {
      const result = await client().stream({
        system: 's',
        prompt: 'p',
        signal: AbortSignal.abort(),
      });
      assert.equal(!result.ok && result.error.code, 'cancelled');
    });

    it('times out a request that gets no answer', async () => {
      server.script('hang');
      const result = await client({ timeoutMs: 200 }).complete(QUESTION);
      assert.deepEqual(result, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message: 'The Anthropic API did not answer within 0.2 s.',
        },
      });
    });

    it('says how to set a missing API key, at call time', async () => {
      const keyless = new AnthropicClient({ baseUrl, model: 'claude-sonnet-4-6' });
      server.script();
      const { result, events } = await captureLogs(() => keyless.complete(QUESTION));
      assert.deepEqual(result, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message:
            'No Anthropic API key: set ANTHROPIC_API_KEY (or the codeOracle.llm.apiKey setting).',
        },
      });
      assert.equal(server.requests.length, 0);
      assert.equal(only(events, 'llm_call_failed').error_code, 'model_unavailable');
    });

    it('says the key was refused on 401, without retrying', async () => {
      server.script(anthropicError(401, 'authentication_error', 'invalid x-api-key'));
      const result = await client().complete(QUESTION);
      assert.deepEqual(result, {
        ok: false,
        error: { code: 'model_unavailable', message: 'The Anthropic API key was refused (401).' },
      });
      assert.equal(server.requests.length, 1);
    });

    it('says where it could not connect', async () => {
      const unreachable = new AnthropicClient({
        apiKey: 'k',
        baseUrl: await closedPortUrl(),
        model: 'claude-sonnet-4-6',
        backoff: FAST_BACKOFF,
      });
      const result = await unreachable.complete(QUESTION);
      assert.match(
        !result.ok ? result.error.message : '',
        /^Cannot reach the Anthropic API at http:\/\/127\.0\.0\.1:\d+: .*ECONNREFUSED.*\.$/,
      );
    });

    it('runs a tool call round trip with tool_use ids and tool_result blocks', async () => {
      server.script({
        json: anthropicMessage(
          [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_7', name: 'read_file', input: { path: 'main.py' } },
          ],
          'tool_use',
        ),
      });
      const question: ConversationMessage = { role: 'user', content: 'What does main.py do?' };
      const first = await client().converse({
        system: 'Agent',
        messages: [question],
        tools: [READ_FILE],
      });
      assert.deepEqual(first, {
        ok: true,
        value: {
          text: 'Let me look.',
          toolCalls: [{ id: 'toolu_7', name: 'read_file', input: { path: 'main.py' } }],
          stopReason: 'tool_use',
        },
      });
      assert.deepEqual(server.requests[0]!.body.tools, [
        {
          name: 'read_file',
          description: 'Reads a file of the workspace',
          input_schema: {
            type: 'object',
            properties: { path: { type: 'string' } },
            required: ['path'],
            additionalProperties: false,
          },
        },
      ]);

      server.script({ json: anthropicMessage([{ type: 'text', text: 'It prints hello.' }]) });
      const turn = first.ok ? first.value : assert.fail('first turn');
      const messages: ConversationMessage[] = [
        question,
        { role: 'assistant', content: turn.text, toolCalls: turn.toolCalls },
        {
          role: 'tool',
          results: [{ callId: 'toolu_7', name: 'read_file', content: 'print("hello")' }],
        },
      ];
      const { result: second, events } = await captureLogs(() =>
        client().converse({ system: 'Agent', messages, tools: [] }),
      );
      assert.deepEqual(second, {
        ok: true,
        value: { text: 'It prints hello.', toolCalls: [], stopReason: 'end' },
      });
      const body = server.requests[0]!.body;
      assert.equal(body.tools, undefined, 'no tools: the model must answer in text');
      assert.deepEqual(body.messages.slice(1), [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_7', name: 'read_file', input: { path: 'main.py' } },
          ],
        },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: 'toolu_7', content: 'print("hello")' }],
        },
      ]);
      assert.equal(only(events, 'llm_call_started').output_schema, 'conversation');
      assert.equal(only(events, 'llm_call_completed').output_schema, 'conversation');
    });

    it('streams prose as text deltas', async () => {
      server.script(anthropicStream({ type: 'text' }, ['Hello', ', ', 'world.']));
      const deltas: string[] = [];
      const { result, events } = await captureLogs(() =>
        client().stream({
          system: 'Be brief.',
          prompt: 'Greet.',
          onText: (delta) => deltas.push(delta),
        }),
      );
      assert.deepEqual(result, { ok: true, value: 'Hello, world.' });
      assert.deepEqual(deltas, ['Hello', ', ', 'world.']);
      assert.equal(only(events, 'llm_call_completed').output_schema, 'text');
    });

    it('logs the prompt text only when prompt logging is on', async () => {
      server.script(
        toolUse({ answer: 'a', confidence: 1 }),
        toolUse({ answer: 'a', confidence: 1 }),
      );
      const quiet = await captureLogs(() => client().complete(QUESTION));
      assert.equal(eventsNamed(quiet.events, 'llm_prompt_text').length, 0);
      const verbose = await captureLogs(() => client({ logPrompts: true }).complete(QUESTION));
      const prompt = only(verbose.events, 'llm_prompt_text');
      assert.equal(prompt.level, 'debug');
      assert.match(prompt.prompt as string, /What does main\(\) do\?/);
    });
  });

  // -------------------------------------------------------------------------------------------
  // OpenAI-compatible: fetch against a fake chat completions server

  describe('OpenAiCompatibleClient', () => {
    const server = new FakeServer();
    let baseUrl: string;
    before(async () => {
      baseUrl = `${await server.start()}/v1`;
    });
    after(() => server.close());
    const client = (
      options: Partial<ConstructorParameters<typeof OpenAiCompatibleClient>[0]> = {},
    ) => new OpenAiCompatibleClient({ baseUrl, backoff: FAST_BACKOFF, ...options });
    const completion = (message: object, finishReason = 'stop'): Reply => ({
      json: {
        id: 'c1',
        object: 'chat.completion',
        choices: [
          { index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason },
        ],
      },
    });
    const chunks = (pieces: readonly string[]): Reply => ({
      sse: [
        ...pieces.map(
          (piece) =>
            `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: piece } }] })}\n\n`,
        ),
        'data: [DONE]\n\n',
      ],
    });

    it('asks for the JSON schema, describes it in the system prompt and parses a fenced answer', async () => {
      server.script(
        completion({
          content: '```json\n{"answer": "It starts the server.", "confidence": 0.6}\n```',
        }),
      );
      const { result, events } = await captureLogs(() =>
        client({ apiKey: 'local-key' }).complete(QUESTION),
      );
      assert.deepEqual(result, {
        ok: true,
        value: { answer: 'It starts the server.', confidence: 0.6 },
      });
      const [request] = server.requests;
      assert.equal(request!.path, '/v1/chat/completions');
      assert.equal(request!.headers.authorization, 'Bearer local-key');
      assert.equal(request!.body.model, 'qwen2.5-coder:7b');
      const format = request!.body.response_format;
      assert.deepEqual(
        [
          format.type,
          format.json_schema.name,
          format.json_schema.strict,
          format.json_schema.schema.type,
        ],
        ['json_schema', 'Answer', true, 'object'],
      );
      assert.equal(request!.body.messages[0].role, 'system');
      assert.match(
        request!.body.messages[0].content,
        /^You answer questions about code\.\n\n.*JSON Schema:\n\{"type":"object"/s,
      );
      assert.equal(only(events, 'llm_call_completed').backend, 'openai-compatible');
    });

    it('retries with the validation error in the conversation', async () => {
      server.script(
        completion({ content: 'Sure! Here is the answer.' }),
        completion({ content: '{"answer": "Now JSON.", "confidence": 0.4}' }),
      );
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.equal(result.ok, true);
      assert.match(only(events, 'llm_call_retry').validation_error as string, /not valid JSON/);
      const messages = server.requests[1]!.body.messages;
      assert.deepEqual(messages.slice(2, 3), [
        { role: 'assistant', content: 'Sure! Here is the answer.' },
      ]);
      assert.match(messages[3].content, /not valid JSON/);
    });

    it('streams the answer field over server-sent events', async () => {
      server.script(chunks(['{"answer":', ' "Line one', '\\nline two', '", "confidence": 0.3}']));
      const seen: string[] = [];
      const result = await client().complete({
        ...QUESTION,
        stream: { field: 'answer', onText: (text) => seen.push(text) },
      });
      assert.deepEqual(result, {
        ok: true,
        value: { answer: 'Line one\nline two', confidence: 0.3 },
      });
      assert.deepEqual(seen, ['Line one', 'Line one\nline two']);
      assert.equal(server.requests[0]!.body.stream, true);
    });

    it('streams prose as text deltas', async () => {
      server.script(chunks(['Hel', 'lo.']));
      const deltas: string[] = [];
      const result = await client().stream({
        system: 's',
        prompt: 'p',
        onText: (delta) => deltas.push(delta),
      });
      assert.deepEqual(result, { ok: true, value: 'Hello.' });
      assert.deepEqual(deltas, ['Hel', 'lo.']);
    });

    it('tries again after a connection reset', async () => {
      server.script('reset', completion({ content: '{"answer": "Back.", "confidence": 1}' }));
      const { result, events } = await captureLogs(() => client().complete(QUESTION));
      assert.equal(result.ok, true);
      assert.match(only(events, 'llm_http_retry').reason as string, /was reset/);
    });

    it('says to start the server when nothing listens', async () => {
      const url = await closedPortUrl();
      const result = await new OpenAiCompatibleClient({ baseUrl: url }).complete(QUESTION);
      assert.deepEqual(result, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message: `Cannot reach the model server at ${url} — is it running (for Ollama: \`ollama serve\`)?`,
        },
      });
    });

    it('says to pull a model the server does not have', async () => {
      server.script({
        status: 404,
        json: {
          error: {
            message: 'model "qwen2.5-coder:7b" not found, try pulling it first',
            type: 'api_error',
          },
        },
      });
      const result = await client().complete(QUESTION);
      assert.deepEqual(result, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message: `The model server at ${baseUrl} has no model qwen2.5-coder:7b (for Ollama: \`ollama pull qwen2.5-coder:7b\`).`,
        },
      });
    });

    it('times out and cancels', async () => {
      server.script('hang');
      const timedOut = await client({ timeoutMs: 150 }).stream({ system: 's', prompt: 'p' });
      assert.deepEqual(timedOut, {
        ok: false,
        error: {
          code: 'model_unavailable',
          message: `The model server at ${baseUrl} did not answer within 0.15 s.`,
        },
      });
      server.script('hang');
      const controller = new AbortController();
      setTimeout(() => controller.abort(), 30);
      const cancelled = await client().converse({
        system: 's',
        messages: [{ role: 'user', content: 'q' }],
        tools: [],
        signal: controller.signal,
      });
      assert.equal(!cancelled.ok && cancelled.error.code, 'cancelled');
    });

    it('runs a tool call round trip, passing unparsable arguments on as the raw string', async () => {
      const toolCalls = [
        {
          id: 'call_1',
          type: 'function',
          function: { name: 'read_file', arguments: '{"path": "main.py"}' },
        },
        { id: 'call_2', type: 'function', function: { name: 'read_file', arguments: '{"path": ' } },
      ];
      server.script(completion({ content: null, tool_calls: toolCalls }));
      const question: ConversationMessage = { role: 'user', content: 'What does main.py do?' };
      const first = await client().converse({
        system: 'Agent',
        messages: [question],
        tools: [READ_FILE],
      });
      const turn = first.ok ? first.value : assert.fail('first turn');
      assert.deepEqual(turn, {
        text: '',
        toolCalls: [
          { id: 'call_1', name: 'read_file', input: { path: 'main.py' } },
          { id: 'call_2', name: 'read_file', input: '{"path": ' },
        ],
        stopReason: 'tool_use',
      });
      assert.deepEqual(server.requests[0]!.body.tools, [
        {
          type: 'function',
          function: {
            name: 'read_file',
            description: 'Reads a file of the workspace',
            parameters: {
              type: 'object',
              properties: { path: { type: 'string' } },
              required: ['path'],
              additionalProperties: false,
            },
          },
        },
      ]);

      server.script(completion({ content: 'It prints hello.' }));
      const results = [
        { callId: 'call_1', name: 'read_file', content: 'print("hello")' },
        { callId: 'call_2', name: 'read_file', content: 'path: expected string', isError: true },
      ];
      const second = await client().converse({
        system: 'Agent',
        messages: [
          question,
          { role: 'assistant', content: '', toolCalls: turn.toolCalls },
          { role: 'tool', results },
        ],
        tools: [READ_FILE],
      });
      assert.deepEqual(second, {
        ok: true,
        value: { text: 'It prints hello.', toolCalls: [], stopReason: 'end' },
      });
      assert.deepEqual(server.requests[0]!.body.messages.slice(2), [
        // Parsed arguments go back re-serialized; unparsable ones exactly as the model wrote them.
        {
          role: 'assistant',
          content: '',
          tool_calls: [
            { ...toolCalls[0], function: { name: 'read_file', arguments: '{"path":"main.py"}' } },
            toolCalls[1],
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'print("hello")' },
        { role: 'tool', tool_call_id: 'call_2', content: 'Error: path: expected string' },
      ]);
    });
  });

  // -------------------------------------------------------------------------------------------

  describe('extractPartialStringField', () => {
    const cases: [string, string, string | null][] = [
      ['{"answer": "Hello"', 'answer', 'Hello'],
      ['{"answer": "Hello", "x": 1}', 'answer', 'Hello'],
      ['{"answer": "He', 'answer', 'He'],
      ['{"answer": "a\\nb \\"q\\" c\\\\d \\/ \\t"', 'answer', 'a\nb "q" c\\d / \t'],
      ['{"answer": "caf\\u00e9"', 'answer', 'café'],
      ['{"answer": "caf\\u00', 'answer', 'caf'],
      ['{"answer": "line\\', 'answer', 'line'],
      ['{"answer": "smile \\ud83d\\ude00"', 'answer', 'smile 😀'],
      ['{"answer": "smile \\ud83d', 'answer', 'smile '],
      ['{"answer": "', 'answer', ''],
      ['{"answer": ', 'answer', null],
      ['{"answer"', 'answer', null],
      ['{"other": "text"}', 'answer', null],
      ['{"answer": 42}', 'answer', null],
      ['', 'answer', null],
      [
        '{"meta": {"answer": "inner", "list": [1, "]}", {"a": "}"}]}, "n": -1.5e3, "ok": true, "answer": "outer"',
        'answer',
        'outer',
      ],
      ['{"meta": {"answer": "inner"', 'answer', null],
      ['{"count": 12', 'answer', null],
      ['{ "answer" : "spaced" ', 'answer', 'spaced'],
      ['{"an\\u0073wer": "escaped key"', 'answer', 'escaped key'],
    ];
    for (const [json, field, expected] of cases) {
      it(`${JSON.stringify(json)} → ${JSON.stringify(expected)}`, () =>
        assert.equal(extractPartialStringField(json, field), expected));
    }
  });

  describe('settings', () => {
    it('uses no model unless a provider is chosen, even with an API key around', () => {
      assert.deepEqual(llmSettingsFromEnv({ ANTHROPIC_API_KEY: 'k' }), {
        ok: true,
        value: { provider: 'none', logPrompts: false },
      });
      assert.equal(createLlmClient({ provider: 'none' }), null);
    });

    it('reads the provider, model, server and key from the environment', () => {
      const anthropic = llmSettingsFromEnv({
        CODE_ORACLE_LLM_PROVIDER: 'anthropic',
        ANTHROPIC_API_KEY: 'k',
        CODE_ORACLE_LOG_PROMPTS: '1',
      });
      assert.deepEqual(anthropic, {
        ok: true,
        value: { provider: 'anthropic', apiKey: 'k', logPrompts: true },
      });
      const ollama = llmSettingsFromEnv({
        CODE_ORACLE_LLM_PROVIDER: 'ollama',
        CODE_ORACLE_LLM_MODEL: 'llama3.2',
        CODE_ORACLE_LLM_BASE_URL: 'http://box:11434/v1',
        ANTHROPIC_API_KEY: 'not-for-ollama',
      });
      assert.deepEqual(ollama, {
        ok: true,
        value: {
          provider: 'openai-compatible',
          model: 'llama3.2',
          baseUrl: 'http://box:11434/v1',
          logPrompts: false,
        },
      });
      const overridden = llmSettingsFromEnv(
        { CODE_ORACLE_LLM_PROVIDER: 'openai', CODE_ORACLE_LLM_MODEL: 'm' },
        { model: 'from-settings', apiKey: undefined },
      );
      assert.equal(overridden.ok && overridden.value.model, 'from-settings');
    });

    it('rejects an unknown provider and builds the named clients', () => {
      const bad = llmSettingsFromEnv({ CODE_ORACLE_LLM_PROVIDER: 'gpt' });
      assert.match(
        !bad.ok ? bad.error.message : '',
        /^CODE_ORACLE_LLM_PROVIDER=gpt is not one of anthropic, openai-compatible, openai, ollama, none\.$/,
      );
      const clients: (LlmClient | null)[] = [
        createLlmClient({ provider: 'anthropic' }),
        createLlmClient({ provider: 'openai-compatible', model: 'phi4' }),
      ];
      assert.deepEqual(
        clients.map((c) => [c?.backend, c?.model]),
        [
          ['anthropic', 'claude-sonnet-4-6'],
          ['openai-compatible', 'phi4'],
        ],
      );
    });
  });
});

/** The URL of a port nothing listens on: opened, then closed. */
async function closedPortUrl(): Promise<string> {
  const probe = new FakeServer();
  const url = await probe.start();
  await probe.close();
  return url;
}
