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
const languages = new Map<string, Promise<{ language: Language; parser: Parser }>>();
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

/** A grammar's language and a parser for it, without its query (see `loadGrammar`). */
export function loadLanguage(spec: LanguageSpec): Promise<{ language: Language; parser: Parser }> {
  let loaded = languages.get(spec.id);
  if (!loaded) {
    loaded = (async () => {
      await initRuntime();
      const language = await Language.load(
        path.join(wasmLocations().grammars, `tree-sitter-${spec.grammar}.wasm`),
      );
      const parser = new Parser();
      parser.setLanguage(language);
      return { language, parser };
    })();
    languages.set(spec.id, loaded);
  }
  return loaded;
}

/**
 * A grammar with its query compiled. The compile runs on this thread without a break (12-250 ms
 * a language idle, up to ~700 ms on a loaded machine), once the language is loaded: a caller
 * that must not be held up by it loads the language first and calls this when it has time.
 */
export function loadGrammar(spec: LanguageSpec): Promise<LoadedGrammar> {
  let loaded = grammars.get(spec.id);
  if (!loaded) {
    loaded = loadLanguage(spec).then(({ language, parser }) => ({
      language,
      parser,
      query: new Query(language, spec.query),
    }));
    grammars.set(spec.id, loaded);
  }
  return loaded;
}
