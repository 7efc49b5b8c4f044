#!/usr/bin/env node
// npm run package [-- --target linux-x64]
//
// Builds a platform-specific VSIX (code-oracle-<version>-<target>.vsix in the repository root) that
// carries only the target's native binaries, then checks it:
//   1. builds the bundles for production (node esbuild.mjs --production);
//   2. reads from the bundles which packages they load at run time (esbuild leaves them external)
//      and collects those packages, their dependencies and the target's native packages;
//   3. stages the extension in .cache/package/<target>/: dist/, media/, syntaxes/, the docs and
//      licence, a package.json whose dependencies are those packages, and their node_modules
//      pruned to what runs on the target;
//   4. runs `vsce package --target <target>` there; .vscodeignore says which files it takes;
//   5. checks the VSIX's contents and size (with unzip) and, when the target is this machine,
//      smoke-tests it: the runtime packages load from the VSIX's own node_modules and its CLI
//      indexes a fixture. A VSIX that fails these checks is deleted.
// Any failure ends with one line saying what is wrong and exit code 1.
import { spawnSync } from 'node:child_process';
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { builtinModules } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The VS Code targets, each with the suffix of LanceDB's native package (napi-rs names: glibc on Linux, MSVC on Windows). */
const TARGETS = {
  'linux-x64': { lancedb: 'linux-x64-gnu' },
  'linux-arm64': { lancedb: 'linux-arm64-gnu' },
  'darwin-x64': { lancedb: 'darwin-x64' },
  'darwin-arm64': { lancedb: 'darwin-arm64' },
  'win32-x64': { lancedb: 'win32-x64-msvc' },
  'win32-arm64': { lancedb: 'win32-arm64-msvc' },
};

/** The bundles the extension runs (the CLI too, for `bin`); each must be in the VSIX. bench.js is a development tool and stays out. */
const BUNDLES = ['extension.js', 'engine-worker.js', 'parse-worker.js', 'cli.js'];

/** What the extension consists of besides dist/ and node_modules; .vscodeignore then picks the files. */
const EXTENSION_FILES = ['media', 'models', 'syntaxes', 'LICENSE', 'README.md', 'CHANGELOG.md'];

/** The Marketplace's practical ceiling for this extension; the shipped model must fit under it. */
export const MAX_VSIX_BYTES = 80 * 1024 * 1024;
/** The model the engine loads offline (src/engine/embed/load.ts), with its licence notice. */
const SHIPPED_MODEL_FILES = ['model.safetensors', 'tokenizer.json', 'config.json', 'NOTICE'].map(
  (file) => `extension/models/potion-base-2M/${file}`,
);

/** Licence texts ship with every package, whatever else is pruned. */
const LICENCE = /^(licen[cs]e|notice|copying)/i;
/** Never loaded at run time: source maps, TypeScript sources and declarations, docs, sources of native builds. */
const NOT_LOADED = /\.(map|[cm]?ts|md|markdown|cc|h|gyp)$/i;
const NOT_LOADED_DIRS = new Set([
  'node_modules',
  'test',
  'tests',
  '__tests__',
  'docs',
  'example',
  'examples',
  '.github',
]);

/** Packages that ship far more than Node loads from them: which of their files to keep. */
const PACKAGE_FILES = {
  // Builds for browsers and bundlers, sources and types (16 MB): Node loads only the node builds.
  '@huggingface/transformers': (file) => /^dist\/transformers\.node\.(mjs|cjs)$/.test(file),
  // transformers' Node build carries the part of ONNX Runtime Web it uses inline, so this package
  // (140 MB of wasm) is never loaded; its package.json (and its small dependencies) stay so that
  // the dependency tree vsce reads with `npm list` is complete.
  'onnxruntime-web': () => false,
  // One package with every platform's binaries: keep the target's. On macOS the versioned dylib is a
  // copy of libonnxruntime.1.dylib (npm turns the symlink into a file); the binding loads the latter.
  'onnxruntime-node': (file, target) => {
    const binary = /^bin\/napi-v\d+\/([^/]+)\/([^/]+)\/(.+)$/.exec(file);
    if (!binary) return true;
    return (
      `${binary[1]}-${binary[2]}` === target &&
      !/^libonnxruntime\.\d+\.\d+\.\d+\.dylib$/.test(binary[3])
    );
  },
};

class Failure extends Error {}

function log(message) {
  console.log(`package: ${message}`);
}

function hostTarget() {
  return `${process.platform}-${process.arch}`;
}

/** `--target <t>` or `--target=<t>`; the default is this machine. */
export function parseTarget(args) {
  let target = hostTarget();
  for (let i = 0; i < args.length; i++) {
    const [flag, inline] = args[i].split(/=(.*)/s);
    if (flag !== '--target')
      throw new Failure(
        `unknown argument ${args[i]}: usage: npm run package [-- --target <target>]`,
      );
    target = inline ?? args[++i];
  }
  if (!TARGETS[target])
    throw new Failure(
      `no VS Code target "${target ?? ''}": pass --target with one of ${Object.keys(TARGETS).join(', ')}`,
    );
  return target;
}

/** Runs a Node script, its output shown; a failure says which step failed. */
function runNode(what, args, options) {
  const result = spawnSync(process.execPath, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    ...options,
  });
  if (result.status !== 0)
    throw new Failure(
      `${what} failed (exit ${result.status ?? result.signal}): see its output above`,
    );
}

function build() {
  runNode('the build (node esbuild.mjs --production)', ['esbuild.mjs', '--production'], {
    cwd: ROOT,
  });
}

/**
 * The packages the bundles load at run time: the bare specifiers esbuild left as require("…") or
 * import("…"), less Node's own modules and vscode, each with how it is loaded.
 */
export function runtimeSpecifiers(sources) {
  const found = new Map();
  for (const source of sources) {
    for (const [, kind, name] of source.matchAll(/\b(require|import)\("([^"./][^"]*)"\)/g)) {
      if (
        name === 'vscode' ||
        name.startsWith('node:') ||
        builtinModules.includes(name.split('/')[0])
      )
        continue;
      found.set(name, kind);
    }
  }
  return found;
}

function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Node's lookup: the node_modules of `from` and of each folder above it, up to the repository. */
function resolvePackage(name, from) {
  for (let dir = from; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === ROOT) return null;
  }
}

/**
 * The packages requested ({ name, from: the folder it is looked up from, neededBy }) and what they
 * need, as installed: folder → package.json. Required dependencies and peers are followed; optional
 * ones are either other platforms' binaries (the target's come from nativePackages) or features
 * the extension does not use, like LanceDB's OpenAI embeddings.
 */
function dependencyClosure(requests, packages = new Map()) {
  const queue = [...requests];
  while (queue.length) {
    const { name, from, neededBy } = queue.shift();
    const dir = resolvePackage(name, from);
    if (!dir) throw new Failure(`${name} (needed by ${neededBy}) is not installed: run npm ci`);
    if (packages.has(dir)) continue;
    const json = readJson(path.join(dir, 'package.json'));
    packages.set(dir, json);
    const peers = Object.keys(json.peerDependencies ?? {}).filter(
      (peer) => !json.peerDependenciesMeta?.[peer]?.optional,
    );
    for (const dependency of [...Object.keys(json.dependencies ?? {}), ...peers])
      queue.push({ name: dependency, from: dir, neededBy: json.name });
  }
  return packages;
}

/**
 * The target's native packages for the packages collected, as requests for dependencyClosure, or
 * every reason they cannot be had: npm installs only this machine's, and some libraries publish no
 * binary for some targets.
 */
export function nativePackages(packages, target) {
  const byName = new Map([...packages].map(([dir, json]) => [json.name, { dir, json }]));
  const wanted = [];
  if (byName.has('@lancedb/lancedb'))
    wanted.push({
      parent: '@lancedb/lancedb',
      name: `@lancedb/lancedb-${TARGETS[target].lancedb}`,
    });
  if (byName.has('sharp')) {
    wanted.push({ parent: 'sharp', name: `@img/sharp-${target}` });
    // On Windows libvips comes inside @img/sharp-win32-*; elsewhere it is a package of its own.
    if (!target.startsWith('win32'))
      wanted.push({ parent: 'sharp', name: `@img/sharp-libvips-${target}` });
  }
  const requests = [];
  const problems = [];
  const missing = [];
  for (const { parent, name } of wanted) {
    const { dir, json } = byName.get(parent);
    const version = json.optionalDependencies?.[name];
    if (!version)
      problems.push(`${parent} ${json.version} publishes no ${target} binary (${name})`);
    else if (!resolvePackage(name, dir)) missing.push(`${name}@${version}`);
    else requests.push({ name, from: dir, neededBy: parent });
  }
  const onnx = byName.get('onnxruntime-node');
  if (
    onnx &&
    !existsSync(
      path.join(onnx.dir, 'bin', 'napi-v6', ...target.split('-'), 'onnxruntime_binding.node'),
    )
  ) {
    problems.push(`onnxruntime-node ${onnx.json.version} ships no ${target} binary`);
  }
  if (missing.length) {
    problems.push(
      `not installed: ${missing.join(', ')} (npm installs only this machine's native packages: package ${target} on a ${target} machine after npm ci)`,
    );
  }
  if (problems.length) throw new Failure(`cannot package ${target}: ${problems.join('; ')}`);
  return requests;
}

/** Whether a file of a package goes into the VSIX for the target (`file` relative to the package, with /). */
export function shipsFile(packageName, file, target) {
  if (file === 'package.json' || LICENCE.test(path.posix.basename(file))) return true;
  if (NOT_LOADED.test(file)) return false;
  const keep = PACKAGE_FILES[packageName];
  return keep ? keep(file, target) : true;
}

/** A package's files, relative and with /, leaving out nested node_modules (packages of their own) and tests, docs, examples. */
function* packageFiles(dir, relative = '') {
  for (const entry of readdirSync(path.join(dir, relative), { withFileTypes: true })) {
    const file = relative ? `${relative}/${entry.name}` : entry.name;
    if (entry.isDirectory() && !NOT_LOADED_DIRS.has(entry.name)) yield* packageFiles(dir, file);
    else if (entry.isFile()) yield file;
  }
}

/** A clean .cache/package/<target>/ with the built extension and its package.json. */
function stageExtension(target, roots, packages) {
  const stage = path.join(ROOT, '.cache', 'package', target);
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  cpSync(path.join(ROOT, 'dist'), path.join(stage, 'dist'), { recursive: true });
  for (const item of EXTENSION_FILES) {
    if (existsSync(path.join(ROOT, item)))
      cpSync(path.join(ROOT, item), path.join(stage, item), { recursive: true });
  }
  // The shipped model's weights go in as float16: half the size, and the loader reads either.
  const weights = path.join(stage, 'models', 'potion-base-2M', 'model.safetensors');
  if (existsSync(weights)) writeFileSync(weights, safetensorsToFloat16(readFileSync(weights)));
  // The dependencies are the runtime packages at the versions shipped. No scripts (vsce would run
  // vscode:prepublish), no devDependencies; the overrides stay, `npm list` needs them to accept the tree.
  const manifest = readJson(path.join(ROOT, 'package.json'));
  const versions = new Map(
    [...packages].map(([dir, json]) => [path.relative(ROOT, dir), json.version]),
  );
  manifest.dependencies = Object.fromEntries(
    roots.map((name) => [name, versions.get(path.join('node_modules', name))]),
  );
  delete manifest.devDependencies;
  delete manifest.scripts;
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`);
  return stage;
}

/** Copies each collected package into the staging folder at the same place in node_modules, pruned. */
function stageNodeModules(stage, packages, target) {
  let files = 0;
  for (const [dir, json] of packages) {
    const destination = path.join(stage, path.relative(ROOT, dir));
    for (const file of packageFiles(dir)) {
      if (!shipsFile(json.name, file, target)) continue;
      mkdirSync(path.dirname(path.join(destination, file)), { recursive: true });
      copyFileSync(path.join(dir, file), path.join(destination, file));
      files++;
    }
  }
  return files;
}

/**
 * vsce in its default mode, not --no-dependencies: that mode leaves node_modules out altogether,
 * while this one takes the packages `npm list --production` finds in the staging folder (it reads
 * the staged tree, installs nothing).
 */
function runVsce(stage, target, version) {
  const vsceDir = resolvePackage('@vscode/vsce', ROOT);
  if (!vsceDir) throw new Failure('@vscode/vsce is not installed: run npm ci');
  const vsix = path.join(ROOT, `code-oracle-${version}-${target}.vsix`);
  rmSync(vsix, { force: true }); // a failed run leaves no VSIX behind, not even an earlier one
  const args = [
    'package',
    '--target',
    target,
    '--out',
    vsix,
    '--ignoreFile',
    path.join(ROOT, '.vscodeignore'),
  ];
  runNode(`vsce package in ${path.relative(ROOT, stage)}`, [path.join(vsceDir, 'vsce'), ...args], {
    cwd: stage,
  });
  return vsix;
}

/** The VSIX's entries with their compressed sizes, from `unzip -Zl`. */
function listVsix(vsix) {
  const result = spawnSync('unzip', ['-Zl', vsix], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw new Failure(`unzip is needed to check the VSIX: ${result.error.message}`);
  if (result.status !== 0)
    throw new Failure(`unzip could not read ${vsix}: ${result.stderr.trim()}`);
  const entries = [];
  for (const line of result.stdout.split('\n')) {
    // -rw-r--r--  2.0 unx   467402 b-   123456 defN 25-Nov-22 09:45 extension/dist/extension.js
    const fields = /^\S{10}\s+\S+\s+\S+\s+(\d+)\s+\S+\s+(\d+)\s+\S+\s+\S+\s+\S+\s+(.+)$/.exec(line);
    if (fields)
      entries.push({ name: fields[3], size: Number(fields[1]), compressed: Number(fields[2]) });
  }
  return entries;
}

/**
 * The bundles, grammars, webview, media and the target's binaries are inside; no other platform's
 * binaries are. `nativeDirs`: where the target's native packages are staged (node_modules/…).
 */
export function verifyContents(entries, target, nativeDirs) {
  const names = new Set(entries.map((entry) => entry.name));
  const problems = [];
  for (const bundle of BUNDLES)
    if (!names.has(`extension/dist/${bundle}`)) problems.push(`dist/${bundle} missing`);
  if (names.has('extension/dist/bench.js'))
    problems.push('dist/bench.js (a development tool) included');
  for (const [prefix, what] of [
    ['extension/dist/grammars/', 'grammar wasm files'],
    ['extension/dist/webview/', 'webview files'],
    ['extension/media/', 'media'],
  ]) {
    if (![...names].some((name) => name.startsWith(prefix)))
      problems.push(`no ${what} (${prefix.slice('extension/'.length)})`);
  }
  if (!names.has('extension/dist/web-tree-sitter.wasm'))
    problems.push('dist/web-tree-sitter.wasm missing');
  for (const file of SHIPPED_MODEL_FILES)
    if (!names.has(file)) problems.push(`${file.slice('extension/'.length)} missing`);
  // Each of the target's native packages (LanceDB's, sharp's) brought its binary, so did
  // onnxruntime-node if it is inside, and every binary belongs to the target.
  const binaries = [...names].filter((name) => /\.(node|so(\.\d+)*|dylib|dll)$/.test(name));
  const ours = nativeDirs.map((dir) => `extension/${dir}/`);
  for (const prefix of ours) {
    if (!binaries.some((name) => name.startsWith(prefix)))
      problems.push(`no binary in ${prefix.slice('extension/'.length)}`);
  }
  const onnx = `extension/node_modules/onnxruntime-node/bin/napi-v6/${target.replace('-', '/')}/`;
  if (
    names.has('extension/node_modules/onnxruntime-node/package.json') &&
    !names.has(`${onnx}onnxruntime_binding.node`)
  ) {
    problems.push(`no ${onnx.slice('extension/'.length)}onnxruntime_binding.node`);
  }
  const foreign = binaries.filter(
    (name) => !name.startsWith(onnx) && !ours.some((prefix) => name.startsWith(prefix)),
  );
  if (foreign.length) problems.push(`binaries of other platforms: ${foreign.join(', ')}`);
  if (problems.length) throw new Failure(`the VSIX is incomplete: ${problems.join('; ')}`);
}

/** The VSIX must stay under MAX_VSIX_BYTES. */
export function checkSize(bytes) {
  if (bytes > MAX_VSIX_BYTES)
    throw new Failure(
      `the VSIX is ${megabytes(bytes)}, over the ${megabytes(MAX_VSIX_BYTES)} limit: see the largest parts above`,
    );
}

/**
 * A .safetensors file with its float32 tensors stored as float16 (round to nearest even); other
 * tensors are copied as they are. The header is rewritten with the new offsets and padded with
 * spaces to a multiple of 8 bytes, as the format recommends.
 */
export function safetensorsToFloat16(buffer) {
  const headerLength = Number(
    new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength).getBigUint64(0, true),
  );
  const header = JSON.parse(buffer.subarray(8, 8 + headerLength).toString('utf8'));
  const base = 8 + headerLength;
  const tensors = Object.entries(header)
    .filter(([name]) => name !== '__metadata__')
    .sort(([, a], [, b]) => a.data_offsets[0] - b.data_offsets[0]);
  const parts = [];
  const outHeader = header.__metadata__ ? { __metadata__: header.__metadata__ } : {};
  let offset = 0;
  for (const [name, info] of tensors) {
    const bytes = buffer.subarray(base + info.data_offsets[0], base + info.data_offsets[1]);
    const data = info.dtype === 'F32' ? float32BytesToFloat16(bytes) : bytes;
    outHeader[name] = {
      ...info,
      dtype: info.dtype === 'F32' ? 'F16' : info.dtype,
      data_offsets: [offset, offset + data.length],
    };
    parts.push(data);
    offset += data.length;
  }
  let json = JSON.stringify(outHeader);
  json += ' '.repeat((8 - ((8 + Buffer.byteLength(json)) % 8)) % 8);
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([length, Buffer.from(json, 'utf8'), ...parts]);
}

function float32BytesToFloat16(bytes) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const out = Buffer.alloc(bytes.length / 2);
  for (let i = 0; i < bytes.length / 4; i++)
    out.writeUInt16LE(floatToHalf(view.getUint32(i * 4, true)), i * 2);
  return out;
}

/** IEEE 754 binary32 bits → binary16 bits, rounding to nearest even (subnormals, infinities, NaN). */
export function floatToHalf(bits) {
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  const halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    let half = mantissa >>> shift;
    const rest = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (rest > halfway || (rest === halfway && half & 1)) half++;
    return sign | half;
  }
  // A carry out of the mantissa rounds up into the exponent, which is the right result.
  let half = sign | (halfExponent << 10) | (mantissa >>> 13);
  const rest = mantissa & 0x1fff;
  if (rest > 0x1000 || (rest === 0x1000 && half & 1)) half++;
  return half;
}

/** Compressed size per part: each runtime package, the grammars, each other file of dist, the rest. */
function largestParts(entries, count) {
  const parts = new Map();
  for (const { name, compressed } of entries) {
    const file = name.replace(/^extension\//, '');
    const part =
      /^(node_modules\/(@[^/]+\/)?[^/]+)/.exec(file)?.[1].replace('node_modules/', '') ??
      (file.startsWith('dist/grammars/') ? 'dist/grammars/' : file);
    parts.set(part, (parts.get(part) ?? 0) + compressed);
  }
  return [...parts].sort((a, b) => b[1] - a[1]).slice(0, count);
}

/**
 * Runs the extracted VSIX with plain Node, in a temporary folder with no node_modules above it: the
 * runtime packages load, as the bundles load them, from the VSIX's node_modules, and its CLI indexes
 * test/fixtures/shop-py (LanceDB and Arrow at work). Only when the target is this machine.
 */
function smokeTest(vsix, specifiers) {
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'code-oracle-vsix-'));
  try {
    const unzip = spawnSync('unzip', ['-q', vsix, '-d', scratch], { encoding: 'utf8' });
    if (unzip.status !== 0)
      throw new Failure(`unzip could not extract ${vsix}: ${unzip.stderr.trim()}`);
    const extension = path.join(scratch, 'extension');
    const env = { ...process.env, NODE_PATH: '', CODE_ORACLE_HOME: path.join(scratch, 'home') };
    // From dist/, as the bundles resolve them: require() for what they require, import() for what they import.
    const loads = `(async () => {
      for (const [name, kind] of ${JSON.stringify([...specifiers])}) {
        const file = require.resolve(name);
        if (!file.startsWith(${JSON.stringify(path.join(extension, 'node_modules') + path.sep)})) throw new Error(name + ' resolved outside the VSIX: ' + file);
        try { kind === 'import' ? await import(name) : require(name); } catch (error) { throw new Error(name + ' does not load: ' + error.message.split('\\n')[0]); }
      }
    })().catch((error) => { console.error(error.message); process.exit(1); });`;
    smokeStep('the runtime packages', [process.execPath, '-e', loads], {
      cwd: path.join(extension, 'dist'),
      env,
    });
    const fixture = path.join(ROOT, 'test', 'fixtures', 'shop-py');
    const index = smokeStep(
      '`code-oracle index`',
      [
        process.execPath,
        path.join(extension, 'dist', 'cli.js'),
        'index',
        fixture,
        '--store',
        path.join(scratch, 'store'),
        '--json',
      ],
      // No hub to download the default model from: the VSIX's own model must be used.
      { cwd: scratch, env: { ...env, CODE_ORACLE_HUB_URL: 'http://127.0.0.1:1' } },
    );
    const summary = JSON.parse(index.stdout);
    if (!(summary.indexed > 0))
      throw new Failure(
        `smoke test: \`code-oracle index\` from the VSIX indexed no files of ${fixture}`,
      );
    if (summary.embedding?.modelId !== 'potion-base-2M')
      throw new Failure(
        `smoke test: offline, the VSIX's CLI did not fall back to its own model: ${summary.embedding?.reason ?? summary.embedding?.modelId}`,
      );
    return summary;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function smokeStep(what, [command, ...args], options) {
  const result = spawnSync(command, args, {
    ...options,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.status !== 0) {
    const reason = (result.stderr || result.stdout || result.error?.message || '')
      .trim()
      .split('\n')
      .at(-1);
    throw new Failure(`smoke test: ${what} failed from the extracted VSIX: ${reason}`);
  }
  return result;
}

/**
 * Runtime packages the VSIX does without: transformer embedding models need transformers.js, ONNX
 * Runtime and libvips (25 MB packed); the default static model needs none of them, and the engine
 * says so clearly when a transformer model is chosen in a build without them.
 */
const LEFT_OUT = new Map([
  [
    '@huggingface/transformers',
    'transformer embedding models only (with ONNX Runtime and libvips: 25 MB); the default Model2Vec model does not use it',
  ],
]);

const megabytes = (bytes) => `${(bytes / 1024 / 1024).toFixed(1)} MB`;

function main() {
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  const target = parseTarget(process.argv.slice(2));
  const { version } = readJson(path.join(ROOT, 'package.json'));
  log(`building code-oracle ${version} for ${target}`);
  build();

  const bundles = BUNDLES.map((bundle) => readFileSync(path.join(ROOT, 'dist', bundle), 'utf8'));
  const specifiers = runtimeSpecifiers(bundles);
  for (const [name, why] of LEFT_OUT)
    if (specifiers.delete(name)) log(`left out: ${name} — ${why}`);
  // A deep import (x/sub) needs its package, x or @scope/x.
  const roots = [
    ...new Set(
      [...specifiers.keys()].map((name) =>
        name
          .split('/')
          .slice(0, name.startsWith('@') ? 2 : 1)
          .join('/'),
      ),
    ),
  ];
  const packages = dependencyClosure(
    roots.map((name) => ({ name, from: ROOT, neededBy: 'the bundles' })),
  );
  const natives = nativePackages(packages, target);
  dependencyClosure(natives, packages);
  const nativeDirs = natives.map(({ name, from }) =>
    path.relative(ROOT, resolvePackage(name, from)).split(path.sep).join('/'),
  );
  log(
    `runtime packages: ${roots.join(', ')}; ${packages.size} with their dependencies and ${target} binaries`,
  );

  const stage = stageExtension(target, roots, packages);
  const files = stageNodeModules(stage, packages, target);
  log(`staged ${path.relative(ROOT, stage)} (${files} files in node_modules) at ${seconds()}`);

  const vsix = runVsce(stage, target, version);
  try {
    const entries = listVsix(vsix);
    verifyContents(entries, target, nativeDirs);
    log(
      `${path.basename(vsix)}: ${megabytes(statSync(vsix).size)}, ${entries.length} files (${megabytes(entries.reduce((sum, entry) => sum + entry.size, 0))} installed)`,
    );
    for (const [part, bytes] of largestParts(entries, 8))
      log(`  ${megabytes(bytes).padStart(8)}  ${part}`);
    checkSize(statSync(vsix).size);
    if (target === hostTarget()) {
      const summary = smokeTest(vsix, specifiers);
      log(
        `smoke test passed: ${[...specifiers.keys()].join(', ')} load from the VSIX; its CLI indexed ${summary.indexed} files of test/fixtures/shop-py`,
      );
    } else {
      log(`smoke test skipped: ${target} binaries do not run on this ${hostTarget()} machine`);
    }
  } catch (error) {
    rmSync(vsix, { force: true });
    throw error;
  }
  log(`done in ${seconds()}`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    main();
  } catch (error) {
    console.error(
      `package: ${error instanceof Failure ? error.message : `unexpected error: ${error.message}`}`,
    );
    process.exit(1);
  }
}
