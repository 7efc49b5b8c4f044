import { strict as assert } from 'node:assert';
import type { FixProposal } from '../../../src/engine/fix/model';
import { fixReport } from '../../../src/extension/fix/report';

const PROPOSAL: FixProposal = {
  analysis: {
    relevantFiles: ['src/cart.js'],
    relevantChunks: [
      {
        path: 'src/cart.js',
        startLine: 4,
        endLine: 10,
        level: 'function',
        chunkId: 'c1',
        name: 'cartTotal',
        parents: ['src', 'src/cart.js'],
        score: 1,
        why: 'names cartTotal',
      },
    ],
    identifiers: ['cartTotal'],
    suggestedFixScope: 'single_function',
    query: 'cartTotal is too low cartTotal',
  },
  patches: [
    {
      file: 'src/cart.js',
      original: 'i = 1',
      replacement: 'i = 0',
      explanation: 'The loop skipped the first item.',
      confidence: 0.95,
      otherFilesAffected: [],
    },
  ],
  edits: [
    {
      file: 'src/cart.js',
      before: 'for (let i = 1;;)\n',
      after: 'for (let i = 0;;)\n',
      replacements: [{ start: 9, end: 14, text: 'i = 0' }],
    },
  ],
  attempts: 2,
  retriedFor: [{ file: 'src/cart.js', reason: 'The original text was not found in src/cart.js.' }],
};

describe('the fix report', () => {
  it('shows the explanation, confidence, clickable sources, the diff and the tests', () => {
    const issue = { title: 'cartTotal is too low', body: '', number: 7, repo: 'o/r' };
    const report = fixReport(issue, PROPOSAL, null);
    assert.match(report, /^# Code Oracle fix: cartTotal is too low \(#7\)$/m);
    assert.match(report, /^src\/cart\.js: The loop skipped the first item\.$/m);
    assert.match(report, /^Confidence 0\.95 · fix scope: single function/m);
    // the transcript's link provider turns these lines into links
    assert.match(report, /^ {2}- src\/cart\.js:4-10 — cartTotal \(in src › src\/cart\.js\)$/m);
    assert.match(report, /^-for \(let i = 1;;\)$/m);
    assert.match(report, /^\+for \(let i = 0;;\)$/m);
    assert.match(
      report,
      /model was told why:\n {2}- src\/cart\.js: The original text was not found/,
    );
    assert.match(report, /^Tests: not run yet/m);
    const tested = fixReport(issue, PROPOSAL, {
      passed: true,
      framework: 'node',
      command: 'npm test --silent',
      totalTests: 3,
      passedTests: 3,
      failedTests: [],
      failedCount: 0,
      outputSummary: '',
      timedOut: false,
      exitCode: 0,
      durationMs: 300,
    });
    assert.match(tested, /^Tests: passed — 3 passed, 0 failed, 3 total \(npm test --silent\)$/m);
  });
});
