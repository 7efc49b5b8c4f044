import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/** "Explain this error" on a file the index does not hold: the attached lines are the answer's evidence. */
describe('answers about a place the index does not hold', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    engine = await openEngine(scratch, scratch.fixture('shop-py'));
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const explain = (path: string, content: string) =>
    engine.ask({
      question: `Why do I get this error from json at ${path}:3, and how do I fix it?\n"Expected comma"`,
      attachment: { path, content, startLine: 1 },
    });

  it('answers from the attached lines alone, and says why', async () => {
    const answer = unwrap(
      await explain('config/settings.json', '{\n  "db": "shop.db"\n  "order": 1\n}\n'),
    );
    assert.deepEqual(
      answer.citations.map((citation) => `${citation.path}:${citation.startLine}`),
      ['config/settings.json:1'],
    );
    assert.match(answer.answer, /The attached lines are the evidence/);
    assert.ok(
      answer.metadata.notices.includes(
        'The index does not hold config/settings.json, so the answer uses the attached lines alone.',
      ),
    );
  });

  it('still searches the index when the attached file is one it holds', async () => {
    const answer = unwrap(
      await explain('shop/db.py', 'def connect(self):\n    raise DatabaseError("order")\n'),
    );
    assert.ok(
      answer.citations.some((citation) => citation.path !== 'shop/db.py' || citation.startLine > 1),
    );
    assert.ok(answer.citations.length > 1);
  });
});
