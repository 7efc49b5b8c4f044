import { existsSync } from 'node:fs';
import * as path from 'node:path';
import { Language, Parser, Query } from 'web-tree-sitter';
import type { LanguageSpec } from './spec';

/**
 * Loads web-tree-sitter and the prebuilt grammars once per thread. In the bundle the wasm files sit
 * beside the script (esbuild.mjs copies them); from sources they are read from node_modules.
 */
export interface LoadedGrammar {
  readonly language: Language;
  readonly query: Query;
  readonly parser: Parser;
}

let runtime: Promise<void> | undefined;
const grammars = new Map<string, Promise<LoadedGrammar>>();

export function wasmLocations(): { runtime: string; grammars: string } {
  const bundled = path.join(__dirname, 'grammars');
  if (existsSync(path.join(bundled, 'tree-sitter-python.wasm'))) {
    return { runtime: path.join(__dirname, 'web-tree-sitter.wasm'), grammars: bundled };
  }
  const grammarPackage = path.dirname(require.resolve('@vscode/tree-sitter-wasm/package.json'));
  const runtimePackage = path.dirname(require.resolve('web-tree-sitter'));
  return {
    runtime: path.join(runtimePackage, 'web-tree-sitter.wasm'),
    grammars: path.join(grammarPackage, 'wasm'),
  };
}

function initRuntime(): Promise<void> {
  runtime ??= Parser.init({ locateFile: () => wasmLocations().runtime });
  return runtime;
}

export function loadGrammar(spec: LanguageSpec): Promise<LoadedGrammar> {
  let loaded = grammars.get(spec.id);
  if (!loaded) {
    loaded = (async () => {
      await initRuntime();
      const language = await Language.load(
        path.join(wasmLocations().grammars, `tree-sitter-${spec.grammar}.wasm`),
      );
      const parser = new Parser();
      parser.setLanguage(language);
      return { language, parser, query: new Query(language, spec.query) };
    })();
    grammars.set(spec.id, loaded);
  }
  return loaded;
}
