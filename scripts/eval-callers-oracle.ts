// `npm run eval:callers-oracle`: how far our resolved callers agree with the type checkers.
// Samples functions and methods whose name occurs as a call in the TypeScript corpora (rxjs,
// trpc, vitest) and the Python corpora (flask, requests, click, aiohttp, fastapi, httpx,
// pydantic), asks TypeScript's language service (call hierarchy, incoming calls) and Pyright's
// language server (callHierarchy/incomingCalls) for their callers, and reports our precision and
// recall against them per language, with every call site on which the two differ. Possible
// callers do not count against precision; the report says how many checker-only sites we keep
// as possible. Fails below recall 0.95 or precision 0.98 in a language.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import ts from 'typescript';
import { Engine } from '../src/engine/engine';
import type { CodeFact } from '../src/engine/model';
import { unwrap } from '../src/engine/util/result';

const THRESHOLD = { precision: 0.98, recall: 0.95 };
const SAMPLES_PER_CORPUS = Number(process.env.ORACLE_SAMPLES ?? 30);
const SEED = 12;
const EVAL_DIR = path.resolve(
  process.env.CODE_ORACLE_EVAL_DIR ?? path.join('..', 'shared', 'eval'),
);
const PEER_REPOS = path.join(EVAL_DIR, 'peer', 'repos');
const CORPUS_ROOT = path.resolve('.cache', 'corpora');
const REPORT = path.resolve('.cache', 'eval', 'callers-oracle.json');

type Checker = 'typescript' | 'pyright';

interface Corpus {
  readonly id: string;
  readonly checker: Checker;
  /** The folder we index; call sites are paths relative to it. */
  readonly root: string;
  /** The folder the checker sees as its project (a package's parent, so its imports resolve). */
  readonly checkerRoot: string;
}

interface Case {
  readonly corpus: string;
  readonly language: Checker;
  readonly target: string;
  readonly ours: string[];
  /** How each of our sites was resolved (scope, import, class, type, unique, …). */
  readonly how: Record<string, string>;
  readonly possible: string[];
  readonly checker: string[];
}

function corpora(): Corpus[] {
  const shared = JSON.parse(readFileSync(path.join(EVAL_DIR, 'corpora.json'), 'utf8')).corpora as {
    id: string;
    extract_dir: string;
    index_subfolder: string;
  }[];
  const packaged = (id: string, checker: Checker): Corpus => {
    const entry = shared.find((corpus) => corpus.id === id)!;
    const root = path.join(CORPUS_ROOT, entry.extract_dir, entry.index_subfolder);
    return { id, checker, root, checkerRoot: checker === 'pyright' ? path.dirname(root) : root };
  };
  const peer = (id: string, checker: Checker): Corpus => {
    const root = path.join(PEER_REPOS, id);
    return { id, checker, root, checkerRoot: root };
  };
  const only = process.env.ORACLE_CORPORA?.split(',');
  return [
    packaged('rxjs', 'typescript'),
    peer('trpc', 'typescript'),
    peer('vitest', 'typescript'),
    packaged('flask', 'pyright'),
    packaged('requests', 'pyright'),
    packaged('click', 'pyright'),
    peer('aiohttp', 'pyright'),
    peer('fastapi', 'pyright'),
    peer('httpx', 'pyright'),
    peer('pydantic', 'pyright'),
  ].filter((corpus) => !only || only.includes(corpus.id));
}

/** A small seeded generator, so every run samples the same definitions. */
function shuffled<T>(items: T[], seed: number): T[] {
  let state = seed;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

const CONSTRUCTORS = new Set(['constructor', '__init__', '__new__', '__call__']);

/**
 * Python definitions the comparison leaves out, with the reason: Pyright counts reading a property
 * as calling it (ours are calls as written), and binds a call to the `@overload` stub it matches
 * where we bind it to the implementation those stubs describe.
 */
function excluded(root: string, fact: CodeFact): string | null {
  if (fact.language !== 'python') return null;
  const lines = readFileSync(path.join(root, fact.path), 'utf8').split('\n');
  for (let line = fact.startLine - 2; line >= 0 && /^\s*@/.test(lines[line]!); line--) {
    if (/@(\w+\.)?overload\b/.test(lines[line]!)) return 'overload stub';
    if (/@(\w+\.)*(property|cached_property|setter|getter|deleter)\b/.test(lines[line]!))
      return 'property';
  }
  return null;
}

function sample(engine: Engine, checker: Checker, root: string): CodeFact[] {
  const languages = checker === 'typescript' ? ['typescript', 'tsx'] : ['python'];
  const candidates = [...engine.graph.allFacts()].filter(
    (fact) =>
      (fact.kind === 'function' || fact.kind === 'method') &&
      languages.includes(fact.language) &&
      !CONSTRUCTORS.has(fact.name) &&
      !fact.name.startsWith('[') &&
      engine.graph.factsCalling(fact.name).length > 0,
  );
  const skipped = new Map<string, number>();
  for (const fact of candidates) {
    const reason = excluded(root, fact);
    if (reason) skipped.set(reason, (skipped.get(reason) ?? 0) + 1);
  }
  if (skipped.size)
    console.log(
      `  left out of the sample: ${[...skipped].map(([reason, n]) => `${n} ${reason}`).join(', ')}`,
    );
  candidates.sort((a, b) => a.id.localeCompare(b.id));
  return shuffled(
    candidates.filter((fact) => !excluded(root, fact)),
    SEED,
  ).slice(0, SAMPLES_PER_CORPUS);
}

/** Zero-based line and column of the definition's name on its first line. */
function namePosition(root: string, fact: CodeFact): { line: number; character: number } | null {
  const lines = readFileSync(path.join(root, fact.path), 'utf8').split('\n');
  for (let line = fact.startLine - 1; line < Math.min(lines.length, fact.startLine + 2); line++) {
    const match = new RegExp(`(?<![\\w$])${fact.name.replace(/\$/g, '\\$')}(?![\\w$])`).exec(
      lines[line]!,
    );
    if (match) return { line, character: match.index };
  }
  return null;
}

function ourSites(
  engine: Engine,
  fact: CodeFact,
): { ours: string[]; how: Record<string, string>; possible: string[] } {
  const site = (callerId: string, line: number) => `${engine.graph.fact(callerId)!.path}:${line}`;
  // What the lens lists: calls, and the places passing it as a value (the checkers count both).
  const listed = [...engine.graph.callers(fact.id), ...engine.graph.references(fact.id)];
  return {
    how: Object.fromEntries(
      listed.map((call) => [
        site(call.callerId, call.site.line),
        call.site.kind === 'reference' ? `${call.how} reference` : call.how,
      ]),
    ),
    ours: unique(listed.map((call) => site(call.callerId, call.site.line))),
    possible: unique(
      engine.graph.possibleCallers(fact.id).map((call) => site(call.callerId, call.site.line)),
    ),
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)].sort();
}

/** TypeScript's language service over the files we index, asked for incoming calls. */
function typescriptOracle(corpus: Corpus, files: string[]) {
  const absolute = files.map((file) => path.join(corpus.root, file));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    allowJs: false,
    skipLibCheck: true,
    strict: false,
    noEmit: true,
    experimentalDecorators: true,
    jsx: ts.JsxEmit.Preserve,
  };
  const host: ts.LanguageServiceHost = {
    getScriptFileNames: () => absolute,
    getScriptVersion: () => '1',
    getScriptSnapshot: (file) => {
      const text = ts.sys.readFile(file);
      return text === undefined ? undefined : ts.ScriptSnapshot.fromString(text);
    },
    getCurrentDirectory: () => corpus.root,
    getCompilationSettings: () => options,
    getDefaultLibFileName: (settings) => ts.getDefaultLibFilePath(settings),
    fileExists: ts.sys.fileExists,
    readFile: ts.sys.readFile,
    readDirectory: ts.sys.readDirectory,
    directoryExists: ts.sys.directoryExists,
    getDirectories: ts.sys.getDirectories,
  };
  const service = ts.createLanguageService(host, ts.createDocumentRegistry());
  return {
    callers(fact: CodeFact, position: { line: number; character: number }): string[] {
      const file = path.join(corpus.root, fact.path);
      const source = service.getProgram()!.getSourceFile(file);
      if (!source) return [];
      const offset = source.getPositionOfLineAndCharacter(position.line, position.character);
      const incoming = service.provideCallHierarchyIncomingCalls(file, offset);
      const sites: string[] = [];
      for (const call of incoming) {
        const from = service.getProgram()!.getSourceFile(call.from.file);
        if (!from) continue;
        const relative = path.relative(corpus.root, call.from.file).split(path.sep).join('/');
        if (relative.startsWith('..')) continue;
        for (const span of call.fromSpans) {
          // The call hierarchy groups a method with its overrides and the members it overrides;
          // the checker's own go-to-definition says which one this call binds to.
          const bound = service.getDefinitionAtPosition(call.from.file, span.start) ?? [];
          if (!bound.some((entry) => sameDeclaration(entry, file, fact))) continue;
          sites.push(`${relative}:${from.getLineAndCharacterOfPosition(span.start).line + 1}`);
        }
      }
      return unique(sites);
    },
    dispose: () => service.dispose(),
  };
}

/** A definition TypeScript binds a call to is `fact` (any of its overload signatures included). */
function sameDeclaration(entry: ts.DefinitionInfo, file: string, fact: CodeFact): boolean {
  if (entry.fileName !== file || entry.name !== fact.name) return false;
  const owner = fact.className?.slice(fact.className.lastIndexOf('.') + 1) ?? '';
  // A module-level function's container is its module (`"internal/operators/take"`), or none.
  return owner ? entry.containerName === owner : !/^[\w$]+$/.test(entry.containerName);
}

/** A minimal LSP client for pyright-langserver over stdio. */
class PyrightClient {
  private readonly child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private readonly pending = new Map<number, (value: unknown) => void>();
  private readonly opened = new Set<string>();

  constructor(private readonly root: string) {
    this.child = spawn(path.resolve('node_modules', '.bin', 'pyright-langserver'), ['--stdio'], {
      cwd: root,
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    this.child.stderr.on('data', () => undefined);
  }

  async start(): Promise<void> {
    const uri = pathToFileURL(this.root).href;
    await this.request('initialize', {
      processId: process.pid,
      rootUri: uri,
      workspaceFolders: [{ uri, name: path.basename(this.root) }],
      capabilities: {
        textDocument: { callHierarchy: { dynamicRegistration: false } },
        workspace: { configuration: true, workspaceFolders: true },
      },
    });
    this.notify('initialized', {});
  }

  async callers(file: string, position: { line: number; character: number }): Promise<string[]> {
    const uri = pathToFileURL(file).href;
    if (!this.opened.has(uri)) {
      this.opened.add(uri);
      this.notify('textDocument/didOpen', {
        textDocument: { uri, languageId: 'python', version: 1, text: readFileSync(file, 'utf8') },
      });
    }
    const items = (await this.request('textDocument/prepareCallHierarchy', {
      textDocument: { uri },
      position,
    })) as unknown[] | null;
    if (!items?.length) return [];
    const incoming = (await this.request('callHierarchy/incomingCalls', { item: items[0] })) as
      { from: { uri: string }; fromRanges: { start: { line: number } }[] }[] | null;
    const sites: string[] = [];
    for (const call of incoming ?? [])
      for (const range of call.fromRanges)
        sites.push(`${fileURLToPath(call.from.uri)}:${range.start.line + 1}`);
    return sites;
  }

  stop(): void {
    this.child.kill();
  }

  private request(method: string, params: unknown): Promise<unknown> {
    const id = this.nextId++;
    this.send({ jsonrpc: '2.0', id, method, params });
    return new Promise((resolve) => this.pending.set(id, resolve));
  }

  private notify(method: string, params: unknown): void {
    this.send({ jsonrpc: '2.0', method, params });
  }

  private send(message: unknown): void {
    const body = Buffer.from(JSON.stringify(message), 'utf8');
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const headerEnd = this.buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const length = Number(
        /Content-Length: (\d+)/i.exec(this.buffer.subarray(0, headerEnd).toString())![1],
      );
      if (this.buffer.length < headerEnd + 4 + length) return;
      const message = JSON.parse(
        this.buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString('utf8'),
      ) as { id?: number; method?: string; params?: { items?: unknown[] }; result?: unknown };
      this.buffer = this.buffer.subarray(headerEnd + 4 + length);
      if (message.method && message.id !== undefined) this.answer(message.id, message);
      else if (message.id !== undefined) this.pending.get(message.id)?.(message.result);
    }
  }

  /** Requests from the server: settings, capability registration, progress tokens. */
  private answer(id: number, message: { method?: string; params?: { items?: unknown[] } }): void {
    const result =
      message.method === 'workspace/configuration'
        ? (message.params?.items ?? []).map(() => ({ diagnosticMode: 'openFilesOnly' }))
        : null;
    this.send({ jsonrpc: '2.0', id, result });
  }
}

async function evaluate(corpus: Corpus): Promise<Case[]> {
  const store = mkdtempSync(path.join(tmpdir(), 'oracle-callers-'));
  const engine = unwrap(
    await Engine.open({
      root: corpus.root,
      storeDir: path.join(store, 'store'),
      model: { kind: 'none' },
      workers: 0,
    }),
  );
  try {
    unwrap(await engine.index());
    const targets = sample(engine, corpus.checker, corpus.root);
    const cases: Case[] = [];
    if (corpus.checker === 'typescript') {
      const files = [...engine.graph.files()].filter((file) => /\.(ts|tsx|mts|cts)$/.test(file));
      const oracle = typescriptOracle(corpus, files);
      for (const fact of targets) {
        const position = namePosition(corpus.root, fact);
        if (!position) continue;
        cases.push(caseOf(corpus, engine, fact, oracle.callers(fact, position)));
      }
      oracle.dispose();
    } else {
      const client = new PyrightClient(corpus.checkerRoot);
      await client.start();
      for (const fact of targets) {
        const position = namePosition(corpus.root, fact);
        if (!position) continue;
        const sites = await client.callers(path.join(corpus.root, fact.path), position);
        const relative = sites
          .map((site) => path.relative(corpus.root, site).split(path.sep).join('/'))
          .filter((site) => !site.startsWith('..'));
        cases.push(caseOf(corpus, engine, fact, unique(relative)));
      }
      client.stop();
    }
    return cases;
  } finally {
    engine.dispose();
    rmSync(store, { recursive: true, force: true });
  }
}

function caseOf(corpus: Corpus, engine: Engine, fact: CodeFact, checker: string[]): Case {
  const { ours, how, possible } = ourSites(engine, fact);
  return {
    corpus: corpus.id,
    language: corpus.checker,
    target: `${fact.path}:${fact.startLine} ${fact.qualifiedName}`,
    ours,
    how,
    possible,
    checker,
  };
}

function lineOf(corpus: Corpus, site: string): string {
  const [file, line] = [
    site.slice(0, site.lastIndexOf(':')),
    Number(site.slice(site.lastIndexOf(':') + 1)),
  ];
  const text = readFileSync(path.join(corpus.root, file), 'utf8').split('\n')[line - 1] ?? '';
  return text.trim().slice(0, 100);
}

async function main(): Promise<void> {
  const all = corpora();
  const cases: Case[] = [];
  for (const corpus of all) {
    const started = Date.now();
    const found = await evaluate(corpus);
    cases.push(...found);
    console.log(
      `${corpus.id}: ${found.length} sampled definitions (${((Date.now() - started) / 1000).toFixed(0)} s)`,
    );
  }
  mkdirSync(path.dirname(REPORT), { recursive: true });
  writeFileSync(REPORT, JSON.stringify(cases, null, 1));
  let failed = false;
  for (const language of ['typescript', 'pyright'] as const) {
    const mine = cases.filter((entry) => entry.language === language);
    if (!mine.length) continue;
    // Precision over our resolved calls; a checker site counts as found when we list it as a
    // call or as a reference by value (Pyright counts some of those as calls, TypeScript none).
    let agreedCalls = 0;
    let found = 0;
    let ours = 0;
    let theirs = 0;
    let keptPossible = 0;
    let asReference = 0;
    const byHow: Record<string, { agreed: number; total: number }> = {};
    const differences: string[] = [];
    for (const entry of mine) {
      const corpus = all.find((candidate) => candidate.id === entry.corpus)!;
      const checker = new Set(entry.checker);
      const listed = new Set(entry.ours);
      const calls = entry.ours.filter((site) => !entry.how[site]?.endsWith('reference'));
      agreedCalls += calls.filter((site) => checker.has(site)).length;
      ours += calls.length;
      theirs += entry.checker.length;
      found += entry.checker.filter((site) => listed.has(site)).length;
      for (const site of entry.ours) {
        const tally = (byHow[entry.how[site] ?? '?'] ??= { agreed: 0, total: 0 });
        tally.total++;
        if (checker.has(site)) tally.agreed++;
        if (checker.has(site) && entry.how[site]?.endsWith('reference')) asReference++;
      }
      for (const site of entry.checker.filter((site) => !listed.has(site))) {
        const possible = entry.possible.includes(site);
        if (possible) keptPossible++;
        differences.push(
          `  missed${possible ? ' (kept as possible)' : ''}  ${entry.corpus} ${entry.target} ← ${site}  ${lineOf(corpus, site)}`,
        );
      }
      for (const site of calls.filter((site) => !checker.has(site)))
        differences.push(
          `  extra (${entry.how[site]})  ${entry.corpus} ${entry.target} ← ${site}  ${lineOf(corpus, site)}`,
        );
    }
    const precision = ours ? agreedCalls / ours : 1;
    const recall = theirs ? found / theirs : 1;
    const low = precision < THRESHOLD.precision || recall < THRESHOLD.recall;
    failed ||= low;
    console.log(
      `\n${language === 'typescript' ? 'TypeScript (language service)' : 'Python (Pyright)'}: ${mine.length} definitions, ${theirs} checker call sites, ${ours} resolved calls of ours; precision ${precision.toFixed(3)}, recall ${recall.toFixed(3)} (${asReference} found as references by value); ${keptPossible} checker-only sites kept as possible: ${low ? 'FAIL' : 'ok'}`,
    );
    console.log(
      `  agreement by how we resolved: ${Object.entries(byHow)
        .map(([how, tally]) => `${how} ${tally.agreed}/${tally.total}`)
        .join(', ')}`,
    );
    for (const line of differences) console.log(line);
  }
  console.log(`\nreport: ${REPORT}`);
  process.exit(failed ? 1 : 0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(2);
});
