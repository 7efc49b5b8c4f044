import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../../../src/engine/engine';
import { issueFromDiagnostic } from '../../../src/engine/fix/resolver';
import type { StructuredRequest } from '../../../src/engine/llm/client';
import { FakeLlm } from '../../helpers/fake-llm';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, Scratch } from '../../helpers/workspace';

const ISSUE = {
  title: 'apply_discount returns the wrong price',
  body: 'A 25% discount on 80 gives 20 instead of 60. Probably in order_total too? The Frobnicator is fine.',
  number: 42,
  repo: null,
};

const GOOD = {
  file: 'pricing.py',
  original: '    return price * percent / 100\n',
  replacement: '    return price * (100 - percent) / 100\n',
  explanation: 'It returned the discount, not the discounted price.',
  confidence: 0.9,
  otherFilesAffected: [],
};

describe('the resolver', () => {
  const scratch = new Scratch();
  let root: string;
  let engine: Engine;
  before(async () => {
    root = scratch.fixture('fix-py');
    engine = await openEngine(scratch, root);
    assert.ok((await engine.index()).ok);
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  it('analyses the issue, keeps only identifiers the index defines, and proposes a checked patch', async () => {
    const llm = new FakeLlm({ complete: { patches: [GOOD] } });
    const { result, events } = await captureLogs(() => engine.proposeFix({ issue: ISSUE, llm }));
    assert.ok(result.ok);
    const { analysis, edits, attempts } = result.value;
    assert.deepEqual([...analysis.identifiers].sort(), ['apply_discount', 'order_total']);
    const lead = analysis.relevantChunks.slice(0, 2);
    assert.deepEqual(lead.map((chunk) => chunk.name).sort(), ['apply_discount', 'order_total']);
    assert.deepEqual(lead[0]!.parents, ['pricing.py']);
    assert.ok(analysis.relevantChunks.every((chunk) => chunk.name !== 'Frobnicator'));
    assert.ok(analysis.relevantChunks.length <= 10);
    assert.equal(analysis.suggestedFixScope, 'single_function');
    assert.equal(attempts, 1);
    assert.match(edits[0]!.after, /return price \* \(100 - percent\) \/ 100/);
    // the model saw the code as it is now
    assert.match(llm.completions[0]!.prompt, /return price \* percent \/ 100/);
    // nothing was written
    assert.match(readFileSync(path.join(root, 'pricing.py'), 'utf8'), /return price \* percent/);

    const extracted = eventsNamed(events, 'identifiers_extracted')[0]!;
    assert.ok((extracted.raw_identifiers as number) > 2);
    assert.equal(extracted.matched_in_index, 2);
    for (const name of [
      'issue_analysis_started',
      'issue_analysis_completed',
      'patch_generation_started',
      'patch_generated',
    ])
      assert.equal(eventsNamed(events, name).length, 1, name);
    const traces = new Set(events.map((event) => event.trace_id));
    assert.equal(traces.size, 1);
    assert.ok([...traces][0]);
  });

  it('refuses a patch whose original does not match, retries once with the reason, and uses the second', async () => {
    const wrong = { ...GOOD, original: '    return price*percent/100\n' };
    const llm = new FakeLlm({ complete: [{ patches: [wrong] }, { patches: [GOOD] }] });
    const { result, events } = await captureLogs(() => engine.proposeFix({ issue: ISSUE, llm }));
    assert.ok(result.ok);
    assert.equal(result.value.attempts, 2);
    assert.match(result.value.retriedFor[0]!.reason, /not found in pricing\.py/);
    const retry = llm.completions[1] as StructuredRequest<unknown>;
    assert.match(retry.prompt, /Your previous patch was refused/);
    assert.match(retry.prompt, /not found in pricing\.py/);
    assert.equal(eventsNamed(events, 'patch_original_not_found').length, 1);
  });

  it('reports a patch refused twice, with the reasons, and applies nothing', async () => {
    const wrong = { ...GOOD, original: 'not in the file' };
    const llm = new FakeLlm({ complete: { patches: [wrong] } });
    const { result, events } = await captureLogs(() => engine.proposeFix({ issue: ISSUE, llm }));
    assert.ok(!result.ok);
    assert.equal(llm.completions.length, 2);
    assert.match(result.error.message, /could not be applied, even after it was told why/);
    assert.equal(result.error.refusals?.[0]?.file, 'pricing.py');
    assert.equal(eventsNamed(events, 'patch_generation_failed')[0]!.level, 'error');
  });

  it('says plainly that a patch needs a model when there is none', async () => {
    const result = await engine.proposeFix({ issue: ISSUE, llm: null });
    assert.ok(!result.ok);
    assert.equal(result.error.code, 'model_unavailable');
    assert.match(result.error.message, /needs a language model/);
  });

  it("puts a diagnostic's place first and reads the editor's unsaved text", async () => {
    const unsaved = readFileSync(path.join(root, 'pricing.py'), 'utf8').replace(
      'price * percent / 100',
      'price * percent / 100.0',
    );
    const diagnostic = {
      path: 'pricing.py',
      message: 'Result is the discount, not the price',
      source: 'reviewer',
      startLine: 8,
      endLine: 8,
      context: unsaved.split('\n').slice(3, 10).join('\n'),
      contextStartLine: 4,
    };
    const llm = new FakeLlm({
      complete: { patches: [{ ...GOOD, original: '    return price * percent / 100.0\n' }] },
    });
    const result = await engine.proposeFix({
      issue: issueFromDiagnostic(diagnostic),
      diagnostic,
      llm,
      overlay: { 'pricing.py': unsaved },
    });
    assert.ok(result.ok, result.ok ? '' : result.error.message);
    const first = result.value.analysis.relevantChunks[0]!;
    assert.equal(first.name, 'apply_discount');
    assert.match(first.why, /the diagnostic/);
    assert.equal(result.value.analysis.suggestedFixScope, 'single_function');
    assert.equal(result.value.edits[0]!.before, unsaved);
    assert.match(llm.completions[0]!.prompt, /Diagnostic at pricing\.py:8 \(reviewer\)/);
  });
});
