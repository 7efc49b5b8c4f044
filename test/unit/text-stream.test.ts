import { strict as assert } from 'node:assert';
import fc from 'fast-check';
import { applyTextUpdate, textUpdate } from '../../src/engine/host/text-stream';

/** The answer's text crosses the worker boundary as updates; the client must rebuild every state. */
describe('streamed answer text', () => {
  it('sends only the new words when the text grows', () => {
    assert.deepEqual(textUpdate('The cache', 'The cache expires'), { from: 9, text: ' expires' });
    assert.deepEqual(textUpdate('', 'First'), { from: 0, text: 'First' });
  });

  it('sends the rewritten tail when earlier text changes', () => {
    assert.deepEqual(textUpdate('abc def', 'abc xyz'), { from: 4, text: 'xyz' });
    assert.deepEqual(textUpdate('a longer text', 'a long'), { from: 6, text: '' });
  });

  it('rebuilds every text of any sequence, and refuses an update past what it holds', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'grapheme' }), { maxLength: 12 }), (texts) => {
        let sent = '';
        let held = '';
        for (const latest of texts) {
          const next = applyTextUpdate(held, textUpdate(sent, latest));
          assert.equal(next, latest);
          held = next!;
          sent = latest;
        }
      }),
    );
    assert.equal(applyTextUpdate('ab', { from: 5, text: 'x' }), null);
  });
});
