import { strict as assert } from 'node:assert';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { pathToFileURL } from 'node:url';

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
