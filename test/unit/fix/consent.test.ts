import { strict as assert } from 'node:assert';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { RESTRICTED_MODE_TESTS, runTestsWithConsent } from '../../../src/extension/fix/consent';
import { Scratch } from '../../helpers/workspace';

const copies = () => readdirSync(tmpdir()).filter((name) => name.startsWith('code-oracle-tests-'));

describe('running tests from the editor', () => {
  const scratch = new Scratch();
  after(() => scratch.cleanup());

  it('runs nothing in an untrusted workspace, without even asking', async () => {
    const root = scratch.fixture('fix-js');
    const asked: string[] = [];
    const before = copies();
    const outcome = await runTestsWithConsent(root, [], {
      trusted: false,
      confirm: async (command) => (asked.push(command), true),
    });
    assert.deepEqual(outcome, { ran: false, reason: RESTRICTED_MODE_TESTS });
    assert.deepEqual(asked, []);
    assert.deepEqual(copies(), before);
  });

  it('asks with the exact command and runs nothing on a no', async () => {
    const root = scratch.fixture('fix-js');
    const asked: string[] = [];
    const outcome = await runTestsWithConsent(root, [], {
      trusted: true,
      confirm: async (command) => (asked.push(command), false),
    });
    assert.equal(outcome.ran, false);
    assert.deepEqual(asked, ['npm test --silent']);
  });

  it('runs them on a patched copy after a yes', async () => {
    const root = scratch.fixture('fix-js');
    const outcome = await runTestsWithConsent(root, [], {
      trusted: true,
      confirm: async () => true,
    });
    assert.ok(outcome.ran);
    assert.equal(outcome.result.totalTests, 3);
    assert.equal(outcome.result.passed, false);
  });
});
