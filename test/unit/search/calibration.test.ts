import { strict as assert } from 'node:assert';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import type { Embedder } from '../../../src/engine/embed/embedder';
import {
  calibrate,
  calibrationSamples,
  FULL_TRUST_QUESTIONS,
  type CalibrationSample,
} from '../../../src/engine/search/calibration';
import type { ChunkMeta } from '../../../src/engine/store/tables';
import { unwrap } from '../../../src/engine/util/result';
import { PLAIN_ENGLISH_SEMANTIC_WEIGHT } from '../../../src/engine/search/technicality';
import { captureLogs, eventsNamed } from '../../helpers/logs';
import { openEngine, POTION_MODEL, Scratch } from '../../helpers/workspace';

/** An embedder for tests: `vectorOf` decides each text's vector. */
function fakeEmbedder(vectorOf: (text: string) => number[]): Embedder {
  return {
    id: 'fake',
    dimensions: 4,
    kind: 'static',
    embed: async (texts) => texts.map((text) => Float32Array.from(vectorOf(text))),
    dispose: () => undefined,
  };
}

const TOPICS = [
  'parse the configuration file',
  'open a database connection',
  'render the html template',
  'send an email message',
  'compress the archive',
];

/** A made-up word of its own for sample i. */
const wordOf = (i: number) =>
  `zq${String.fromCharCode(97 + (i % 26))}${String.fromCharCode(97 + Math.floor(i / 26))}x`;

/** Questions and code that share no words, so word matching cannot tell them apart. */
function samples(count: number): CalibrationSample[] {
  return Array.from({ length: count }, (_, i) => ({
    chunkId: `f${i}`,
    question: `${TOPICS[i % TOPICS.length]} for the case ${wordOf(i)}`,
    code: `def handler():\n    return result_${i}\n    pass`,
  }));
}

/** A model that pairs every question with its code: both get sample i's own direction. */
function pairing(pool: readonly CalibrationSample[]): (text: string) => number[] {
  const index = new Map(
    pool.flatMap(
      (sample, i) =>
        [
          [sample.question, i],
          [sample.code, i],
        ] as const,
    ),
  );
  return (text) => {
    const i = index.get(text)!;
    return [Math.cos(i), Math.sin(i), Math.cos(2.1 * i), Math.sin(2.1 * i)];
  };
}

/** A model that knows nothing: the same text always gets the same meaningless vector. */
const noise = (text: string) =>
  [...createHash('sha256').update(text).digest().subarray(0, 4)].map((byte) => byte - 128);

/** Samples whose code holds its question's word twice, and the next three codes' words once. */
function wordsFindCode(count: number): CalibrationSample[] {
  return samples(count).map((sample, i) => ({
    ...sample,
    code: `${sample.code}\n    ${wordOf(i)}(${wordOf(i)})\n    ${[1, 2, 3].map((back) => wordOf((i + count - back) % count)).join('; ')}`,
  }));
}

describe('retriever calibration', () => {
  it('gives the semantic list the default weight when the model pairs questions with their code', async () => {
    const pool = samples(40);
    const calibration = await calibrate(pool, fakeEmbedder(pairing(pool)), 100);
    assert.equal(calibration.questions, 40);
    assert.ok(
      calibration.semanticMrr! > 0.9 && calibration.lexicalMrr! < 0.2,
      JSON.stringify(calibration),
    );
    assert.equal(calibration.semanticTrust, 1);
  });

  it('gives it nothing when words find the code and the model would only shuffle it', async () => {
    const calibration = await calibrate(wordsFindCode(60), fakeEmbedder(noise), 100);
    assert.ok(
      calibration.lexicalMrr! > 0.95 && calibration.semanticMrr! < 0.2,
      JSON.stringify(calibration),
    );
    assert.equal(calibration.semanticShare, 0);
    assert.equal(calibration.semanticTrust, 0);
  });

  it('moves the default weights towards a measure over few functions only in proportion, with no jump', async () => {
    const trust = async (count: number) => {
      const measured = await calibrate(wordsFindCode(count), fakeEmbedder(noise), 100);
      const unshrunk = Math.min(1, measured.semanticShare / PLAIN_ENGLISH_SEMANTIC_WEIGHT);
      return { trust: measured.semanticTrust, unshrunk };
    };
    const ten = await trust(10);
    const expected = 1 + (ten.unshrunk - 1) * (10 / FULL_TRUST_QUESTIONS);
    assert.ok(ten.unshrunk < 0.5, 'words find the code in a small pool too');
    assert.ok(Math.abs(ten.trust - expected) < 0.001, `10 functions: ${JSON.stringify(ten)}`);
    const [twentyNine, thirty] = [(await trust(29)).trust, (await trust(30)).trust];
    assert.ok(twentyNine - thirty < 0.05, `29 → 30 functions: ${twentyNine} → ${thirty}`);
    assert.equal(thirty, 0);
  });

  it('keeps the default weights when no documented function can be measured', async () => {
    const calibration = await calibrate([], fakeEmbedder(noise), 12);
    assert.deepEqual(
      [calibration.semanticTrust, calibration.lexicalMrr, calibration.questions],
      [1, null, 0],
    );
  });

  it('asks with the leading docstring or doc comment, and ranks the code without it', () => {
    const meta = (id: string, language: string, startLine: number): ChunkMeta =>
      ({
        id,
        level: 'function',
        language,
        startLine,
        endLine: startLine + 20,
        filePath: 'a',
        directoryPath: '.',
        className: null,
        functionName: id,
      }) as unknown as ChunkMeta;
    const python =
      'def load(path):\n    """Read the settings file from disk and merge it\n    into the default settings.\n\n    :param path: where it is\n    """\n    # not part of the question\n    data = read(path)\n    merged = merge(data)\n    return merged\n';
    const typescript =
      '/**\n * Subscribes again to the source observable when it fails, up to a given count of retries.\n * @param count how many times\n */\nexport function retry(count) {\n  // inside\n  let seen = 0;\n  return source.pipe(count, seen);\n}\n';
    const undocumented = 'def bare():\n    a = 1\n    b = 2\n    return a + b\n';
    // no documentation, only a remark in the body: not a question
    const remark =
      'function wait(ms) {\n  // we have to wait a little because the upstream server rate limits our requests\n  const started = Date.now();\n  while (Date.now() - started < ms) {}\n  return started;\n}\n';
    const texts = new Map([
      ['load', python],
      ['retry', typescript],
      ['bare', undocumented],
      ['wait', remark],
    ]);
    const found = calibrationSamples(
      [
        meta('load', 'python', 1),
        meta('retry', 'typescript', 1),
        meta('bare', 'python', 1),
        meta('wait', 'javascript', 1),
      ],
      texts,
      'static',
    );
    assert.deepEqual(
      found.map((sample) => sample.question),
      [
        'Read the settings file from disk and merge it into the default settings.',
        'Subscribes again to the source observable when it fails, up to a given count of retries.',
      ],
    );
    assert.equal(
      found[0]!.code,
      'def load(path):\n    data = read(path)\n    merged = merge(data)\n    return merged',
    );
    assert.ok(!found[1]!.code.includes('Subscribes') && !found[1]!.code.includes('inside'));
  });

  describe('in the engine', () => {
    const scratch = new Scratch();
    after(() => scratch.cleanup());

    it('measures the real model once per codebase, stores it, and searches with it', async () => {
      const files: Record<string, string> = {};
      const verbs = [
        'read',
        'write',
        'parse',
        'render',
        'send',
        'open',
        'close',
        'merge',
        'split',
        'check',
      ];
      const nouns = ['settings', 'user', 'order', 'invoice', 'report'];
      verbs.forEach((verb, v) => {
        files[`pkg/${verb}.py`] = nouns
          .map(
            (noun, n) =>
              `def ${verb}_${noun}(item):\n    """${verb[0]!.toUpperCase()}${verb.slice(1)} the ${noun} held by the item and hand back what it became."""\n    value = item.get("${noun}")\n    result = handle_${v}_${n}(value)\n    return result\n`,
          )
          .join('\n\n');
      });
      const root = scratch.tree(files);
      const engine = await openEngine(scratch, root, {
        model: { kind: 'directory', path: POTION_MODEL },
      });
      try {
        const { events } = await captureLogs(async () => unwrap(await engine.index()));
        const measured = eventsNamed(events, 'retrievers_calibrated')[0]!;
        assert.equal(measured.questions, 50);
        assert.equal(measured.model, 'potion-base-2M');
        const stored = JSON.parse(
          readFileSync(path.join(engine.storeDir, 'calibration.json'), 'utf8'),
        );
        assert.deepEqual(engine.calibration, stored);
        assert.ok(stored.semanticTrust >= 0 && stored.semanticTrust <= 1);

        const again = await captureLogs(async () => unwrap(await engine.index()));
        assert.equal(
          eventsNamed(again.events, 'retrievers_calibrated').length,
          0,
          'measured again with nothing changed',
        );
        const searched = await captureLogs(async () =>
          unwrap(await engine.search({ query: 'where is the invoice written?' })),
        );
        const weights = eventsNamed(searched.events, 'technicality_scored')[0]!;
        assert.equal(weights.semantic_trust, stored.semanticTrust);

        // changed files are counted in the stored measure, so a restart does not forget them
        const edited = ['pkg/read.py', 'pkg/write.py', 'pkg/parse.py'];
        for (const file of edited)
          writeFileSync(path.join(root, file), `${files[file]}\n\ndef extra():\n    return 1\n`);
        unwrap(await engine.updateFiles(edited));
        // written after the save has returned
        assert.equal(engine.calibration?.changedFiles, 3);
        await engine.whenSaved();
        const counted = JSON.parse(
          readFileSync(path.join(engine.storeDir, 'calibration.json'), 'utf8'),
        );
        assert.equal(counted.changedFiles, 3);
        // a count that cannot be written is logged, and the save it counts stands
        const calibrationFile = path.join(engine.storeDir, 'calibration.json');
        renameSync(calibrationFile, `${calibrationFile}.kept`);
        mkdirSync(calibrationFile);
        writeFileSync(
          path.join(root, edited[0]!),
          `${files[edited[0]!]}\n\ndef another():\n    return 2\n`,
        );
        const failed = await captureLogs(async () => {
          unwrap(await engine.updateFiles([edited[0]!]));
          await engine.whenSaved();
        });
        assert.equal(eventsNamed(failed.events, 'calibration_not_saved').length, 1);
        assert.ok(
          unwrap(await engine.search({ query: 'another' })).spans.some(
            (span) => span.path === edited[0],
          ),
        );
        rmSync(calibrationFile, { recursive: true });
        renameSync(`${calibrationFile}.kept`, calibrationFile);
        engine.dispose();
        const reopened = await openEngine(scratch, root, {
          model: { kind: 'directory', path: POTION_MODEL },
          storeDir: engine.storeDir,
        });
        assert.equal(reopened.calibration?.changedFiles, 3);
        reopened.dispose();
      } finally {
        engine.dispose();
      }
    });

    it('keeps the default weights without an embedding model', async () => {
      const engine = await openEngine(scratch, scratch.fixture('shop-py'));
      try {
        unwrap(await engine.index());
        assert.equal(engine.calibration, null);
        assert.ok(!existsSync(path.join(engine.storeDir, 'calibration.json')));
      } finally {
        engine.dispose();
      }
    });
  });
});
