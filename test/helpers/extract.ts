import { buildFileChunks, type FileChunks } from '../../src/engine/index/chunks';
import { extractDefinitions } from '../../src/engine/index/extract';
import { loadGrammar } from '../../src/engine/lang/grammars';
import { languageForPath } from '../../src/engine/lang/registry';

/** Parses `source` as the file `path` and returns its chunks and facts, as the indexer would. */
export async function chunkSource(path: string, source: string): Promise<FileChunks> {
  const spec = languageForPath(path);
  if (!spec) throw new Error(`no language for ${path}`);
  const extraction = extractDefinitions(path, source, spec, await loadGrammar(spec));
  return buildFileChunks(path, spec.id, source, extraction);
}
