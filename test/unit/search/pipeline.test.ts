import { strict as assert } from 'node:assert';
import { rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Engine } from '../../../src/engine/engine';
import type { SearchResult } from '../../../src/engine/search/pipeline';
import { MAX_QUERY_CHARACTERS } from '../../../src/engine/search/preprocess';
import { unwrap } from '../../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, POTION_MODEL, Scratch } from '../../helpers/workspace';

/** The search pipeline end to end on the shop fixture, with the real embedding model. */
describe('search pipeline', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    engine = await openEngine(scratch, scratch.fixture('shop-py'), {
      model: { kind: 'directory', path: POTION_MODEL },
    });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const search = async (
    query: string,
    extra: Partial<Parameters<Engine['search']>[0]> = {},
  ): Promise<SearchResult> => unwrap(await engine.search({ query, ...extra }));
  const cites = (result: SearchResult, path: string, line: number) =>
    result.spans.findIndex(
      (span) => span.path === path && span.startLine <= line && line <= span.endLine,
    );

  it("embeds the index's vocabulary while indexing, so a question after it embeds no index word", async () => {
    const fresh = await openEngine(scratch, scratch.fixture('shop-py'), {
      model: { kind: 'directory', path: POTION_MODEL },
    });
    try {
      const indexing = await captureLogs(() => fresh.index());
      unwrap(indexing.result);
      const [embedded] = eventsNamed(indexing.events, 'nearest_words_embedded');
      assert.ok(embedded, 'the index run did not embed its words');
      assert.ok((embedded.total as number) > 20, JSON.stringify(embedded));
      const asking = await captureLogs(() =>
        fresh.search({ query: 'why is the database readonly?' }),
      );
      unwrap(asking.result);
      assert.deepEqual(eventsNamed(asking.events, 'nearest_words_embedded'), []);
    } finally {
      fresh.dispose();
    }
  });

  describe('mode strategies', () => {
    it('diagnostic: finds the raise site of a quoted message first, then the caller that mutates the cache', async () => {
      const result = await search(
        "Why do I get 'attempt to write a readonly database' after regenerating?",
      );
      assert.equal(result.metadata.queryMode, 'diagnostic');
      assert.equal(cites(result, 'shop/db.py', 24), 0, 'the raise site leads');
      assert.match(
        result.spans[0]!.why,
        /holds the message "attempt to write a readonly database"/,
      );
      const mutating = result.spans.findIndex(
        (span) => span.path === 'shop/db.py' && span.startLine <= 32 && 32 <= span.endLine,
      );
      assert.ok(
        mutating > 0 && mutating < 5,
        `get_connection (which fills the cache and calls connect) is near the top, at ${mutating}`,
      );
      assert.match(result.spans[mutating]!.why, /calls Database\.connect .*changes _connections/);
    });

    it('exploratory: returns the call path from the entry point in order', async () => {
      const result = await search('Trace what happens when a request hits handle_login');
      assert.equal(result.metadata.queryMode, 'exploratory');
      const flow = result.metadata.flow!.split('\n');
      const at = (name: string) => flow.findIndex((line) => line.includes(`${name}()`));
      assert.ok(
        at('handle_login') === 0 &&
          at('handle_login') < at('authenticate') &&
          at('authenticate') < at('log_event'),
        flow.join('\n'),
      );
      assert.ok(
        cites(result, 'shop/api.py', 16) >= 0 && cites(result, 'shop/api.py', 10) >= 0,
        'the entry point and the check it calls are cited',
      );
      assert.ok(
        result.trace.retrievers.find((list) => list.source === 'neighbours')!.top.length > 0,
        'the best hits bring their callers and callees',
      );
    });

    it('analytical: finds the planted call cycle and the hot spot, with a dependency diagram', async () => {
      const result = await search('What are the hot spots and circular dependencies in this code?');
      assert.equal(result.metadata.queryMode, 'analytical');
      assert.ok(
        result.metadata.findings.some((finding) =>
          /^Cycle: .*ping → .*pong|^Cycle: .*pong → .*ping/.test(finding),
        ),
        result.metadata.findings.join('\n'),
      );
      assert.ok(
        result.metadata.findings.some((finding) => /log_event .*has 4 callers/.test(finding)),
        result.metadata.findings.join('\n'),
      );
      assert.match(result.metadata.diagram!, /^graph LR\n/);
      // without a model, the answer shows the diagram for the chat to draw
      const answer = unwrap(
        await engine.ask({
          question: 'What are the hot spots and circular dependencies in this code?',
        }),
      );
      assert.ok(
        answer.answer.includes(`\`\`\`mermaid\n${result.metadata.diagram}\n\`\`\``),
        answer.answer,
      );
    });

    it('adds no graph list to a question that names a topic the graph does not answer', async () => {
      const graphList = (result: SearchResult) =>
        result.trace.retrievers.find((list) => list.source === 'graph');
      // "flow" and "dependencies" route these to the exploratory and analytical modes, but neither
      // asks to follow calls from a definition nor asks for hot spots
      const flow = await search('how does the order flow control work');
      assert.equal(flow.metadata.queryMode, 'exploratory');
      assert.equal(graphList(flow), undefined, JSON.stringify(graphList(flow)));
      const design = await search('how are the database dependencies set up');
      assert.equal(design.metadata.queryMode, 'analytical');
      assert.equal(graphList(design), undefined, JSON.stringify(graphList(design)));
      // naming a definition is enough to walk its calls, asking for hot spots to get them
      const named = await search('the order flow from OrderService.create_order');
      assert.equal(named.metadata.queryMode, 'exploratory');
      assert.ok(graphList(named)?.top.length, 'the walk starts from the named method');
      const hotSpots = await search(
        'What are the hot spots and circular dependencies in this code?',
      );
      assert.ok(
        graphList(hotSpots)?.top.some((hit) => /fan-in|call cycle/.test(hit.evidence)),
        JSON.stringify(graphList(hotSpots)),
      );
    });

    it('analytical: structural findings follow the index as it changes', async () => {
      const question = 'What are the hot spots and circular dependencies in this code?';
      const before = await search(question);
      assert.ok(
        before.metadata.findings.some((finding) => /log_event .*has 4 callers/.test(finding)),
      );
      const file = path.join(engine.root, 'shop', 'extra.py');
      writeFileSync(
        file,
        'from .util import log_event\n\n\ndef audit():\n    log_event("audit")\n',
      );
      try {
        unwrap(await engine.updateFiles([file]));
        const after = await search(question);
        assert.ok(
          after.metadata.findings.some((finding) => /log_event .*has 5 callers/.test(finding)),
          after.metadata.findings.join('\n'),
        );
      } finally {
        rmSync(file);
        unwrap(await engine.updateFiles([file]));
      }
    });

    it('analytical: "which functions call X" lists the call sites', async () => {
      const result = await search('Which functions call log_event?');
      for (const line of [8, 17])
        assert.ok(
          cites(result, 'shop/api.py', line) >= 0 && cites(result, 'shop/api.py', line) < 8,
          `api.py:${line}`,
        );
      for (const line of [19, 29])
        assert.ok(
          cites(result, 'shop/service.py', line) >= 0 && cites(result, 'shop/service.py', line) < 8,
          `service.py:${line}`,
        );
      assert.deepEqual(
        result.trace.retrievers.find((list) => list.source === 'neighbours')!.top,
        [],
        'the list of call sites is not diluted by their neighbours',
      );
    });

    it("conceptual: reaches code through the summaries and the model, without the code's words", async () => {
      const result = await search('how are the saved handles to the storage file thrown away?');
      assert.equal(result.metadata.queryMode, 'conceptual');
      const at = cites(result, 'shop/db.py', 38);
      assert.ok(at >= 0 && at < 8, `reset_connections at ${at}`);
    });
  });

  it('cites module-level names the question names', async () => {
    const result = await search('where is _connections defined?');
    assert.ok(cites(result, 'shop/db.py', 9) >= 0 && cites(result, 'shop/db.py', 9) < 3);
  });

  it('logs every step, under one trace id per search', async () => {
    const { events } = await captureLogs(() => search('what does get_connection return?'));
    for (const name of [
      'mode_classified',
      'hybrid_retrieve_completed',
      'crag_evaluated',
      'search_completed',
    ]) {
      assert.equal(eventsNamed(events, name).length >= 1, true, name);
    }
    const traces = new Set(
      events.filter((event) => event.module.startsWith('search')).map((event) => event.trace_id),
    );
    assert.equal(traces.size, 1);
    const again = await captureLogs(() => search('what does reset_connections do?'));
    const second = new Set(
      again.events
        .filter((event) => event.module.startsWith('search'))
        .map((event) => event.trace_id),
    );
    assert.equal(second.size, 1);
    assert.notDeepEqual([...second], [...traces]);
  });

  it('escalates silently to thinking mode when fast mode finds nothing, with a warning event', async () => {
    const lexicalOnly = await openEngine(scratch, scratch.fixture('shop-py'));
    try {
      unwrap(await lexicalOnly.index());
      const { result, events } = await captureLogs(async () =>
        unwrap(await lexicalOnly.search({ query: 'qwzx vbnm plokij' })),
      );
      assert.equal(result.metadata.escalated, true);
      assert.equal(result.metadata.mode, 'thinking');
      assert.deepEqual(result.spans, []);
      const warning = eventsNamed(events, 'silent_escalation')[0]!;
      assert.equal(warning.level, 'warn');
      assert.equal(warning.reason, 'zero_results_fast_mode');
    } finally {
      lexicalOnly.dispose();
    }
  });

  describe('web search (only when configured)', () => {
    let server: Server;
    let url: string;
    let asked: string[];
    before(async () => {
      asked = [];
      server = createServer((request, response) => {
        const query = new URL(request.url!, 'http://127.0.0.1').searchParams;
        asked.push(query.get('q') ?? '');
        if (query.get('q')?.includes('broken')) {
          response.writeHead(500).end();
          return;
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            results: [{ url: 'https://example.org/a', title: 'A', content: 'about qwzx' }],
          }),
        );
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    });
    after(() => server.close());

    it('asks the configured SearXNG server when retrieval is irrelevant, and never otherwise', async () => {
      const result = await search('qwzx vbnm plokij', { webSearchUrl: url });
      assert.equal(result.metadata.crag.decision, 'IRRELEVANT');
      assert.equal(result.metadata.crag.strategy, 'web_search');
      assert.deepEqual(result.metadata.web, [
        { url: 'https://example.org/a', title: 'A', content: 'about qwzx' },
      ]);
      const count = asked.length;
      await search('qwzx vbnm plokij');
      await search("Why do I get 'attempt to write a readonly database'?", { webSearchUrl: url });
      assert.equal(asked.length, count, 'no request without a URL or when the code answers');
    });

    it('keeps the code results and logs a warning when the web search fails', async () => {
      const { result, events } = await captureLogs(() =>
        search('qwzx broken plokij', { webSearchUrl: url }),
      );
      assert.deepEqual(result.metadata.web, []);
      assert.notEqual(result.metadata.crag.strategy, 'web_search');
      assert.equal(eventsNamed(events, 'web_search_completed').length, 0);
    });
  });

  describe('bad input: a clear result or message, never an exception', () => {
    it('rejects an empty question', async () => {
      const result = await engine.search({ query: '   ' });
      assert.equal(result.ok, false);
      assert.equal(!result.ok && result.error.code, 'invalid_input');
    });

    it('cuts a 100 KB question down, and says so', async () => {
      const pasted = `${'log line without meaning\n'.repeat(4200)}raise DatabaseError("attempt to write a readonly database")`;
      assert.ok(pasted.length > 100_000);
      const result = await search(pasted);
      assert.match(
        result.metadata.notices[0]!,
        /characters long; its first [\d,]+ and last [\d,]+ characters were searched/,
      );
      assert.ok(MAX_QUERY_CHARACTERS < pasted.length);
      assert.equal(
        cites(result, 'shop/db.py', 24),
        0,
        'the error at the end of the paste still leads',
      );
    });

    for (const query of [
      '?!?…;;',
      'foo.*(bar[ ^$ |\\',
      '数据库 連接 🚀 ошибка',
      'SELECT * FROM orders WHERE id = "1"; --',
    ]) {
      it(`answers ${JSON.stringify(query)}`, async () => {
        const result = await search(query);
        assert.ok(Array.isArray(result.spans));
      });
    }

    it('answers a question about an empty index with no spans', async () => {
      const empty = await openEngine(
        scratch,
        scratch.tree({ 'README.txt': 'nothing to index here' }),
      );
      try {
        unwrap(await empty.index());
        const result = unwrap(await empty.search({ query: 'where is the login handled?' }));
        assert.deepEqual(result.spans, []);
      } finally {
        empty.dispose();
      }
    });
  });

  it('finds a definition named in another case style (getConnection for get_connection)', async () => {
    const result = await search('what does getConnection return?');
    const symbols = result.trace.retrievers.find((list) => list.source === 'symbol')!;
    assert.equal(
      symbols.top[0]?.chunkId,
      'shop/db.py::None::get_connection::function',
      JSON.stringify(symbols.top),
    );
    assert.equal(symbols.top[0]?.evidence, 'defines get_connection');
  });

  describe('span shaping', () => {
    it('cites an overloaded TypeScript function by its implementation first', async () => {
      const overloads = Array.from(
        { length: 3 },
        (_, i) =>
          `export function throttleRetry<T>(count: number${', extra: string'.repeat(i)}): Operator<T>;`,
      ).join('\n');
      const docs = Array.from(
        { length: 12 },
        (_, i) => ` * Line ${i} of the long documentation of the implementation.`,
      ).join('\n');
      const source = `${overloads}\n/**\n${docs}\n */\nexport function throttleRetry<T>(count: number, extra?: string): Operator<T> {\n  const attempts = count;\n  return resubscribe(attempts, extra);\n}\n`;
      const tsEngine = await openEngine(scratch, scratch.tree({ 'src/retry.ts': source }));
      try {
        unwrap(await tsEngine.index());
        const result = unwrap(
          await tsEngine.search({ query: 'how does throttleRetry resubscribe?' }),
        );
        const spans = result.spans.filter(
          (span) => span.path === 'src/retry.ts' && span.level === 'function',
        );
        const implementation = source.split('\n').findIndex((line) => line.endsWith('{')) + 1;
        assert.equal(spans[0]!.startLine, implementation, JSON.stringify(spans));
        assert.ok(
          spans.some((span) => span.startLine === 1),
          'the overloads are still cited, after it',
        );
      } finally {
        tsEngine.dispose();
      }
    });

    it('follows the implementation of a function when a save gives it overloads', async () => {
      // the overloads hold the question's words most: only knowing where the implementation
      // starts puts it first
      const overloads = (count: number) =>
        Array.from(
          { length: count },
          (_, i) =>
            `export function throttleRetry<T>(count: number${', extra: string'.repeat(i)}): Operator<T>;`,
        ).join('\n');
      // a long doc comment parts the overloads from the implementation
      const docs = Array.from({ length: 12 }, (_, i) => ` * Line ${i} of the documentation.`);
      const source = (count: number) =>
        `${overloads(count)}\n/**\n${docs.join('\n')}\n */\nexport function throttleRetry<T>(count: number, extra?: string): Operator<T> {\n  const attempts = count;\n  return resubscribe(attempts, extra);\n}\n`;
      const implementation = (text: string) =>
        text.split('\n').findIndex((line) => line.endsWith('{')) + 1;
      const tsEngine = await openEngine(scratch, scratch.tree({ 'src/retry.ts': source(0) }));
      const firstSpan = async () =>
        unwrap(await tsEngine.search({ query: 'throttleRetry with an extra string' })).spans.find(
          (span) => span.path === 'src/retry.ts' && span.level === 'function',
        )?.startLine;
      try {
        unwrap(await tsEngine.index());
        assert.equal(await firstSpan(), implementation(source(0)));
        const file = path.join(tsEngine.root, 'src', 'retry.ts');
        writeFileSync(file, source(20));
        unwrap(await tsEngine.updateFiles([file]));
        assert.equal(await firstSpan(), implementation(source(20)));
      } finally {
        tsEngine.dispose();
      }
    });

    it('keeps a function without overloads in order, even when a comment block splits its body', async () => {
      const comment = Array.from(
        { length: 5 },
        (_, i) => `  // step ${i} of the explanation of the backoff`,
      ).join('\n');
      const source = `export function throttleBackoff(count: number): number {\n  const base = count * 2;\n${comment}\n  const capped = Math.min(base, 60);\n  return resubscribe(capped);\n}\n`;
      const tsEngine = await openEngine(scratch, scratch.tree({ 'src/backoff.ts': source }));
      try {
        unwrap(await tsEngine.index());
        const result = unwrap(
          await tsEngine.search({ query: 'how does throttleBackoff resubscribe?' }),
        );
        const spans = result.spans.filter(
          (span) => span.path === 'src/backoff.ts' && span.level === 'function',
        );
        assert.equal(spans[0]!.startLine, 1, JSON.stringify(spans));
      } finally {
        tsEngine.dispose();
      }
    });
  });
});
