import { strict as assert } from 'node:assert';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  budgetNote,
  MAX_ITERATIONS,
  RESOLVE_SYMBOL_HINT,
  SYNTHESIZE_NOW,
} from '../../../src/engine/answer/agent';
import { runCgrag } from '../../../src/engine/answer/cgrag';
import { checkCitations } from '../../../src/engine/answer/citations';
import { Session } from '../../../src/engine/answer/sessions';
import { WorkspaceFiles } from '../../../src/engine/answer/workspace-files';
import type { Engine } from '../../../src/engine/engine';
import type {
  ConversationRequest,
  StructuredRequest,
  ToolCall,
} from '../../../src/engine/llm/client';
import { unwrap } from '../../../src/engine/util/result';
import { answerCiting, FakeLlm } from '../../helpers/fake-llm';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, Scratch } from '../../helpers/workspace';

const READONLY_QUESTION = "Why do I get 'attempt to write a readonly database' after regenerating?";

describe('answers', () => {
  const scratch = new Scratch();
  let engine: Engine;
  let root: string;
  before(async () => {
    root = scratch.fixture('shop-py');
    engine = await openEngine(scratch, root);
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const sources = () =>
    (engine as unknown as { answerer: { sources: Parameters<typeof runCgrag>[0]['sources'] } })
      .answerer.sources;

  describe('without a model', () => {
    it('answers a diagnostic question with the raise site and its mutating caller, labelled as evidence', async () => {
      const answer = unwrap(await engine.ask({ question: READONLY_QUESTION }));
      assert.equal(answer.evidenceOnly, true);
      assert.match(answer.answer, /No language model is configured/);
      assert.match(
        answer.answer,
        /“attempt to write a readonly database” is at `shop\/db\.py:24` in `Database\.connect\(\)`/,
      );
      assert.match(
        answer.answer,
        /`Database\.connect\(\)` is called by `get_connection\(\)` at `shop\/db\.py:32`, which changes `_connections`/,
      );
      assert.ok(
        answer.citations.some(
          (citation) =>
            citation.path === 'shop/db.py' && citation.startLine <= 24 && 24 <= citation.endLine,
        ),
      );
      assert.ok(answer.followUps.length >= 2);
    });

    it('cites the attached code first, even when the index holds nothing for its file', async () => {
      const content = '{\n  "name": "shop",\n  "version": 1\n  "private": true\n}';
      const answer = unwrap(
        await engine.ask({
          question: 'Why do I get this error from json (519) at package.json:4?\n"Expected comma"',
          attachment: { path: 'package.json', content, startLine: 1 },
        }),
      );
      assert.deepEqual(answer.citations[0], {
        path: 'package.json',
        startLine: 1,
        endLine: 5,
        why: 'the code attached to the question',
      });
      assert.match(
        answer.answer,
        /The code you attached, `package\.json:1-5`, comes first in the sources\./,
      );
    });

    it('quotes a message holding quotation marks whole, at the line that holds it', async () => {
      const source =
        'def load(config):\n    """Read the settings."""\n    if "name" not in config:\n        raise KeyError(\'expected "name" in the settings file\')\n    return config["name"]\n';
      // other modules, so the message's words are rare enough for word search to fetch
      const others = Object.fromEntries(
        ['cart', 'price', 'stock', 'order'].map((name) => [
          `app/${name}.py`,
          `def ${name}_total(items):\n    return sum(item.count for item in items)\n`,
        ]),
      );
      const quoted = await openEngine(
        scratch,
        scratch.tree({ 'app/settings.py': source, ...others }),
      );
      try {
        unwrap(await quoted.index());
        const answer = unwrap(
          await quoted.ask({
            question: 'Why do I get KeyError: \'expected "name" in the settings file\'?',
          }),
        );
        assert.match(
          answer.answer,
          /The message “expected "name" in the settings file” is at `app\/settings\.py:4` in `load\(\)`/,
          answer.answer,
        );
      } finally {
        quoted.dispose();
      }
    });

    it('refuses an empty question', async () => {
      const result = await engine.ask({ question: ' ' });
      assert.equal(!result.ok && result.error.code, 'invalid_input');
    });
  });

  describe('fast', () => {
    it('keeps citations inside the context, drops an invented one with a warning, and lowers confidence', async () => {
      const llm = new FakeLlm({
        complete: answerCiting('`Database.connect` refuses writes.', [
          { path: 'shop/db.py', startLine: 22, endLine: 24 },
          { path: 'shop/app.py', startLine: 999, endLine: 1000 },
        ]),
      });
      const { result, events } = await captureLogs(async () =>
        unwrap(await engine.ask({ question: READONLY_QUESTION, llm })),
      );
      assert.deepEqual(
        result.citations.map(
          (citation) => `${citation.path}:${citation.startLine}-${citation.endLine}`,
        ),
        ['shop/db.py:22-24'],
      );
      assert.equal(result.metadata.citationsDropped, 1);
      assert.equal(result.confidence, 0.75);
      assert.equal(eventsNamed(events, 'citation_dropped')[0]!.path, 'shop/app.py');
      assert.ok(
        eventsNamed(events, 'qa_completed').length === 1 &&
          eventsNamed(events, 'llm_synthesis_call').length === 1,
      );
      assert.match(
        llm.completions[0]!.prompt,
        /### shop\/db\.py:20-26 \(function Database\.connect\)\n20 \|/,
      );
    });

    it('streams the answer text as it is written', async () => {
      const llm = new FakeLlm({
        complete: answerCiting(
          'The database refuses writes because the file was opened read-only.',
          [{ path: 'shop/db.py', startLine: 24, endLine: 24 }],
        ),
      });
      const seen: string[] = [];
      const answer = unwrap(
        await engine.ask({ question: READONLY_QUESTION, llm, onText: (text) => seen.push(text) }),
      );
      assert.ok(seen.length > 3 && seen[0]!.length < seen[seen.length - 1]!.length);
      assert.equal(seen[seen.length - 1], answer.answer);
    });

    it('shows the evidence, with the reason, when the model fails', async () => {
      const llm = new FakeLlm({
        complete: {
          code: 'model_unavailable',
          message: 'Cannot reach the model server at http://127.0.0.1:9',
        },
      });
      const answer = unwrap(await engine.ask({ question: READONLY_QUESTION, llm }));
      assert.equal(answer.evidenceOnly, true);
      assert.match(
        answer.metadata.notices[0]!,
        /The model could not answer \(Cannot reach the model server/,
      );
    });

    it('stays cancelled when the question is cancelled', async () => {
      const llm = new FakeLlm({
        complete: { code: 'cancelled', message: 'The question was cancelled.' },
      });
      const result = await engine.ask({ question: READONLY_QUESTION, llm });
      assert.equal(!result.ok && result.error.code, 'cancelled');
    });
  });

  it('checks citations by containment, path normalised, repeats removed', () => {
    const evidence = [
      {
        path: 'a/b.py',
        startLine: 10,
        endLine: 20,
        text: '',
        tokens: 0,
        source: 'search' as const,
      },
    ];
    const { kept, dropped } = checkCitations(
      [
        { path: './a/b.py', startLine: 12, endLine: 14, why: '' },
        { path: 'a/b.py', startLine: 12, endLine: 14, why: 'again' },
        { path: 'a/b.py', startLine: 19, endLine: 21, why: 'runs past the end' },
        { path: 'a/b.py', startLine: 15, endLine: 13, why: 'backwards' },
      ],
      evidence,
    );
    assert.deepEqual(
      kept.map((citation) => citation.startLine),
      [12],
    );
    assert.equal(dropped.length, 2);
  });

  describe('thinking (CGRAG)', () => {
    const gapAnswer = (
      missing: string[],
      cite = { path: 'shop/db.py', startLine: 24, endLine: 24 },
    ) => answerCiting('So far: the connection is cached.', [cite], { missing });
    const search = async () => unwrap(await engine.search({ query: READONLY_QUESTION }));

    it('stops after one pass when nothing is missing', async () => {
      const outcome = unwrap(
        await runCgrag({
          sources: sources(),
          llm: new FakeLlm({ complete: gapAnswer([]) }),
          question: READONLY_QUESTION,
          search: await search(),
          session: new Session('s1', Date.now()),
        }),
      );
      assert.equal(outcome.report.passesUsed, 1);
      assert.equal(outcome.report.stoppedBecause, 'no_gaps');
    });

    it('looks up "name in file" directly and answers again with it', async () => {
      const llm = new FakeLlm({
        complete: [
          gapAnswer(['authenticate in shop/api.py']),
          gapAnswer([], { path: 'shop/api.py', startLine: 10, endLine: 10 }),
        ],
      });
      const { result, events } = await captureLogs(async () =>
        unwrap(
          await runCgrag({
            sources: sources(),
            llm,
            question: READONLY_QUESTION,
            search: await search(),
            session: new Session('s2', Date.now()),
          }),
        ),
      );
      assert.equal(result.report.passesUsed, 2);
      assert.deepEqual(result.report.gapsResolved, ['authenticate in shop/api.py']);
      assert.equal(eventsNamed(events, 'gap_resolved')[0]!.via, 'definition');
      assert.match(
        llm.completions[1]!.prompt,
        /### shop\/api\.py:6-11 \(function authenticate\)\n 6 \|/,
      );
      assert.deepEqual(
        result.written.citations.map((citation) => citation.startLine),
        [10],
      );
    });

    it('remembers what cannot be found and stops when only that is asked for again', async () => {
      const llm = new FakeLlm({ complete: gapAnswer(['frobnicate_widget() in nowhere.py']) });
      const outcome = unwrap(
        await runCgrag({
          sources: sources(),
          llm,
          question: 'qwzx vbnm',
          search: await search(),
          session: new Session('s3', Date.now()),
        }),
      );
      assert.equal(outcome.report.stoppedBecause, 'all_unresolvable');
      assert.equal(outcome.report.passesUsed, 2);
      assert.deepEqual(outcome.report.gapsUnresolved, ['frobnicate_widget() in nowhere.py']);
      assert.match(
        llm.completions[1]!.prompt,
        /Could not be found in this codebase: frobnicate_widget\(\) in nowhere\.py/,
      );
    });

    it('stops after three passes', async () => {
      const asks = ['get_connection()', 'log_event()', 'authenticate()'];
      const llm = new FakeLlm({
        complete: (_request: unknown, call: number) => gapAnswer([asks[call]!]),
      });
      const outcome = unwrap(
        await runCgrag({
          sources: sources(),
          llm,
          question: READONLY_QUESTION,
          search: await search(),
          session: new Session('s4', Date.now()),
        }),
      );
      assert.equal(outcome.report.passesUsed, 3);
      assert.equal(outcome.report.stoppedBecause, 'max_passes');
      assert.equal(llm.completions.length, 3);
    });

    it('stops when the gap budget is spent', async () => {
      const llm = new FakeLlm({
        complete: (_request: unknown, call: number) =>
          gapAnswer([['handle_login()', 'ping()'][call] ?? 'pong()']),
      });
      const outcome = unwrap(
        await runCgrag({
          sources: sources(),
          llm,
          question: READONLY_QUESTION,
          search: await search(),
          session: new Session('s5', Date.now()),
          budget: { perGap: 150, perPass: 150, total: 150 },
        }),
      );
      assert.deepEqual(outcome.report.gapsResolved, ['handle_login()']);
      assert.equal(outcome.report.stoppedBecause, 'budget');
      assert.equal(outcome.report.passesUsed, 2);
    });

    it('reuses a session for a follow-up question', async () => {
      // only the answering passes are scripted: the first names a gap, the others none
      let gapPasses = 0;
      const llm = new FakeLlm({
        complete: (request: StructuredRequest<unknown>) =>
          request.schemaName === 'AnswerWithGaps'
            ? gapAnswer(gapPasses++ ? [] : ['authenticate in shop/api.py'])
            : { code: 'model_unavailable', message: 'the classifiers fall back to heuristics' },
      });
      const first = unwrap(
        await engine.ask({ question: READONLY_QUESTION, llm, mode: 'thinking' }),
      );
      const sessionId = first.metadata.cgrag!.sessionId;
      assert.equal(first.metadata.cgrag!.contextFromCache, false);
      const second = unwrap(
        await engine.ask({
          question: 'and who calls log_event?',
          llm,
          mode: 'thinking',
          sessionId,
        }),
      );
      assert.equal(second.metadata.cgrag!.sessionId, sessionId);
      assert.equal(second.metadata.cgrag!.contextFromCache, true);
      const followUp = llm.completions
        .filter((call) => call.schemaName === 'AnswerWithGaps')
        .at(-1)!;
      assert.match(
        followUp.prompt,
        /shop\/api\.py:6-11 \(function authenticate\)/,
        'the code found for the first question is in the follow-up context',
      );
    });
  });

  describe('deep (agent)', () => {
    const call = (id: string, name: string, input: unknown): ToolCall => ({ id, name, input });
    const toolResults = (request: ConversationRequest) =>
      request.messages
        .filter((message) => message.role === 'tool')
        .flatMap((message) => (message.role === 'tool' ? message.results : []));

    it('researches with tools, caches similar searches and files, notes the budget, and cites what it read', async () => {
      const llm = new FakeLlm({
        converse: [
          { toolCalls: [call('1', 'search_code', { query: 'readonly database error' })] },
          { toolCalls: [call('2', 'search_code', { query: 'database readonly error' })] },
          {
            toolCalls: [
              call('3', 'read_file', { path: 'shop/db.py', start_line: 20, end_line: 33 }),
            ],
          },
          { toolCalls: [call('4', 'read_file', { path: 'shop/db.py' })] },
          { toolCalls: [call('5', 'read_map', {})] },
          { text: 'connect() raises when readonly; get_connection caches.' },
        ],
        complete: answerCiting(
          '`Database.connect` raises; `get_connection` caches the connection.',
          [
            { path: 'shop/db.py', startLine: 24, endLine: 24 },
            { path: 'shop/db.py', startLine: 31, endLine: 32 },
          ],
        ),
      });
      const answer = unwrap(await engine.ask({ question: READONLY_QUESTION, llm, mode: 'deep' }));
      const report = answer.metadata.agent!;
      assert.deepEqual(
        report.steps.map((step) => [step.tool, step.cached]),
        [
          ['search_code', false],
          ['search_code', true],
          ['read_file', false],
          ['read_file', false],
          ['read_map', false],
        ],
      );
      assert.equal(report.iterations, 6);
      const results = toolResults(llm.conversations[5]!);
      assert.match(results[0]!.content, /\[Iteration 1\/15, 1 tool call used\]$/);
      assert.match(results[2]!.content, /^File: shop\/db\.py \(lines 20-33 of 38\)\n20 \|/);
      assert.ok(
        results[4]!.content.includes(RESOLVE_SYMBOL_HINT),
        'the hint comes at iteration 5 when resolve_symbol is unused',
      );
      assert.match(
        results[4]!.content,
        /^shop\/\n(.*\n)*\s+api\.py — Request handlers\. \(defines authenticate, handle_login, create_order_endpoint\)$/m,
      );
      assert.deepEqual(
        answer.citations.map((citation) => citation.startLine),
        [24, 31],
      );
      assert.match(llm.completions[0]!.prompt, /Your research notes: connect\(\) raises/);
      assert.match(llm.conversations[0]!.system, /## Repository map\nshop\/\n/);
    });

    it('withdraws the tools for the last two iterations and stops at fifteen', async () => {
      const llm = new FakeLlm({
        converse: (request: ConversationRequest, i: number) =>
          request.tools.length
            ? {
                toolCalls: [
                  call(String(i), 'resolve_symbol', {
                    symbol_name: 'get_connection',
                    action: 'callers',
                  }),
                ],
              }
            : { text: 'done' },
        complete: answerCiting('x', []),
      });
      const answer = unwrap(
        await engine.ask({ question: 'who calls get_connection?', llm, mode: 'deep' }),
      );
      assert.equal(llm.conversations.length, MAX_ITERATIONS - 1);
      assert.equal(llm.conversations[12]!.tools.length, 4);
      assert.equal(llm.conversations[13]!.tools.length, 0);
      assert.ok(
        llm.conversations[13]!.messages.some(
          (message) => message.role === 'user' && message.content === SYNTHESIZE_NOW,
        ),
      );
      assert.equal(answer.metadata.agent!.toolCalls, 13);
      assert.match(
        toolResults(llm.conversations[13]!)[0]!.content,
        /called at shop\/service\.py:16 by OrderService\.create_order/,
      );
    });

    it('words the budget note by what is left', () => {
      assert.equal(budgetNote(3, 4), '[Iteration 3/15, 4 tool calls used]');
      assert.match(budgetNote(9, 9), /start wrapping up research\]$/);
      assert.match(budgetNote(12, 12), /stop researching and synthesize your answer NOW\]$/);
    });
  });

  describe('read_file', () => {
    it('refuses ../, absolute paths and symbolic links that leave the workspace', async () => {
      const outside = scratch.tree({ 'secret.txt': 'top secret' });
      const workspace = scratch.tree({ 'src/a.py': 'x = 1\n' });
      symlinkSync(path.join(outside, 'secret.txt'), path.join(workspace, 'src', 'leak.txt'));
      mkdirSync(path.join(workspace, 'inside'));
      writeFileSync(path.join(workspace, 'inside', 'ok.txt'), 'fine');
      symlinkSync(
        path.join(workspace, 'inside', 'ok.txt'),
        path.join(workspace, 'src', 'link-in.txt'),
      );
      const files = new WorkspaceFiles(workspace);
      for (const bad of [
        '../secret.txt',
        'src/../../secret.txt',
        path.join(outside, 'secret.txt'),
        'src/leak.txt',
      ]) {
        const result = await files.lines(bad);
        assert.equal(!result.ok && result.error.code, 'outside_workspace', bad);
      }
      assert.deepEqual(unwrap(await files.lines('src/a.py')).lines, ['x = 1']);
      assert.deepEqual(unwrap(await files.lines('src/link-in.txt')).lines, ['fine']);
      assert.equal(unwrap(await files.lines('src/a.py')).cached, true);
    });
  });
});
