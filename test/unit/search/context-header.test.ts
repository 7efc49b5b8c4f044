import * as assert from 'node:assert/strict';
import fc from 'fast-check';
import { headerOf } from '../../../src/engine/search/context';

describe("a parent's first lines in the context", () => {
  /** The header as first written: the whole text split into lines. */
  function headerBySplit(body: string): string {
    const lines = body.split('\n');
    return lines.length > 10 ? `${lines.slice(0, 10).join('\n')}\n…` : body;
  }

  it('are the first ten lines and a marker when there are more, as splitting the text gives', () => {
    const line = fc.constantFrom('', 'def f():', '    return 1', 'x', '\r');
    fc.assert(
      fc.property(fc.array(line, { maxLength: 25 }), (lines) => {
        const body = lines.join('\n');
        assert.equal(headerOf(body), headerBySplit(body));
      }),
      { numRuns: 2000 },
    );
  });
});
