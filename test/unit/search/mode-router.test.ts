import { strict as assert } from 'node:assert';
import { heuristicMode } from '../../../src/engine/search/mode-router';
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
