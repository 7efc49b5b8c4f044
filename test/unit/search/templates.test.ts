import { strict as assert } from 'node:assert';
import { templateMatches } from '../../../src/engine/search/evidence';

describe('error message templates', () => {
  it('takes placeholders as any text, in printf, format, f-string and template-literal forms', () => {
    assert.ok(
      templateMatches('refusing to open %s for writing', 'refusing to open /tmp/a.db for writing'),
    );
    assert.ok(
      templateMatches(
        'No connection adapters were found for {url!r}',
        "InvalidSchema: No connection adapters were found for 'tcp://h:1/a'",
      ),
    );
    assert.ok(
      templateMatches(
        'Route.${method}() requires a callback function but got a ${type}',
        'Error: Route.get() requires a callback function but got a [object Undefined]',
      ),
    );
    assert.ok(
      templateMatches(
        'Working outside of application context.\n\nThis typically means',
        'RuntimeError: Working outside of application context.',
      ),
    );
    assert.ok(!templateMatches('%s: %s', 'anything at all: here'));
    assert.ok(!templateMatches('refusing to open %s for writing', 'refusing to read the file'));
  });
});
