import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/**
 * Stems of the question's words join the lexical query: they match text nearly as the word does,
 * and name a definition only when the code never uses the word itself.
 */
describe('search: stems of the question words', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    const root = scratch.tree({
      'web/router.py': [
        'class Router:',
        '    def handle(self, request):',
        '        route = self.routes[request.path]',
        '        return route(request)',
        '',
      ].join('\n'),
      'web/middleware.py': [
        'def wrap(app, request):',
        '    # request handling: every failure becomes a reply',
        '    try:',
        '        return app(request)',
        '    except Exception as failure:',
        '        return {"status": 500, "handling": str(failure)}',
        '',
      ].join('\n'),
      'web/net.py': [
        'def retry(send, attempts):',
        '    for attempt in range(attempts):',
        '        if send():',
        '            return attempt',
        '    return None',
        '',
      ].join('\n'),
    });
    engine = await openEngine(scratch, root, { model: { kind: 'none' } });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const firstFile = async (query: string, ablate: 'stems'[] = []) =>
    unwrap(await engine.search({ query, ablate })).files[0]?.path;

  it('does not let a definition named by the stem outrank the code using the word', async () => {
    // the code says "handling": `handle` is another thing, matched as text, not as a name
    assert.equal(await firstFile('where is request handling done?'), 'web/middleware.py');
  });

  it('lets the stem name a definition when the code never uses the word', async () => {
    assert.equal(await firstFile('how are retries counted?'), 'web/net.py');
    assert.notEqual(await firstFile('how are retries counted?', ['stems']), 'web/net.py');
  });
});
