import { strict as assert } from 'node:assert';
import type { Engine } from '../../../src/engine/engine';
import { indexTerms } from '../../../src/engine/text/tokenize';
import { unwrap } from '../../../src/engine/util/result';
import { openEngine, Scratch } from '../../helpers/workspace';

/**
 * Shaping leaves a chunk's lines unscored when the question terms its lexical document holds
 * cannot reach the floor (TextReach): sound only while every term of a chunk's stored text is in
 * its lexical document. This checks that on indexed fixtures of several languages.
 */
describe("a chunk's stored text and its lexical document", () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  for (const fixture of ['shop-py', 'shop-ts', 'shop-js', 'receivers-py']) {
    it(`hold the same terms, for every chunk of ${fixture} that was not summarised`, async () => {
      const engine: Engine = await openEngine(scratch, scratch.fixture(fixture));
      try {
        unwrap(await engine.index());
        const { catalog, lexical, texts } = engine.store;
        let checked = 0;
        for (const meta of catalog.values()) {
          if (meta.isSummarized || !meta.filePath || meta.level === 'directory') continue;
          const text = unwrap(texts.read(meta.id)) ?? '';
          const document = lexical
            .documentsAt(meta.filePath)
            .find((entry) => entry.chunkId === meta.id);
          assert.ok(document, `${meta.id} has no lexical document`);
          for (const term of new Set(indexTerms(text)))
            assert.ok(document.termFrequency(term) > 0, `${meta.id} lacks "${term}"`);
          checked++;
        }
        assert.ok(checked > 5, `only ${checked} chunks checked`);
      } finally {
        engine.dispose();
      }
    });
  }
});
