// Builds the extension, its engine worker, the parse worker, the CLI and the benchmark into dist/.
// Native and ESM-only packages stay external; the tree-sitter runtime, the grammar wasm files and
// the routing phrase bank are copied beside the bundle, where the engine looks for them.
import * as esbuild from 'esbuild';
import { chmodSync, copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';

const require = createRequire(import.meta.url);
const watch = process.argv.includes('--watch');
const production = process.argv.includes('--production');
const dist = path.resolve('dist');

const GRAMMARS = [
  'python',
  'javascript',
  'typescript',
  'tsx',
  'go',
  'java',
  'rust',
  'c-sharp',
  'cpp',
  'ruby',
  'php',
];
const EXTERNAL = [
  'vscode',
  '@lancedb/lancedb',
  'apache-arrow',
  'onnxruntime-node',
  'sharp',
  '@huggingface/transformers',
  'tsx',
];

const entries = [
  { in: 'src/extension/extension.ts', out: 'extension' },
  { in: 'src/engine/host/engine-worker.ts', out: 'engine-worker' },
  { in: 'src/cli/main.ts', out: 'cli', banner: '#!/usr/bin/env node' },
  { in: 'src/engine/index/parse-worker.ts', out: 'parse-worker' },
  { in: 'bench/run.ts', out: 'bench' },
];

function copyAssets() {
  mkdirSync(path.join(dist, 'grammars'), { recursive: true });
  copyFileSync(
    require.resolve('web-tree-sitter/web-tree-sitter.wasm'),
    path.join(dist, 'web-tree-sitter.wasm'),
  );
  const grammarDir = path.join(
    path.dirname(require.resolve('@vscode/tree-sitter-wasm/package.json')),
    'wasm',
  );
  for (const grammar of GRAMMARS) {
    copyFileSync(
      path.join(grammarDir, `tree-sitter-${grammar}.wasm`),
      path.join(dist, 'grammars', `tree-sitter-${grammar}.wasm`),
    );
  }
  // Mermaid is large: the chat loads it only when an answer holds a diagram.
  mkdirSync(path.join(dist, 'webview'), { recursive: true });
  copyFileSync(
    require.resolve('mermaid/dist/mermaid.min.js'),
    path.join(dist, 'webview', 'mermaid.min.js'),
  );
}

const common = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: production ? false : 'linked',
  minify: production,
  external: EXTERNAL,
  // The CommonJS build of web-tree-sitter (the package exports it only to require()).
  alias: { 'web-tree-sitter': require.resolve('web-tree-sitter') },
  logLevel: 'warning',
  logOverride: { 'require-resolve-not-external': 'silent' },
  // Node has a global `navigator` since 21, and VS Code's extension host logs a
  // PendingMigrationError whenever code touches it. Bundled libraries (zod) only probe it to
  // detect browsers and edge runtimes, which these bundles never run in.
  define: { navigator: 'undefined', 'globalThis.navigator': 'undefined' },
};

/** The chat webview's script: a browser bundle, no Node, loaded by the webview under a strict CSP. */
const webview = {
  bundle: true,
  platform: 'browser',
  target: 'es2022',
  format: 'iife',
  sourcemap: production ? false : 'linked',
  minify: production,
  logLevel: 'warning',
  entryPoints: { chat: 'src/webview/chat/main.ts' },
  outdir: path.join(dist, 'webview'),
};

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });
copyAssets();
const contexts = await Promise.all([
  ...entries.map((entry) =>
    esbuild.context({
      ...common,
      entryPoints: { [entry.out]: entry.in },
      outdir: dist,
      ...(entry.banner ? { banner: { js: entry.banner } } : {}),
    }),
  ),
  esbuild.context(webview),
]);
if (watch) {
  await Promise.all(contexts.map((context) => context.watch()));
  console.log('esbuild: watching');
} else {
  await Promise.all(contexts.map((context) => context.rebuild()));
  await Promise.all(contexts.map((context) => context.dispose()));
  if (existsSync(path.join(dist, 'cli.js'))) chmodSync(path.join(dist, 'cli.js'), 0o755);
  console.log(`esbuild: built ${entries.map((entry) => entry.out).join(', ')} into dist/`);
}
