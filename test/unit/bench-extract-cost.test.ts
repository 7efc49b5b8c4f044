import * as assert from 'node:assert/strict';
import { Query } from 'web-tree-sitter';
import { topLevelPatterns } from '../../bench/extract-cost';
import { loadGrammar } from '../../src/engine/lang/grammars';
import { LANGUAGES } from '../../src/engine/lang/registry';

describe('bench: extraction cost', () => {
  it('splits every language query into its patterns, each a query of one pattern', async () => {
    for (const spec of LANGUAGES) {
      const grammar = await loadGrammar(spec);
      const patterns = topLevelPatterns(spec.query);
      assert.equal(patterns.length, grammar.query.patternCount(), spec.id);
      for (const pattern of patterns) {
        const query = new Query(grammar.language, pattern);
        assert.equal(query.patternCount(), 1, `${spec.id}: ${pattern}`);
        query.delete();
      }
    }
  });

  it('keeps captures and quantifiers with their pattern and skips comments and strings', () => {
    assert.deepEqual(
      topLevelPatterns(
        '; a comment (with brackets)\n(call name: (identifier) @n) @call\n' +
          '[(a) (b)]* @x\n(c (#match? @c "^[(]x"))\n',
      ),
      ['(call name: (identifier) @n) @call', '[(a) (b)]* @x', '(c (#match? @c "^[(]x"))'],
    );
  });
});
