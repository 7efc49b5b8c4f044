/**
 * `node dist/bench.js --native-parse scale-10k --native-dir DIR [--per-language 250] [--rounds 3]`:
 * whether the native tree-sitter binding would index faster than web-tree-sitter. DIR holds an npm
 * install of `tree-sitter` and the grammars of src/engine/lang (the project does not depend on
 * them: see the closing note of issue 15). On a sample of the row's files, spread over each
 * language's sorted paths, it checks that every language's extraction query compiles against the
 * native grammar and that the chunks and facts built from both extractions are equal, then times,
 * as CPU time in this one thread and alternating round by round, the bare parse and the parse
 * with the project's own extraction, with each binding.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { buildFileChunks } from '../src/engine/index/chunks';
import { extractDefinitions } from '../src/engine/index/extract';
import { walkWorkspace } from '../src/engine/index/walk';
import { loadGrammar, type LoadedGrammar } from '../src/engine/lang/grammars';
import { LANGUAGES, languageById } from '../src/engine/lang/registry';
import type { LanguageSpec } from '../src/engine/lang/spec';
import type { LanguageId } from '../src/engine/model';
import { unwrap } from '../src/engine/util/result';
import { cpuMs, flagValue, round } from './child';
import { corporaRow, rowRoot } from './scale-corpus';

interface SampleFile {
  readonly path: string;
  readonly spec: LanguageSpec;
  readonly source: string;
}

/** The parts of the native binding used here; its nodes mirror web-tree-sitter's. */
interface NativeParser {
  setLanguage(language: unknown): void;
  parse(source: string): { walk(): object };
}
interface NativeModule {
  new (): NativeParser;
  Query: new (language: unknown, source: string) => unknown;
}

export interface NativeParseReport {
  readonly files: number;
  readonly languages: Record<string, number>;
  /** Languages whose query does not compile against the native grammar, with the error. */
  readonly queryFailures: Record<string, string>;
  readonly equalFiles: number;
  readonly differingFiles: readonly string[];
  /** CPU milliseconds of each pass, one per round. */
  readonly passMs: Record<string, number[]>;
  /** Medians, web-tree-sitter over native: above 1 the native binding is faster. */
  readonly parseSpeedup: number;
  readonly parseAndExtractSpeedup: number;
}

const PASSES = ['wasm parse', 'native parse', 'wasm parse+extract', 'native parse+extract'];

export async function benchNativeParse(
  rowId: string,
  flags: readonly string[],
): Promise<NativeParseReport> {
  const nativeDir = flagValue(flags, '--native-dir');
  if (!nativeDir)
    throw new Error('--native-parse needs --native-dir DIR (an npm install of tree-sitter)');
  const perLanguage = Number(flagValue(flags, '--per-language') ?? 250);
  const rounds = Number(flagValue(flags, '--rounds') ?? 3);
  const sample = await sampleFiles(rowRoot(corporaRow(rowId)), perLanguage);
  const wasm = new Map<LanguageId, LoadedGrammar>();
  const native = new Map<LanguageId, LoadedGrammar>();
  const queryFailures: Record<string, string> = {};
  const load = nativeLoader(path.resolve(nativeDir));
  for (const spec of LANGUAGES) {
    wasm.set(spec.id, await loadGrammar(spec));
    try {
      native.set(spec.id, load(spec));
    } catch (cause) {
      queryFailures[spec.id] = cause instanceof Error ? cause.message : String(cause);
    }
  }
  const comparable = sample.filter((file) => native.has(file.spec.id));
  const differingFiles = comparable
    .filter((file) => {
      const built = (grammar: LoadedGrammar) =>
        buildFileChunks(
          file.path,
          file.spec.id,
          file.source,
          extractDefinitions(file.path, file.source, file.spec, grammar),
        );
      return !isDeepStrictEqual(built(wasm.get(file.spec.id)!), built(native.get(file.spec.id)!));
    })
    .map((file) => file.path);

  const passes: Record<string, (file: SampleFile, grammar: LoadedGrammar) => void> = {
    parse: (file, grammar) => grammar.parser.parse(file.source)!.delete(),
    'parse+extract': (file, grammar) =>
      extractDefinitions(file.path, file.source, file.spec, grammar),
  };
  const passMs: Record<string, number[]> = Object.fromEntries(PASSES.map((pass) => [pass, []]));
  // a first round compiles the code paths; the rounds after it alternate the two bindings
  for (let at = 0; at <= rounds; at++) {
    for (const [name, pass] of Object.entries(passes)) {
      for (const [binding, grammars] of [
        ['wasm', wasm],
        ['native', native],
      ] as const) {
        const spent = cpuMs(() => {
          for (const file of comparable) pass(file, grammars.get(file.spec.id)!);
        });
        if (at > 0) passMs[`${binding} ${name}`]!.push(Math.round(spent));
      }
    }
  }
  const median = (pass: string) => {
    const sorted = [...passMs[pass]!].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)]!;
  };
  const languages: Record<string, number> = {};
  for (const file of comparable) languages[file.spec.id] = (languages[file.spec.id] ?? 0) + 1;
  return {
    files: comparable.length,
    languages,
    queryFailures,
    equalFiles: comparable.length - differingFiles.length,
    differingFiles,
    passMs,
    parseSpeedup: round(median('wasm parse') / median('native parse'), 2),
    parseAndExtractSpeedup: round(median('wasm parse+extract') / median('native parse+extract'), 2),
  };
}

/** Up to `perLanguage` files of each language, spread evenly over its sorted paths. */
async function sampleFiles(root: string, perLanguage: number): Promise<SampleFile[]> {
  const walked = unwrap(await walkWorkspace({ root, maxFileBytes: 1024 * 1024 }));
  const byLanguage = new Map<LanguageId, string[]>();
  for (const candidate of walked.candidates) {
    const paths = byLanguage.get(candidate.language) ?? [];
    paths.push(candidate.path);
    byLanguage.set(candidate.language, paths);
  }
  const sample: SampleFile[] = [];
  for (const [language, paths] of byLanguage)
    for (const file of spreadPick(paths.sort(), perLanguage))
      sample.push({
        path: file,
        spec: languageById(language),
        source: readFileSync(path.join(root, file), 'utf8'),
      });
  return sample;
}

/** Up to `count` of `items`, evenly spaced from the first: a sample across a sorted tree. */
export function spreadPick<T>(items: readonly T[], count: number): T[] {
  const step = Math.max(1, items.length / count);
  const picked: T[] = [];
  for (let at = 0; at < items.length && picked.length < count; at += step)
    picked.push(items[Math.floor(at)]!);
  return picked;
}

/**
 * Loads a language's native grammar from `dir` with the extraction query compiled against it.
 * The extraction frees web-tree-sitter's trees and cursors (WASM memory); the native binding's are
 * garbage collected, so their prototypes get a `delete` that does nothing.
 */
function nativeLoader(dir: string): (spec: LanguageSpec) => LoadedGrammar {
  const required = createRequire(path.join(dir, 'package.json'));
  const Parser = required('tree-sitter') as NativeModule;
  const grammarModule = (grammar: string): unknown => {
    switch (grammar) {
      case 'typescript':
      case 'tsx':
        return (required('tree-sitter-typescript') as Record<string, unknown>)[grammar];
      case 'php':
        return (required('tree-sitter-php') as Record<string, unknown>).php;
      case 'c-sharp':
        // its entry point is an ES module with top-level await: load the binary itself
        return (required('node-gyp-build') as (root: string) => unknown)(
          path.dirname(required.resolve('tree-sitter-c-sharp/package.json')),
        );
      default:
        return required(`tree-sitter-${grammar}`);
    }
  };
  let prototypesPatched = false;
  return (spec) => {
    const language = grammarModule(spec.grammar);
    const parser = new Parser();
    parser.setLanguage(language);
    const query = new Parser.Query(language, spec.query);
    if (!prototypesPatched) {
      const tree = parser.parse('');
      for (const value of [tree, tree.walk()]) {
        const prototype = Object.getPrototypeOf(value) as { delete?: () => void };
        prototype.delete ??= () => undefined;
      }
      prototypesPatched = true;
    }
    // the extraction reads nodes only through the API both bindings share
    return { language, parser, query } as unknown as LoadedGrammar;
  };
}
