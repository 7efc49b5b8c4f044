import { strict as assert } from 'node:assert';
import { evaluateRetrieval } from '../../../src/engine/search/crag';

describe('corrective retrieval (CRAG)', () => {
  it('judges a set that answers the question relevant', () => {
    const body =
      'def reset_connections():\n    """Forget every cached database connection after the file was replaced."""\n    _connections.clear()\n'.repeat(
        4,
      );
    const evaluation = evaluateRetrieval(
      'forget cached database connection after the file was replaced',
      [
        { content: body, path: 'shop/db.py', relevance: 0.92 },
        { content: body, path: 'shop/service.py', relevance: 0.88 },
        { content: body, path: 'shop/api.py', relevance: 0.9 },
      ],
    );
    assert.equal(evaluation.decision, 'RELEVANT');
    assert.ok(evaluation.keywordOverlap > 0.9 && evaluation.diversity === 1);
  });

  it('judges an unrelated set irrelevant, and an empty one too', () => {
    const evaluation = evaluateRetrieval('how are invoices rendered to pdf?', [
      { content: 'x = 1', path: 'a.py', relevance: 0.05 },
      { content: 'y = 2', path: 'a.py', relevance: 0.1 },
    ]);
    assert.equal(evaluation.decision, 'IRRELEVANT');
    assert.equal(evaluateRetrieval('anything at all', []).decision, 'IRRELEVANT');
  });
});
