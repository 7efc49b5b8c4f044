import { strict as assert } from 'node:assert';
import { logHub, getLogger } from '../../src/engine/log/logger';
import { JsonLineSink, PrettySink } from '../../src/engine/log/sinks';
import { withTrace } from '../../src/engine/log/trace';
import { captureLogs, eventsNamed } from '../helpers/logs';
import { openEngine, POTION_MODEL, Scratch } from '../helpers/workspace';

describe('structured logging', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('emits the ingestion events with their fields, all under one trace id per run', async () => {
    const root = scratch.fixture('shop-py');
    const engine = await openEngine(scratch, root, {
      model: { kind: 'directory', path: POTION_MODEL },
    });
    try {
      // the warm-up after opening runs under its own trace
      await engine.whenWarm();
      const { events } = await captureLogs(() => engine.index());
      const [started] = eventsNamed(events, 'indexing_started');
      const [completed] = eventsNamed(events, 'indexing_completed');
      assert.ok(started && completed);
      assert.deepEqual(completed!.total_chunks, { directory: 1, file: 8, class: 4, function: 14 });
      for (const field of [
        'duration_ms',
        'vocabulary_size',
        'total_embedding_batches',
        'files_indexed',
      ])
        assert.ok(field in completed!, field);
      const walk = eventsNamed(events, 'repo_walk_completed')[0]!;
      assert.equal(walk.total_files, 8);
      assert.deepEqual(walk.languages, { python: 8 });
      const parsed = eventsNamed(events, 'file_parse_completed').find(
        (event) => event.file_path === 'shop/db.py',
      )!;
      assert.deepEqual(parsed.chunks_produced, { directory: 0, file: 1, class: 1, function: 4 });
      assert.equal(parsed.error_node_count, 0);
      assert.equal(eventsNamed(events, 'file_parse_started').length, 8);
      const batch = eventsNamed(events, 'embedding_batch')[0]!;
      assert.equal(batch.model, 'potion-base-2M');
      assert.ok((batch.batch_size as number) > 0);
      // the model's loading and the saving of the resolved calls (once the engine idles) run
      // under traces of their own, and may land in the window
      const background = new Set(['embed.load', 'graph.saved']);
      const traces = new Set(
        events.filter((event) => !background.has(event.module)).map((event) => event.trace_id),
      );
      assert.equal(traces.size, 1, `one trace id for the run, got ${[...traces].join(', ')}`);
      assert.match([...traces][0] as string, /^[0-9a-f]{12}$/);

      const second = await captureLogs(() => engine.index());
      const secondTrace = eventsNamed(second.events, 'indexing_completed')[0]!.trace_id;
      assert.notEqual(secondTrace, [...traces][0], 'each run has its own trace');
    } finally {
      engine.dispose();
    }
  });

  it('logs functions flagged for summarisation and the vocabulary persisted with a snapshot', async () => {
    const files: Record<string, string> = {
      'long.py': `def long_one():\n${'    x = 1\n'.repeat(160)}`,
    };
    for (let i = 0; i < 210; i++) files[`m${i}.py`] = `def f${i}():\n    return ${i}\n`;
    const engine = await openEngine(scratch, scratch.tree(files));
    try {
      const { events } = await captureLogs(() => engine.index());
      const [flagged] = eventsNamed(events, 'function_flagged_for_summarization');
      assert.deepEqual(
        [flagged!.file_path, flagged!.function_name, flagged!.line_count],
        ['long.py', 'long_one', 161],
      );
      const [vocabulary] = eventsNamed(events, 'vocabulary_persisted');
      assert.ok((vocabulary!.vocabulary_size as number) > 200);
    } finally {
      engine.dispose();
    }
  });

  it('keeps a bound trace id through nested async work and filters by level', async () => {
    const log = getLogger('test');
    const { events } = await captureLogs(() =>
      withTrace(async () => {
        log.info('outer');
        await new Promise((resolve) => setTimeout(resolve, 5));
        await withTrace(async () => log.info('inner'));
      }, 'abcdefabcdef'),
    );
    assert.deepEqual(
      events.map((event) => [event.event, event.trace_id]),
      [
        ['outer', 'abcdefabcdef'],
        ['inner', 'abcdefabcdef'],
      ],
    );
    const lines: string[] = [];
    const sink = logHub.addSink(new JsonLineSink('warn', (line) => lines.push(line)));
    log.info('quiet');
    log.warn('loud', { file_path: 'a.py' });
    sink.dispose();
    assert.equal(lines.length, 1);
    const parsed = JSON.parse(lines[0]!);
    assert.equal(parsed.event, 'loud');
    assert.equal(parsed.file_path, 'a.py');
    assert.equal(parsed.level, 'warn');
    const pretty: string[] = [];
    const prettySink = logHub.addSink(new PrettySink('info', (line) => pretty.push(line)));
    log.info('shown', { count: 2 });
    prettySink.dispose();
    assert.match(pretty[0]!, /INFO {2}shown \[test\] count=2/);
  });
});
