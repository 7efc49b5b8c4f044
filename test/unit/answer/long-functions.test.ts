import { strict as assert } from 'node:assert';
import { appendFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Engine } from '../../../src/engine/engine';
import { unwrap } from '../../../src/engine/util/result';
import { answerCiting, FakeLlm } from '../../helpers/fake-llm';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, Scratch } from '../../helpers/workspace';

/** A 160-line function: long enough to be summarised (150 lines or more). */
function longFunction(): string {
  const steps = Array.from({ length: 155 }, (_, i) => `    total = total + ${i}  # step ${i}`);
  return `def reconcile_ledger(entries):\n    total = 0\n${steps.join('\n')}\n    return total\n`;
}

const SUMMARY =
  'reconcile_ledger(entries: list) -> int sums bookkeeping adjustments over many steps and returns the balance as an int. It raises nothing, reads no files and changes no state.';

describe('long functions', () => {
  const scratch = new Scratch();
  let engine: Engine;
  let root: string;
  let summarizer: FakeLlm;
  before(async () => {
    root = scratch.tree({
      'books/ledger.py': longFunction(),
      'books/util.py': 'def helper():\n    return 1\n',
    });
    summarizer = new FakeLlm({ complete: { summary: SUMMARY } });
    engine = await openEngine(scratch, root, { summarizer });
    unwrap(await engine.index());
  });
  after(() => {
    engine.dispose();
    scratch.cleanup();
  });

  it("are summarised while indexing, with the body kept, and found by the summary's words", async () => {
    assert.equal(summarizer.completions.length, 1);
    assert.equal(summarizer.completions[0]!.schemaName, 'FunctionSummary');
    assert.match(summarizer.completions[0]!.system, /every parameter, with its type/);
    const meta = [...engine.store.catalog.values()].find(
      (chunk) => chunk.functionName === 'reconcile_ledger',
    )!;
    assert.equal(meta.isSummarized, true);
    const result = unwrap(
      await engine.search({ query: 'where are bookkeeping adjustments balanced?' }),
    );
    assert.equal(result.spans[0]!.path, 'books/ledger.py');
    assert.ok(
      result.context.items.some((item) => item.text.includes('total = total + 3')),
      'the context shows code lines, not the summary',
    );
  });

  it('are not summarised again when their file is saved unchanged in them, and are when they change', async () => {
    appendFileSync(path.join(root, 'books/ledger.py'), '\n\ndef other():\n    return 2\n');
    unwrap(await engine.updateFiles(['books/ledger.py']));
    assert.equal(summarizer.completions.length, 1, 'the summary is kept by the hash of the body');
    appendFileSync(path.join(root, 'books/util.py'), '\n');
    unwrap(await engine.updateFiles(['books/util.py']));
    assert.equal(summarizer.completions.length, 1);
  });

  it('are read whole in a focused call when the question needs the body', async () => {
    const llm = new FakeLlm({
      complete: (request: { schemaName: string }) =>
        request.schemaName === 'FocusedAnswer'
          ? answerCiting('It adds 155 constants in order.', [
              { path: 'books/ledger.py', startLine: 3, endLine: 4 },
            ])
          : answerCiting('The loop adds each step to the total.', [
              { path: 'books/ledger.py', startLine: 150, endLine: 151 },
            ]),
    });
    const { result, events } = await captureLogs(async () =>
      unwrap(
        await engine.ask({
          question: 'walk me through exactly what reconcile_ledger does step by step',
          llm,
        }),
      ),
    );
    const escalated = eventsNamed(events, 'long_function_escalated')[0]!;
    assert.equal(escalated.function_name, 'reconcile_ledger');
    assert.equal(escalated.file_path, 'books/ledger.py');
    assert.ok((escalated.full_content_tokens as number) > 500);
    assert.deepEqual(
      llm.completions.map((request) => request.schemaName),
      ['FocusedAnswer', 'Answer'],
    );
    assert.match(
      llm.completions[1]!.prompt,
      /A focused reading of the whole `reconcile_ledger` \(books\/ledger\.py:1-158\) found: It adds 155 constants in order\./,
    );
    assert.deepEqual(
      result.citations.map((citation) => citation.startLine),
      [150],
      'a line of the whole body, which the model was shown, may be cited',
    );
    assert.deepEqual(result.metadata.escalations, ['books/ledger.py:reconcile_ledger']);
  });
});
