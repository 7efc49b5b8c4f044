import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { heuristicMode, matchScope } from '../../../src/engine/search/mode-router';
import { preprocessQuery } from '../../../src/engine/search/preprocess';

/** The heuristic layer of mode routing, which decides whenever no model is configured. */
describe('mode routing heuristics', () => {
  const modeOf = (question: string, folders: string[] = []) =>
    heuristicMode(preprocessQuery(question), new Set(folders));

  for (const question of [
    'Trace what happens when a request hits handle_login',
    'What happens at subscribe time for each operator in the chain?',
    'What happens on save when the file is already open?',
    'What happens during startup before the first request?',
  ]) {
    it(`takes "${question}" as a flow to trace`, () =>
      assert.equal(modeOf(question).mode, 'exploratory'));
  }

  it('takes a question with an exception type as diagnostic', () => {
    assert.equal(
      modeOf('Why does parse() raise KeyError: "name" on an empty form?').mode,
      'diagnostic',
    );
  });

  it('takes "which functions call X" as analytical', () => {
    assert.equal(modeOf('Which functions call log_event?').mode, 'analytical');
    assert.equal(
      modeOf('Which operators in the library call the merge engine directly?').mode,
      'analytical',
    );
    assert.equal(modeOf('What code in the router changes req.url?').mode, 'analytical');
  });

  it('does not take "what <anything> changes" for a question about code that changes things', () => {
    assert.equal(
      modeOf(
        'How does the framework decide which address to report, and what setting changes that?',
      ).mode,
      'conceptual',
    );
  });

  it('takes a plain "how does it work" question as conceptual, with a scope it names', () => {
    const decision = modeOf('How does caching work in the storage module?', [
      'src/storage',
      'src/api',
    ]);
    assert.equal(decision.mode, 'conceptual');
    assert.equal(decision.scope, 'src/storage');
  });
});

describe('the folder a question names', () => {
  /** The lookup as first written: every folder tested in order. */
  function matchScopeByScan(name: string, folders: ReadonlySet<string>): string | null {
    const wanted = name.replace(/^\.?\/|\/$/g, '').toLowerCase();
    for (const folder of folders) {
      const lower = folder.toLowerCase();
      if (lower === wanted || lower.endsWith(`/${wanted}`)) return folder;
    }
    return null;
  }

  it('is the first folder whose path is the name or ends with it, as testing each folder finds', () => {
    const part = fc.constantFrom('src', 'Api', 'api', 'auth', 'a', 'lib', '', '.', 'x.y');
    const folder = fc.array(part, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    const name = fc.oneof(
      folder,
      folder.map((path) => `./${path}`),
      folder.map((path) => `${path}/`),
      folder.map((path) => `/${path.toUpperCase()}`),
    );
    fc.assert(
      fc.property(
        fc.array(folder, { maxLength: 12 }),
        fc.array(name, { maxLength: 6 }),
        (paths, names) => {
          const folders = new Set(paths);
          for (const asked of names)
            assert.equal(matchScope(asked, folders), matchScopeByScan(asked, folders));
        },
      ),
      { numRuns: 2000 },
    );
  });
});
