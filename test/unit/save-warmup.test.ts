import { strict as assert } from 'node:assert';
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { SearchResult } from '../../src/engine/search/pipeline';
import { unwrap } from '../../src/engine/util/result';
import { captureLogs, eventsNamed } from '../helpers/logs';
import type { EngineOptions } from '../../src/engine/engine';
import { openEngine, POTION_MODEL, Scratch } from '../helpers/workspace';

describe('opening an index readies the first question and the first save', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  /** The store of a first index of `root`, built by an engine closed since. */
  async function indexedStore(root: string, options: Partial<EngineOptions> = {}): Promise<string> {
    const engine = await openEngine(scratch, root, options);
    try {
      unwrap(await engine.index());
      return engine.storeDir;
    } finally {
      engine.dispose();
    }
  }

  it('runs a small file of each indexed language through the file task once the engine idles', async () => {
    const root = scratch.tree({
      'app/main.py': 'def main():\n    return 1\n',
      'app/util.py': 'def util():\n    return 2\n',
      'web/page.ts': 'export function page(): number {\n  return 1;\n}\n',
      'notes/readme.txt': 'not code\n',
    });
    const storeDir = await indexedStore(root);

    const { events, result: searchedAt } = await captureLogs(async () => {
      const engine = await openEngine(scratch, root, { storeDir });
      try {
        // a question right after opening: the warm-up waits until the engine idles after it
        unwrap(await engine.search({ query: 'main' }));
        const searched = Date.now();
        await engine.whenWarm();
        // the save after it still indexes the change
        writeFileSync(path.join(root, 'app/main.py'), 'def main_saved():\n    return 2\n');
        unwrap(await engine.updateFiles(['app/main.py']));
        const found = unwrap(await engine.search({ query: 'main_saved' }));
        assert.ok(found.spans.some((span) => span.path === 'app/main.py'));
        return searched;
      } finally {
        engine.dispose();
      }
    });
    const [warmed] = eventsNamed(events, 'save_path_warmed');
    // the languages with most files first
    assert.deepEqual(warmed!.languages, ['python', 'typescript']);
    assert.ok(Date.parse(warmed!.time as string) >= searchedAt, 'not before the question ended');
    assert.notEqual(warmed!.trace_id, eventsNamed(events, 'indexing_started')[0]?.trace_id);
  });

  it('asks the index its own questions once the engine idles after a question, under the warm-up trace', async () => {
    const root = scratch.tree({
      'auth/login.py':
        'def check_password(user, password):\n    """Checks a password against the stored digest."""\n' +
        '    if not user:\n        raise ValueError("no user was given to check")\n' +
        '    return hash_password(password) == user.digest\n',
      'auth/hashing.py':
        'def hash_password(password):\n    return sha256(password.encode()).hexdigest()\n',
    });
    const storeDir = await indexedStore(root);
    const question = { query: 'where is a password checked' };
    const { events, result: answers } = await captureLogs(async () => {
      const engine = await openEngine(scratch, root, { storeDir });
      try {
        const before = unwrap(await engine.search(question));
        await engine.whenWarm();
        return { before, after: unwrap(await engine.search(question)) };
      } finally {
        engine.dispose();
      }
    });
    const [warmed] = eventsNamed(events, 'questions_warmed');
    assert.ok(warmed, 'the questions were asked');
    // each function's name and callers, one docstring line and one message
    assert.equal(warmed!.questions, 6);
    const [userSearch, ...warmUp] = eventsNamed(events, 'search_completed').slice(0, -1);
    assert.equal(warmUp.length, 6, 'each warm-up question searched once');
    assert.ok(warmUp.every((event) => event.trace_id === warmed!.trace_id));
    assert.notEqual(userSearch!.trace_id, warmed!.trace_id);
    // they started once the user's question had been answered and the engine had idled
    const firstWarmUp = eventsNamed(events, 'search_started')[1]!;
    assert.ok(
      Date.parse(firstWarmUp.time as string) - Date.parse(userSearch!.time as string) >= 900,
    );
    // after the save path's warm-up: a save soon after opening does not wait for them
    assert.ok(
      events.indexOf(eventsNamed(events, 'save_path_warmed')[0]!) < events.indexOf(firstWarmUp),
    );
    assert.deepEqual(eventsNamed(events, 'search_warm_failed'), []);
    // the question asked again after them has the same answer
    const spans = (answer: SearchResult) =>
      answer.spans.map((span) => [span.path, span.startLine, span.endLine, span.score, span.why]);
    assert.deepEqual(spans(answers.after), spans(answers.before));
  });

  it('asks no warm-up questions after the first index of a new folder, where the user is typing', async () => {
    const root = scratch.tree({
      'app/server.py':
        'def start_server(port):\n    """Starts the server on the given port."""\n    return listen(port)\n',
    });
    const { events } = await captureLogs(async () => {
      const engine = await openEngine(scratch, root);
      try {
        unwrap(await engine.index());
        // the warm-up's idle second and more than the three questions' pauses
        await new Promise((resolve) => setTimeout(resolve, 2500));
      } finally {
        engine.dispose();
      }
    });
    assert.equal(eventsNamed(events, 'indexing_completed').length, 1);
    assert.deepEqual(eventsNamed(events, 'questions_warmed'), []);
    assert.deepEqual(eventsNamed(events, 'search_started'), []);
  });

  it('reads the vectors from the opening on and embeds the index words once the engine idles, so the first question does neither', async () => {
    const root = scratch.tree({
      'auth/login.py':
        'def check_password(user, password):\n    return hash_password(password) == user.digest\n',
      'auth/hashing.py':
        'def hash_password(password):\n    return sha256(password.encode()).hexdigest()\n',
      'web/render.py':
        'def render_template(name, context):\n    return load(name).render(context)\n',
    });
    const options = { model: { kind: 'directory', path: POTION_MODEL } } as const;
    const storeDir = await indexedStore(root, options);
    const question = { query: 'where is a password checked' };
    const { events, result } = await captureLogs(async () => {
      const engine = await openEngine(scratch, root, { ...options, storeDir });
      try {
        await engine.whenWarm();
        const warmedAt = Date.now();
        const answer = unwrap(await engine.search(question));
        return { warmedAt, answer };
      } finally {
        engine.dispose();
      }
    });
    // the read began as the store opened, before the graph was built: not at the warm-up
    const order = events.map((event) => event.event);
    assert.ok(order.indexOf('vectors_reading') >= 0, 'the vectors were read');
    const graphBuilt = order.findIndex(
      (name) => name === 'calls_resolved' || name === 'resolved_calls_taken',
    );
    assert.ok(graphBuilt >= 0 && order.indexOf('vectors_reading') < graphBuilt);
    assert.ok(order.indexOf('vectors_reading') < order.indexOf('search_warmed'));
    const before = (name: string) =>
      eventsNamed(events, name).filter(
        (event) => Date.parse(event.time as string) <= result.warmedAt,
      );
    const [warmed] = eventsNamed(events, 'search_warmed');
    assert.ok(warmed, 'the search was warmed');
    assert.equal(before('nearest_words_embedded').length, 1);
    assert.equal(before('vectors_loaded').length, 1);
    assert.equal(
      eventsNamed(events, 'nearest_words_embedded').length,
      1,
      'the question embedded the index words',
    );
    assert.equal(eventsNamed(events, 'vectors_loaded').length, 1, 'the question read the vectors');
    assert.deepEqual(eventsNamed(events, 'search_warm_failed'), []);
    // the same answer as an engine that loads them for its first question
    const cold = await openEngine(scratch, root, { ...options, storeDir });
    try {
      const answer = unwrap(await cold.search(question));
      assert.deepEqual(
        answer.spans.map((span) => [span.path, span.startLine, span.endLine]),
        result.answer.spans.map((span) => [span.path, span.startLine, span.endLine]),
      );
    } finally {
      cold.dispose();
    }
  });
});
