import { strict as assert } from 'node:assert';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { planEdits, WorkspaceFiles } from '../../../src/engine/fix/apply';
import {
  fetchIssue,
  gitHubSettingsFromEnv,
  parseIssueReference,
} from '../../../src/engine/fix/github';
import { NO_TEST_SUITE, type CodePatch, type TestResult } from '../../../src/engine/fix/model';
import { createPullRequest } from '../../../src/engine/fix/pull-request';
import { FakeGitHub } from '../../helpers/fake-github';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { Scratch } from '../../helpers/workspace';

const PATCH: CodePatch = {
  file: 'pricing.py',
  original: '    return price * percent / 100\n',
  replacement: '    return price * (100 - percent) / 100\n',
  explanation: 'It returned the discount instead of the discounted price.',
  confidence: 0.85,
  otherFilesAffected: ['shop.py'],
};

const PASSED: TestResult = {
  passed: true,
  framework: 'pytest',
  command: 'python3 -m pytest -q',
  totalTests: 4,
  passedTests: 4,
  failedTests: [],
  failedCount: 0,
  outputSummary: '4 passed in 0.1s',
  timedOut: false,
  exitCode: 0,
  durationMs: 120,
};

const ISSUE = { title: 'Discounts are wrong', body: '', number: 42, repo: 'owner/repo' };

const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 't@example.com',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 't@example.com',
    },
  }).trim();

describe('draft pull requests', () => {
  const scratch = new Scratch();
  const github = new FakeGitHub();
  let apiUrl: string;
  before(async () => {
    apiUrl = await github.start();
  });
  after(async () => {
    await github.close();
    scratch.cleanup();
  });
  beforeEach(() => {
    github.requests.length = 0;
  });

  /** The Python fixture as a git repository with a local bare remote. */
  async function repository() {
    const root = scratch.fixture('fix-py');
    const remote = path.join(scratch.folder('oracle-remote-'), 'origin.git');
    git(root, 'init', '-q', '-b', 'main');
    // the commit on the fix branch is made with the repository's own identity
    git(root, 'config', 'user.name', 'Test');
    git(root, 'config', 'user.email', 't@example.com');
    git(root, 'add', '.');
    git(root, 'commit', '-qm', 'start');
    git(root, 'init', '-q', '--bare', remote);
    git(root, 'remote', 'add', 'origin', remote);
    const planned = await planEdits([PATCH], new WorkspaceFiles(root));
    assert.ok(planned.ok);
    return { root, remote, edits: planned.value };
  }

  it('a dry run calls no GitHub and no git, and still writes the body', async () => {
    const { root, remote, edits } = await repository();
    const { result, events } = await captureLogs(() =>
      createPullRequest({
        root,
        issue: ISSUE,
        patches: [PATCH],
        edits,
        tests: PASSED,
        github: { apiUrl, token: 'secret' },
      }),
    );
    assert.equal(result.dryRun, true);
    assert.equal(result.url, null);
    assert.equal(result.branch, 'oracle/fix-issue-42');
    assert.equal(result.title, '[Auto] Fix: Discounts are wrong');
    assert.match(result.body, /^Closes #42$/m);
    assert.match(result.body, /It returned the discount instead of the discounted price\./);
    assert.match(result.body, /\*\*Confidence:\*\* 0\.85/);
    assert.match(result.body, /\*\*Tests:\*\* Passed \(pytest: 4 passed, 0 failed, 4 total\)/);
    assert.match(result.body, /`shop\.py`/);
    assert.equal(github.requests.length, 0);
    assert.equal(git(remote, 'branch', '--list'), '');
    assert.equal(git(root, 'branch', '--list', 'oracle/*'), '');
    const completed = eventsNamed(events, 'pr_creation_completed')[0]!;
    assert.equal(completed.dry_run, true);
    assert.equal(completed.pr_url, null);
  });

  it('makes no pull request without a test suite, or when the tests failed', async () => {
    const { root, edits } = await repository();
    const noTests: TestResult = {
      ...PASSED,
      passed: false,
      framework: 'unknown',
      command: '',
      totalTests: null,
      passedTests: null,
      outputSummary: NO_TEST_SUITE,
    };
    const { result, events } = await captureLogs(() =>
      createPullRequest({
        root,
        issue: ISSUE,
        patches: [PATCH],
        edits,
        tests: noTests,
        dryRun: false,
        github: { apiUrl, token: 'secret' },
      }),
    );
    assert.equal(result.url, null);
    assert.equal(result.skipped, NO_TEST_SUITE);
    assert.equal(eventsNamed(events, 'pr_skipped_no_tests').length, 1);

    const failed = await captureLogs(() =>
      createPullRequest({
        root,
        issue: ISSUE,
        patches: [PATCH],
        edits,
        tests: { ...PASSED, passed: false, failedCount: 2, failedTests: ['a', 'b'] },
        dryRun: false,
        github: { apiUrl, token: 'secret' },
      }),
    );
    assert.equal(failed.result.url, null);
    assert.match(failed.result.skipped!, /did not pass/);
    assert.equal(eventsNamed(failed.events, 'pr_skipped_tests_failed')[0]!.failed_tests, 2);
    assert.equal(github.requests.length, 0);
  });

  it('a real run pushes the branch to the remote and opens a draft, leaving the checkout alone', async () => {
    const { root, remote, edits } = await repository();
    const result = await createPullRequest({
      root,
      issue: ISSUE,
      patches: [PATCH],
      edits,
      tests: PASSED,
      dryRun: false,
      github: { apiUrl, token: 'secret' },
    });
    assert.equal(result.skipped, null);
    assert.equal(result.url, 'https://github.example/owner/repo/pull/7');
    const [request] = github.requests;
    assert.equal(request!.method, 'POST');
    assert.equal(request!.path, '/repos/owner/repo/pulls');
    assert.equal(request!.authorization, 'Bearer secret');
    assert.deepEqual(
      { ...(request!.body as object), body: undefined },
      {
        title: '[Auto] Fix: Discounts are wrong',
        head: 'oracle/fix-issue-42',
        base: 'main',
        draft: true,
        body: undefined,
      },
    );
    assert.equal(git(remote, 'show', 'oracle/fix-issue-42:pricing.py'), edits[0]!.after.trim());
    assert.match(git(remote, 'log', '-1', '--format=%B', 'oracle/fix-issue-42'), /Closes #42/);
    // the user's checkout: same branch, same files, nothing staged
    assert.equal(git(root, 'rev-parse', '--abbrev-ref', 'HEAD'), 'main');
    assert.equal(git(root, 'status', '--porcelain'), '');
    assert.equal(readFileSync(path.join(root, 'pricing.py'), 'utf8'), edits[0]!.before);
  });
});

describe('GitHub issues', () => {
  const github = new FakeGitHub();
  let apiUrl: string;
  before(async () => {
    apiUrl = await github.start();
  });
  after(() => github.close());

  it('reads owner/repo#N and issue URLs, and nothing else', () => {
    assert.deepEqual(parseIssueReference('octo/cat#12'), {
      owner: 'octo',
      repo: 'cat',
      number: 12,
    });
    assert.deepEqual(parseIssueReference('https://github.com/octo/cat.js/issues/3'), {
      owner: 'octo',
      repo: 'cat.js',
      number: 3,
    });
    assert.equal(parseIssueReference('fix the cart total'), null);
    assert.equal(parseIssueReference('octo/cat#'), null);
  });

  it('fetches an issue with the token, and says plainly when there is none', async () => {
    github.issues.set('octo/cat#12', {
      title: 'Cart total skips an item',
      body: 'cartTotal is low',
    });
    const fetched = await fetchIssue(
      { owner: 'octo', repo: 'cat', number: 12 },
      { apiUrl, token: 't0k' },
    );
    assert.deepEqual(fetched, {
      ok: true,
      value: {
        title: 'Cart total skips an item',
        body: 'cartTotal is low',
        number: 12,
        repo: 'octo/cat',
      },
    });
    assert.equal(github.requests.at(-1)!.authorization, 'Bearer t0k');
    const missing = await fetchIssue(
      { owner: 'octo', repo: 'cat', number: 13 },
      { apiUrl, token: null },
    );
    assert.ok(!missing.ok);
    assert.equal(missing.error.code, 'not_found');
    assert.equal(github.requests.at(-1)!.authorization, undefined);
  });

  it('takes the server and token from the environment', () => {
    assert.deepEqual(
      gitHubSettingsFromEnv({ GITHUB_API_URL: 'http://127.0.0.1:9/', GH_TOKEN: 'x' }),
      {
        apiUrl: 'http://127.0.0.1:9',
        token: 'x',
      },
    );
    assert.deepEqual(gitHubSettingsFromEnv({}), { apiUrl: 'https://api.github.com', token: null });
  });
});
