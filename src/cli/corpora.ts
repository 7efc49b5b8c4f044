import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { UsageError } from './args';

/**
 * The corpora file of an evaluation set: where each corpus was extracted and which folder of it
 * is indexed. Paths may be relative (to the corpus root given on the command line).
 */
const Corpus = z.looseObject({
  id: z.string(),
  extract_dir: z.string(),
  index_subfolder: z.string().default(''),
  language: z.string().optional(),
});
const CorporaFile = z.looseObject({ corpora: z.array(Corpus) });
export type Corpus = z.infer<typeof Corpus>;

export async function readCorpora(file: string): Promise<Corpus[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read the corpora file ${file}`);
  }
  const parsed = CorporaFile.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new UsageError(`${file} is not a corpora file: ${parsed.error.issues[0]?.message}`);
  return parsed.data.corpora;
}

export function corpusFolder(corpusRoot: string, corpus: Corpus): string {
  return path.resolve(corpusRoot, corpus.extract_dir, corpus.index_subfolder);
}

export async function readJsonLines(file: string): Promise<unknown[]> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  return text
    .split('\n')
    .filter((line) => line.trim())
    .map((line, index) => {
      try {
        return JSON.parse(line) as unknown;
      } catch {
        throw new UsageError(`${file}:${index + 1} is not valid JSON`);
      }
    });
}
