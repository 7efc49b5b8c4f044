import { strict as assert } from 'node:assert';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cosine } from '../../src/engine/embed/embedder';
import { readSafetensors } from '../../src/engine/embed/safetensors';
import { StaticModel } from '../../src/engine/embed/static-model';
import { POTION_MODEL } from '../helpers/workspace';

/** scripts/package.mjs (npm run package): its decisions, without building or packing anything. */
const ROOT = path.resolve(__dirname, '..', '..');
const HOST = `${process.platform}-${process.arch}`;

describe('npm run package', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plain .mjs script, without types
  let pkg: any;
  before(async () => {
    pkg = await import(pathToFileURL(path.join(ROOT, 'scripts', 'package.mjs')).href);
  });

  it('packages for this machine unless --target says otherwise, and refuses unknown targets', () => {
    assert.equal(pkg.parseTarget([]), HOST);
    assert.equal(pkg.parseTarget(['--target', 'win32-arm64']), 'win32-arm64');
    assert.equal(pkg.parseTarget(['--target=darwin-arm64']), 'darwin-arm64');
    assert.throws(
      () => pkg.parseTarget(['--target', 'alpine-x64']),
      /no VS Code target "alpine-x64": pass --target with one of linux-x64, /,
    );
    assert.throws(() => pkg.parseTarget(['--target']), /no VS Code target ""/);
    assert.throws(() => pkg.parseTarget(['--out', 'x.vsix']), /unknown argument --out/);
  });

  it('ships the packages the bundles leave external, not Node modules, vscode or bundled code', () => {
    const bundle =
      'require("vscode");require("fs");import("node:fs");import("fs/promises");require("./chunk");require("@lancedb/lancedb");import("@huggingface/transformers");require("apache-arrow")';
    assert.deepEqual(
      [...pkg.runtimeSpecifiers([bundle])],
      [
        ['@lancedb/lancedb', 'require'],
        ['@huggingface/transformers', 'import'],
        ['apache-arrow', 'require'],
      ],
    );
  });

  it('keeps what Node loads and the licences, and only the target binaries of onnxruntime-node', () => {
    const ships = (name: string, file: string, target = 'linux-x64') =>
      pkg.shipsFile(name, file, target) as boolean;
    assert.ok(ships('apache-arrow', 'Arrow.node.js'));
    assert.ok(ships('apache-arrow', 'LICENSE.txt'));
    assert.ok(ships('@img/colour', 'LICENSE.md'));
    assert.ok(!ships('apache-arrow', 'Arrow.node.js.map'));
    assert.ok(!ships('apache-arrow', 'type.d.ts'));
    assert.ok(!ships('apache-arrow', 'README.md'));
    assert.ok(!ships('sharp', 'src/sharp.cc'));
    assert.ok(ships('@huggingface/transformers', 'dist/transformers.node.mjs'));
    assert.ok(ships('@huggingface/transformers', 'package.json'));
    assert.ok(!ships('@huggingface/transformers', 'dist/transformers.web.js'));
    assert.ok(!ships('onnxruntime-web', 'dist/ort-wasm-simd-threaded.wasm'));
    assert.ok(ships('onnxruntime-web', 'package.json'));
    assert.ok(ships('onnxruntime-node', 'dist/index.js'));
    assert.ok(ships('onnxruntime-node', 'bin/napi-v6/linux/x64/libonnxruntime.so.1'));
    assert.ok(!ships('onnxruntime-node', 'bin/napi-v6/linux/arm64/libonnxruntime.so.1'));
    assert.ok(!ships('onnxruntime-node', 'bin/napi-v6/win32/x64/onnxruntime.dll'));
    assert.ok(
      ships('onnxruntime-node', 'bin/napi-v6/darwin/arm64/libonnxruntime.1.dylib', 'darwin-arm64'),
    );
    assert.ok(
      !ships(
        'onnxruntime-node',
        'bin/napi-v6/darwin/arm64/libonnxruntime.1.30.0.dylib',
        'darwin-arm64',
      ),
    );
  });

  it('names every native package another platform needs instead of packing a VSIX that cannot load', () => {
    const packages = new Map(
      ['@lancedb/lancedb', 'sharp'].map((name) => {
        const dir = path.join(ROOT, 'node_modules', name);
        return [dir, JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))];
      }),
    );
    const other = HOST === 'win32-arm64' ? 'linux-arm64' : 'win32-arm64';
    assert.throws(
      () => pkg.nativePackages(packages, other),
      (error: Error) => {
        assert.match(
          error.message,
          new RegExp(
            `^cannot package ${other}: not installed: @lancedb/lancedb-${other}\\S*@[\\d.]+, @img/sharp-${other}@[\\d.]+`,
          ),
        );
        assert.match(
          error.message,
          new RegExp(`package ${other} on a ${other} machine after npm ci`),
        );
        return true;
      },
    );
  });

  it('rejects a VSIX with another platform’s binary or without its own', () => {
    const files = [
      'dist/extension.js',
      'dist/engine-worker.js',
      'dist/parse-worker.js',
      'dist/cli.js',
      'dist/web-tree-sitter.wasm',
      'dist/grammars/tree-sitter-python.wasm',
      'dist/webview/chat.js',
      'media/icon.svg',
      'models/potion-base-2M/model.safetensors',
      'models/potion-base-2M/tokenizer.json',
      'models/potion-base-2M/config.json',
      'models/potion-base-2M/NOTICE',
      'node_modules/@lancedb/lancedb-linux-x64-gnu/lancedb.linux-x64-gnu.node',
    ];
    const entries = (names: string[]) =>
      names.map((name) => ({ name: `extension/${name}`, size: 1, compressed: 1 }));
    const natives = ['node_modules/@lancedb/lancedb-linux-x64-gnu'];
    pkg.verifyContents(entries(files), 'linux-x64', natives);
    assert.throws(
      () =>
        pkg.verifyContents(
          entries([
            ...files,
            'node_modules/onnxruntime-node/bin/napi-v6/darwin/arm64/onnxruntime_binding.node',
          ]),
          'linux-x64',
          natives,
        ),
      /binaries of other platforms: extension\/node_modules\/onnxruntime-node\/bin\/napi-v6\/darwin\/arm64\/onnxruntime_binding\.node/,
    );
    assert.throws(
      () => pkg.verifyContents(entries(files.slice(0, -1)), 'linux-x64', natives),
      /no binary in node_modules\/@lancedb\/lancedb-linux-x64-gnu\//,
    );
    assert.throws(
      () => pkg.verifyContents(entries(files.slice(1)), 'linux-x64', natives),
      /dist\/extension\.js missing/,
    );
    assert.throws(
      () =>
        pkg.verifyContents(
          entries(files.filter((file) => !file.endsWith('NOTICE'))),
          'linux-x64',
          natives,
        ),
      /models\/potion-base-2M\/NOTICE missing/,
    );
  });

  it('refuses a VSIX over 80 MB', () => {
    pkg.checkSize(pkg.MAX_VSIX_BYTES);
    assert.throws(() => pkg.checkSize(pkg.MAX_VSIX_BYTES + 1), /over the 80\.0 MB limit/);
  });
});

describe('npm run package: the shipped model as float16', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a plain .mjs script, without types
  let pkg: any;
  before(async () => {
    pkg = await import(pathToFileURL(path.join(ROOT, 'scripts', 'package.mjs')).href);
  });

  it('rounds float32 to the nearest float16, ties to even, keeping zeros, subnormals and infinities', () => {
    const bits = (value: number) => new Uint32Array(new Float32Array([value]).buffer)[0]!;
    assert.equal(pkg.floatToHalf(bits(1)), 0x3c00);
    assert.equal(pkg.floatToHalf(bits(-2)), 0xc000);
    assert.equal(pkg.floatToHalf(bits(0)), 0);
    assert.equal(pkg.floatToHalf(bits(65504)), 0x7bff);
    assert.equal(pkg.floatToHalf(bits(1e6)), 0x7c00);
    assert.equal(pkg.floatToHalf(bits(2 ** -24)), 0x0001);
    assert.equal(pkg.floatToHalf(bits(1 + 2 ** -11)), 0x3c00, 'a tie rounds to even');
    assert.equal(pkg.floatToHalf(bits(1 + 3 * 2 ** -11)), 0x3c02, 'a tie rounds to even');
  });

  it('halves the model, which then loads and embeds as the float32 one does', async () => {
    const original = readFileSync(path.join(POTION_MODEL, 'model.safetensors'));
    const half = pkg.safetensorsToFloat16(original) as Buffer;
    assert.ok(half.length < original.length * 0.55, `${half.length} of ${original.length} bytes`);
    const before = readSafetensors(original);
    const after = readSafetensors(half);
    assert.deepEqual([...after.keys()], [...before.keys()]);
    for (const [name, tensor] of before) {
      const converted = after.get(name)!;
      assert.deepEqual(converted.shape, tensor.shape);
      for (let i = 0; i < tensor.data.length; i += 97)
        assert.ok(
          Math.abs(converted.data[i]! - tensor.data[i]!) <= Math.abs(tensor.data[i]!) / 1024 + 1e-7,
          `${name}[${i}]: ${converted.data[i]} for ${tensor.data[i]}`,
        );
    }
    const folder = mkdtempSync(path.join(tmpdir(), 'oracle-f16-'));
    try {
      for (const file of ['config.json', 'tokenizer.json'])
        copyFileSync(path.join(POTION_MODEL, file), path.join(folder, file));
      writeFileSync(path.join(folder, 'model.safetensors'), half);
      const [full, reduced] = await Promise.all([
        StaticModel.load(POTION_MODEL, 'f32'),
        StaticModel.load(folder, 'f16'),
      ]);
      const text = 'open a database connection';
      const [a] = await full.embed([text]);
      const [b] = await reduced.embed([text]);
      assert.ok(cosine(a!, b!) > 0.9999, `cosine ${cosine(a!, b!)}`);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
