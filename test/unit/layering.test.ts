import { strict as assert } from 'node:assert';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import * as path from 'node:path';
import ts from 'typescript';

/**
 * The layers of `src/`, read from the import graph with the TypeScript compiler's pre-processor
 * (static imports, `import type`, re-exports and dynamic `import()` alike). A module may import its
 * own layer's modules and any below it, never one above; folders never import each other in a
 * cycle; only the extension imports `vscode`; the webview imports only its protocol file.
 */
const ROOT = path.resolve(__dirname, '..', '..');
const SRC = path.join(ROOT, 'src');

/** Bottom first. A unit is a folder under src/engine, engine.ts itself, or a folder under src/. */
const LAYERS: readonly (readonly string[])[] = [
  ['engine/util', 'engine/log', 'engine/text', 'engine/model'],
  // llm/ is the model clients: the indexer's summariser, the search's query rewriting and the
  // answerer all call it, and it needs only util and log
  ['engine/store', 'engine/embed', 'engine/graph', 'engine/lang', 'engine/llm'],
  // resolve/ is symbol lookup over the code graph (definitions, references, callers), which the
  // answerer's gap filling and agent tools use; the issue resolver is fix/, above the answerer
  ['engine/index', 'engine/resolve'],
  ['engine/search'],
  ['engine/answer'],
  ['engine/fix'],
  ['engine/engine.ts'],
  ['engine/host', 'cli'],
  ['extension'],
];
const WEBVIEW = 'webview';
const WEBVIEW_PROTOCOL = 'extension/chat/protocol.ts';

interface Edge {
  readonly from: string;
  readonly to: string;
  readonly specifier: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sourceFiles(full);
    return name.endsWith('.ts') ? [full] : [];
  });
}

/** The file a relative specifier names, as a path relative to src/ (with forward slashes). */
function resolveImport(fromFile: string, specifier: string): string {
  const base = path.resolve(path.dirname(fromFile), specifier.replace(/\.js$/, ''));
  const candidates = [`${base}.ts`, path.join(base, 'index.ts'), base];
  const found = candidates.find((file) => existsSync(file) && statSync(file).isFile()) ?? base;
  return path.relative(SRC, found).split(path.sep).join('/');
}

function importGraph(): Edge[] {
  return sourceFiles(SRC).flatMap((file) => {
    const from = path.relative(SRC, file).split(path.sep).join('/');
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    return info.importedFiles.map(({ fileName }) => ({
      from,
      specifier: fileName,
      to: fileName.startsWith('.') ? resolveImport(file, fileName) : fileName,
    }));
  });
}

/** An import of another module of src/ (not a package, nor a file such as package.json). */
function isRelative(edge: Edge): boolean {
  return edge.specifier.startsWith('.') && !edge.to.startsWith('../');
}

/** engine/answer/gaps.ts → engine/answer; engine/engine.ts → engine/engine.ts; cli/x.ts → cli. */
function unitOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] === 'engine') return parts.length === 2 ? file : `engine/${parts[1]}`;
  return parts[0]!;
}

function rankOf(unit: string): number | undefined {
  const rank = LAYERS.findIndex((layer) => layer.includes(unit));
  return rank < 0 ? undefined : rank;
}

function describeEdge(edge: Edge): string {
  return `src/${edge.from} imports '${edge.specifier}'`;
}

/** Imports from a lower layer into a higher one, and imports of units the layers do not name. */
function upwardImports(edges: readonly Edge[]): string[] {
  const problems: string[] = [];
  for (const edge of edges.filter(isRelative)) {
    const from = unitOf(edge.from);
    const to = unitOf(edge.to);
    if (from === to || from === WEBVIEW) continue;
    const fromRank = rankOf(from);
    const toRank = rankOf(to);
    if (fromRank === undefined || toRank === undefined) {
      const unknown = fromRank === undefined ? from : to;
      problems.push(`${describeEdge(edge)}: ${unknown} is in no layer (add it to LAYERS)`);
    } else if (toRank > fromRank)
      problems.push(
        `${describeEdge(edge)}: ${from} (layer ${fromRank}) is below ${to} (layer ${toRank})`,
      );
  }
  return problems;
}

/** Cycles between units, each as the chain of units that closes it. */
function unitCycles(edges: readonly Edge[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const edge of edges.filter(isRelative)) {
    const from = unitOf(edge.from);
    const to = unitOf(edge.to);
    if (from === to) continue;
    if (!next.has(from)) next.set(from, new Set());
    next.get(from)!.add(to);
  }
  const cycles: string[] = [];
  const done = new Set<string>();
  const visit = (unit: string, chain: string[]): void => {
    const seen = chain.indexOf(unit);
    if (seen >= 0) {
      cycles.push([...chain.slice(seen), unit].join(' → '));
      return;
    }
    if (done.has(unit)) return;
    for (const target of next.get(unit) ?? []) visit(target, [...chain, unit]);
    done.add(unit);
  };
  for (const unit of [...next.keys()].sort()) visit(unit, []);
  return cycles;
}

/** What the webview may import: its own files, its protocol file, and packages. */
function webviewLeaks(edges: readonly Edge[]): string[] {
  return edges
    .filter(
      (edge) =>
        isRelative(edge) &&
        (unitOf(edge.from) === WEBVIEW || edge.from === WEBVIEW_PROTOCOL) &&
        unitOf(edge.to) !== WEBVIEW,
    )
    .filter((edge) => edge.from === WEBVIEW_PROTOCOL || edge.to !== WEBVIEW_PROTOCOL)
    .map((edge) => `${describeEdge(edge)}: the webview sees only its protocol types`);
}

/**
 * Webview imports of the protocol that bring values, not only types: a value import would bundle
 * the protocol's zod schemas, and zod with them, into the page.
 */
function webviewValueImports(): string[] {
  const problems: string[] = [];
  for (const file of sourceFiles(path.join(SRC, WEBVIEW))) {
    const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest);
    for (const statement of source.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier))
        continue;
      const specifier = statement.moduleSpecifier.text;
      if (!specifier.startsWith('.') || resolveImport(file, specifier) !== WEBVIEW_PROTOCOL)
        continue;
      const clause = statement.importClause;
      const bindings = clause?.namedBindings;
      const typeOnly =
        clause?.isTypeOnly ||
        (!clause?.name &&
          bindings !== undefined &&
          ts.isNamedImports(bindings) &&
          bindings.elements.every((element) => element.isTypeOnly));
      if (!typeOnly)
        problems.push(
          `src/${path.relative(SRC, file).split(path.sep).join('/')} imports values from '${specifier}': the webview imports its protocol's types only`,
        );
    }
  }
  return problems;
}

function vscodeOutsideExtension(edges: readonly Edge[]): string[] {
  return edges
    .filter((edge) => edge.to === 'vscode' && unitOf(edge.from) !== 'extension')
    .map((edge) => `${describeEdge(edge)}: only the extension runs inside VS Code`);
}

describe('layering of src/', () => {
  const edges = importGraph();

  it('reads the import graph, type-only and dynamic imports included', () => {
    const from = (file: string) => edges.filter((edge) => edge.from === file);
    assert.ok(edges.length > 300, `only ${edges.length} imports read`);
    assert.ok(
      from('extension/folder-index.ts').some((edge) => edge.to === 'engine/engine.ts'),
      "the folder index's type-only import of the engine is read",
    );
    assert.ok(
      edges.some((edge) => edge.specifier === '@huggingface/transformers'),
      "the embedder's dynamic import() is read",
    );
  });

  it('imports no module of a higher layer', () => {
    const problems = upwardImports(edges);
    assert.deepEqual(problems, [], `imports that go up:\n${problems.join('\n')}`);
  });

  it('has no import cycle between folders', () => {
    const cycles = unitCycles(edges);
    assert.deepEqual(cycles, [], `folder cycles:\n${cycles.join('\n')}`);
  });

  it('gives the webview nothing but its protocol types, and vscode only to the extension', () => {
    const problems = [
      ...webviewLeaks(edges),
      ...webviewValueImports(),
      ...vscodeOutsideExtension(edges),
    ];
    assert.deepEqual(problems, [], problems.join('\n'));
  });

  it('reports an upward import, a cycle and a webview leak, naming the import', () => {
    const planted: Edge[] = [
      {
        from: 'engine/store/tables.ts',
        to: 'engine/index/indexer.ts',
        specifier: '../index/indexer',
      },
      {
        from: 'engine/index/indexer.ts',
        to: 'engine/store/tables.ts',
        specifier: '../store/tables',
      },
      {
        from: 'webview/chat/main.ts',
        to: 'engine/model/index.ts',
        specifier: '../../engine/model',
      },
    ];
    assert.deepEqual(upwardImports(planted), [
      "src/engine/store/tables.ts imports '../index/indexer': engine/store (layer 1) is below engine/index (layer 2)",
    ]);
    assert.deepEqual(unitCycles(planted), ['engine/index → engine/store → engine/index']);
    assert.deepEqual(webviewLeaks(planted), [
      "src/webview/chat/main.ts imports '../../engine/model': the webview sees only its protocol types",
    ]);
  });
});
