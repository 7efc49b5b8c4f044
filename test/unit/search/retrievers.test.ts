import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import { preprocessQuery } from '../../../src/engine/search/preprocess';
import { symbolHits } from '../../../src/engine/search/retrievers';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

describe('symbol retrieval', () => {
  const scratch = new Scratch();
  let engine: Engine;
  before(async () => {
    const root = scratch.tree({
      'web/scaffold.py':
        'class Scaffold:\n    def errorhandler(self, code):\n        return code\n',
      'web/cli.py':
        'def run_command(info):\n    def app(environ, start_response):\n        raise RuntimeError(info)\n    return app\n',
      'web/helpers.py': 'def abort(code):\n    raise LookupError(code)\n',
    });
    engine = await openEngine(scratch, root, { model: { kind: 'none' } });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  const defined = (query: string) =>
    symbolHits(
      { graph: engine.graph, catalog: engine.store.catalog },
      preprocessQuery(query),
    ).hits.map((hit) => hit.evidence);

  it('finds the definitions of the names a question calls, with or without arguments', () => {
    const found = defined(
      'What happens when my view calls abort(404) and I registered @app.errorhandler(404)?',
    );
    assert.ok(found.includes('defines abort'), found.join('; '));
    assert.ok(found.includes('defines Scaffold.errorhandler'), found.join('; '));
  });

  it("does not take the asker's variable before a dot for a namesake definition", () => {
    const found = defined(
      'What happens when my view calls abort(404) and I registered @app.errorhandler(404)?',
    );
    assert.ok(
      !found.some((evidence) => evidence.includes('run_command')),
      `the nested def app is not what \`app.errorhandler\` means: ${found.join('; ')}`,
    );
    assert.ok(
      defined('Where is the nested app of run_command, app()?').some((evidence) =>
        evidence.includes('run_command.app'),
      ),
      'named on its own, it is found',
    );
  });
});
