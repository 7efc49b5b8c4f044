import { strict as assert } from 'node:assert';
import {
  MAX_QUERY_CHARACTERS,
  preprocessQuery,
  queryTerms,
} from '../../../src/engine/search/preprocess';
import { retrievalWeights, scoreTechnicality } from '../../../src/engine/search/technicality';
import { camelSnakeTokenize } from '../../../src/engine/text/tokenize';
import { computeTopK, weightedRrf } from '../../../src/engine/search/fusion';

describe('query preprocessing', () => {
  it('extracts identifiers, file paths and code blocks', () => {
    assert.ok(
      preprocessQuery('what does getUserById return?').extractedIdentifiers.includes('getUserById'),
    );
    assert.ok(
      preprocessQuery('in auth.py what does login do?').extractedFilePaths.includes('auth.py'),
    );
    const block = preprocessQuery('explain this:\n```python\ndef foo(): pass\n```');
    assert.ok(block.hasCodeBlock);
    assert.equal(block.pastedCode, 'def foo(): pass\n');
    assert.equal(block.pastedCodeLanguage, 'python');
    assert.ok(block.extractedIdentifiers.includes('foo'));
    assert.ok(block.isMixed);
    assert.equal(block.naturalLanguage, 'explain this: [code block]');
  });

  it('scores technicality from identifiers, file paths and known words', () => {
    const vocabulary = (terms: string[]) => new Set(terms);
    assert.ok(
      scoreTechnicality(
        preprocessQuery('what does create_user return?'),
        vocabulary(['create', 'user', 'return']),
      ).score > 0.5,
    );
    assert.ok(
      scoreTechnicality(
        preprocessQuery('where is the thing that generates accounts?'),
        vocabulary([]),
      ).score < 0.3,
    );
    assert.ok(
      scoreTechnicality(
        preprocessQuery('in services/auth.py what does login do?'),
        vocabulary(['login', 'auth']),
      ).score > 0.8,
    );
    const close = (
      actual: { lexical: number; semantic: number },
      lexical: number,
      semantic: number,
    ) =>
      assert.ok(
        Math.abs(actual.lexical - lexical) < 1e-9 && Math.abs(actual.semantic - semantic) < 1e-9,
        JSON.stringify(actual),
      );
    close(retrievalWeights(1), 0.8, 0.2);
    close(retrievalWeights(0), 0.3, 0.7);
    // a measured trust in the embedding model scales the semantic weight; lexical takes the rest
    close(retrievalWeights(0, 0.5), 0.65, 0.35);
    close(retrievalWeights(0.2, 0), 1, 0);
  });

  it('searches by the words that carry meaning, not by prepositions and question words', () => {
    assert.deepEqual(queryTerms('where can the number kept per host be tuned via the settings?'), [
      'number',
      'kept',
      'host',
      'tuned',
      'settings',
    ]);
  });

  it('tokenizes camelCase and snake_case alike', () => {
    assert.ok(
      ['get', 'user', 'by', 'id'].every((t) => camelSnakeTokenize('getUserById').includes(t)),
    );
    assert.ok(
      ['get', 'user', 'by', 'id'].every((t) => camelSnakeTokenize('get_user_by_id').includes(t)),
    );
    assert.deepEqual(camelSnakeTokenize('getUserById'), camelSnakeTokenize('get_user_by_id'));
  });

  it('computes top-k as 1% of chunks, floored at 5 and capped at 20', () => {
    assert.deepEqual([100, 1000, 5000, 2500, 50].map(computeTopK), [5, 10, 20, 20, 5]);
  });

  it('rewards consensus in weighted RRF and deduplicates by id', () => {
    const fused = weightedRrf([
      { ids: ['both', 'lexical_only'], weight: 0.6 },
      { ids: ['both', 'semantic_only'], weight: 0.4 },
    ]);
    assert.equal(fused[0]!.id, 'both');
    const deduped = weightedRrf([
      { ids: ['same', 'same'], weight: 0.6 },
      { ids: ['same'], weight: 0.4 },
    ]);
    assert.equal(deduped.filter((hit) => hit.id === 'same').length, 1);
  });

  it('finds error anchors: exception types, quoted messages, Python and JavaScript stack frames', () => {
    const python = preprocessQuery(
      'Why do I get sqlite3.OperationalError: attempt to write a readonly database?\nTraceback (most recent call last):\n  File "app/db.py", line 42, in get_db\n    conn.execute(q)\n',
    );
    assert.deepEqual(python.errorAnchors.exceptionTypes, ['sqlite3.OperationalError']);
    assert.ok(python.errorAnchors.messages.includes('attempt to write a readonly database?'));
    assert.deepEqual(python.errorAnchors.frames, [
      { file: 'app/db.py', line: 42, function: 'get_db' },
    ]);
    assert.ok(
      python.extractedIdentifiers.includes('OperationalError') &&
        python.extractedIdentifiers.includes('get_db'),
    );
    const js = preprocessQuery(
      'My app crashes with "Error: Route.get() requires a callback function but got a [object Undefined]"\n    at Route.<computed> [as get] (/app/node_modules/express/lib/router/route.js:211:15)',
    );
    assert.ok(
      js.errorAnchors.messages.some((message) => message.includes('requires a callback function')),
    );
    assert.equal(js.errorAnchors.frames[0]!.file, '/app/node_modules/express/lib/router/route.js');
    assert.equal(js.errorAnchors.frames[0]!.line, 211);
    const status = preprocessQuery('The auth endpoint returns 401 when it should return 200');
    assert.deepEqual(status.errorAnchors.statusCodes, ['401']);
  });

  it('copes with bad input: empty, huge, punctuation, regex characters, unicode', () => {
    assert.deepEqual(preprocessQuery('').extractedIdentifiers, []);
    const huge = preprocessQuery(
      `${'where is parse_config called? '.repeat(4000)}and what raises ConfigError?`,
    );
    assert.ok(huge.truncated && huge.rawInput.length === MAX_QUERY_CHARACTERS + 3);
    assert.ok(
      huge.extractedIdentifiers.includes('ConfigError'),
      'the end of a long question is kept',
    );
    assert.deepEqual(preprocessQuery('?!?... ((( )))').extractedIdentifiers, []);
    assert.ok(
      preprocessQuery('what does .*+?^${}()|[]\\ match_all do').extractedIdentifiers.includes(
        'match_all',
      ),
    );
    assert.deepEqual(
      preprocessQuery('où est la fonction créer_utilisateur ?').extractedIdentifiers,
      ['créer_utilisateur'],
    );
  });
});
