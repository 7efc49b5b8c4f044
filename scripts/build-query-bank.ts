/**
 * Builds data/query-bank.json, the phrase bank behind the embedding layer of level routing.
 *
 *   npx tsx scripts/build-query-bank.ts
 *
 * A bank built from CodeSearchNet, CoSQA and StaQC would need downloads that are not possible here.
 * This bank is built from descriptions whose level is known, taken from pinned registry sources
 * that are not evaluation corpora, plus question phrasings written for each level:
 *   - Python 3.11's standard library (Debian libpython3.11-stdlib): module docstrings are file
 *     level, class docstrings class level, function docstrings function level;
 *   - Go 1.19's standard library (Debian golang-1.19-src): package documentation is directory
 *     level, type comments class level, function comments function level;
 *   - TypeScript's lib.*.d.ts (npm typescript, pinned by package-lock.json): interface comments
 *     class level, method comments function level;
 *   - data/query-phrases.json: question-style phrases for every level, written for this bank.
 * Each description's first sentence is embedded with the default test model (potion-base-2M);
 * per level, k-means groups them and each centroid is kept with the phrase nearest to it. The engine re-embeds the phrases when it runs with a different model.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';
import { StaticModel } from '../src/engine/embed/static-model';
import { extractDefinitions } from '../src/engine/index/extract';
import type { ChunkLevel } from '../src/engine/model';
import { loadGrammar } from '../src/engine/lang/grammars';
import { languageForPath } from '../src/engine/lang/registry';

const CACHE = path.resolve('.cache', 'bank-sources');
const MODEL = path.resolve('models', 'potion-base-2M');
const SOURCES = [
  {
    id: 'python-stdlib',
    package: 'libpython3.11-stdlib',
    version: '3.11.2-6+deb12u9',
    sha256: '10f13e000ee757f5f2d2d3569f9e30546214a0c850acd78695feae373bfa3e53',
    root: 'usr/lib/python3.11',
  },
  {
    id: 'go-stdlib',
    package: 'golang-1.19-src',
    version: '1.19.8-2',
    sha256: '2dfa82fe4f08f4e0193c532e561af4c91871f5235608f04f2bb8d57bb288df5a',
    root: 'usr/share/go-1.19/src',
  },
];
const PER_LEVEL_MAX = 260;
const DUPLICATE_COSINE = 0.95;

interface Phrase {
  readonly level: ChunkLevel;
  readonly text: string;
  readonly source: string;
}

async function main(): Promise<void> {
  const phrases: Phrase[] = [];
  for (const source of SOURCES) phrases.push(...(await describe(fetchDebian(source), source.id)));
  phrases.push(
    ...(await describe(
      path.dirname(require.resolve('typescript/lib/lib.es5.d.ts')),
      'typescript-lib',
      /^lib\..*\.d\.ts$/,
    )),
  );
  const written = JSON.parse(
    readFileSync(path.resolve('data', 'query-phrases.json'), 'utf8'),
  ) as Record<ChunkLevel, string[]>;
  for (const [level, texts] of Object.entries(written))
    for (const text of texts) phrases.push({ level: level as ChunkLevel, text, source: 'written' });

  const model = await StaticModel.load(MODEL, 'potion-base-2M');
  const entries: { level: ChunkLevel; phrase: string; vector: Float32Array }[] = [];
  for (const level of ['directory', 'file', 'class', 'function'] as const) {
    const ofLevel = unique(phrases.filter((phrase) => phrase.level === level));
    const vectors = ofLevel.map((phrase) => model.embedOne(phrase.text));
    const written = ofLevel
      .map((phrase, i) => ({ phrase, vector: vectors[i]! }))
      .filter((entry) => entry.phrase.source === 'written');
    const mined = ofLevel
      .map((phrase, i) => ({ phrase, vector: vectors[i]! }))
      .filter((entry) => entry.phrase.source !== 'written');
    const clusters = kMeans(
      mined.map((entry) => entry.vector),
      Math.min(PER_LEVEL_MAX - written.length, Math.ceil(mined.length / 4)),
    );
    for (const cluster of clusters) {
      const nearest = cluster.members.reduce((best, index) =>
        dot(mined[index]!.vector, cluster.centroid) > dot(mined[best]!.vector, cluster.centroid)
          ? index
          : best,
      );
      entries.push({ level, phrase: mined[nearest]!.phrase.text, vector: cluster.centroid });
    }
    for (const entry of written)
      entries.push({ level, phrase: entry.phrase.text, vector: entry.vector });
    process.stderr.write(
      `${level}: ${mined.length} mined descriptions → ${clusters.length} centroids, ${written.length} written phrases\n`,
    );
  }
  const kept = dropCrossLevelDuplicates(entries);
  const bank = {
    about:
      'Phrase bank for the embedding layer of level routing; built by scripts/build-query-bank.ts (see its header).',
    model: 'potion-base-2M',
    dimensions: model.dimensions,
    sources: [
      ...SOURCES.map((source) => `${source.package}=${source.version}`),
      `typescript@${ts.version} lib.*.d.ts`,
      'data/query-phrases.json',
    ],
    entries: kept.map((entry) => ({
      level: entry.level,
      phrase: entry.phrase,
      vector: Buffer.from(
        entry.vector.buffer,
        entry.vector.byteOffset,
        entry.vector.byteLength,
      ).toString('base64'),
    })),
  };
  writeFileSync(path.resolve('data', 'query-bank.json'), `${JSON.stringify(bank)}\n`);
  process.stderr.write(`wrote ${kept.length} entries to data/query-bank.json\n`);
}

function fetchDebian(source: (typeof SOURCES)[number]): string {
  const folder = path.join(CACHE, source.id);
  if (existsSync(path.join(folder, source.root))) return path.join(folder, source.root);
  mkdirSync(folder, { recursive: true });
  execFileSync('apt-get', ['download', `${source.package}=${source.version}`], {
    cwd: CACHE,
    stdio: 'inherit',
  });
  const archive = readdirSync(CACHE).find(
    (name) => name.startsWith(`${source.package}_`) && name.endsWith('.deb'),
  )!;
  const hash = createHash('sha256')
    .update(readFileSync(path.join(CACHE, archive)))
    .digest('hex');
  if (hash !== source.sha256)
    throw new Error(`${archive}: sha256 ${hash}, expected ${source.sha256}`);
  execFileSync('dpkg-deb', ['-x', path.join(CACHE, archive), folder]);
  return path.join(folder, source.root);
}

/** Descriptions from every file under `root` whose level the code tells: module, type, function. */
async function describe(root: string, source: string, only?: RegExp): Promise<Phrase[]> {
  const phrases: Phrase[] = [];
  for (const file of walk(root)) {
    if (only && !only.test(path.basename(file))) continue;
    if (/[/\\](test|tests|testdata|internal|vendor)[/\\]|_test\.go$/.test(file)) continue;
    const spec = languageForPath(file);
    if (!spec || statSync(file).size > 400_000) continue;
    const text = readFileSync(file, 'utf8');
    const extraction = extractDefinitions(file, text, spec, await loadGrammar(spec));
    const moduleLevel: ChunkLevel =
      spec.id === 'go' && path.basename(file) === 'doc.go' ? 'directory' : 'file';
    if (extraction.moduleDoc) add(phrases, moduleLevel, extraction.moduleDoc, source);
    for (const definition of extraction.definitions) {
      const doc = definition.facts.docstring;
      if (!doc || definition.insideFunction) continue;
      add(phrases, definition.isContainer ? 'class' : 'function', doc, source);
    }
  }
  return phrases;
}

function add(phrases: Phrase[], level: ChunkLevel, doc: string, source: string): void {
  const sentence = doc
    .replace(/\s+/g, ' ')
    .split(/(?<=[.!?])\s/)[0]!
    .trim();
  if (sentence.length < 20 || sentence.length > 200) return;
  if (/copyright|license|deprecated|^todo|^xxx|^see |^https?:/i.test(sentence)) return;
  if ((sentence.match(/[(){}[\];=<>]/g) ?? []).length > 4) return;
  phrases.push({ level, text: sentence, source });
}

function* walk(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name),
  )) {
    const full = path.join(folder, entry.name);
    if (entry.isDirectory()) yield* walk(full);
    else if (entry.isFile()) yield full;
  }
}

/** Spherical k-means (vectors are unit length): k-means++ seeding, then Lloyd's iterations. */
function kMeans(
  vectors: Float32Array[],
  k: number,
): { centroid: Float32Array; members: number[] }[] {
  if (!vectors.length || k < 1) return [];
  let seed = 17;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const centroids: Float32Array[] = [vectors[Math.floor(random() * vectors.length)]!];
  while (centroids.length < k) {
    const distances = vectors.map(
      (vector) => Math.min(...centroids.map((centroid) => 1 - dot(vector, centroid))) ** 2,
    );
    const total = distances.reduce((a, b) => a + b, 0);
    let pick = random() * total;
    let index = 0;
    while (index < distances.length - 1 && (pick -= distances[index]!) > 0) index++;
    centroids.push(vectors[index]!);
  }
  let assignment: number[] = [];
  for (let iteration = 0; iteration < 12; iteration++) {
    assignment = vectors.map((vector) =>
      centroids.reduce(
        (best, centroid, c) => (dot(vector, centroid) > dot(vector, centroids[best]!) ? c : best),
        0,
      ),
    );
    for (let c = 0; c < centroids.length; c++) {
      const members = vectors.filter((_, i) => assignment[i] === c);
      if (!members.length) continue;
      const sum = new Float32Array(vectors[0]!.length);
      for (const member of members) for (let d = 0; d < sum.length; d++) sum[d]! += member[d]!;
      const norm = Math.hypot(...sum) || 1;
      centroids[c] = sum.map((value) => value / norm);
    }
  }
  return centroids
    .map((centroid, c) => ({
      centroid,
      members: assignment.flatMap((a, i) => (a === c ? [i] : [])),
    }))
    .filter((cluster) => cluster.members.length > 0);
}

function dropCrossLevelDuplicates<T extends { level: ChunkLevel; vector: Float32Array }>(
  entries: T[],
): T[] {
  const kept: T[] = [];
  for (const entry of entries) {
    if (
      kept.some(
        (other) =>
          other.level !== entry.level && dot(other.vector, entry.vector) > DUPLICATE_COSINE,
      )
    )
      continue;
    kept.push(entry);
  }
  return kept;
}

function unique(phrases: Phrase[]): Phrase[] {
  const seen = new Set<string>();
  return phrases.filter((phrase) => !seen.has(phrase.text) && seen.add(phrase.text));
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i]! * b[i]!;
  return sum;
}

main().catch((cause: unknown) => {
  process.stderr.write(
    `build-query-bank failed: ${cause instanceof Error ? cause.stack : String(cause)}\n`,
  );
  process.exitCode = 1;
});
