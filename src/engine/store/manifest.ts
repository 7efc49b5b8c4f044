import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../util/atomic-file';

/**
 * The manifest is the store's commit point: data for a file counts as indexed only once the
 * manifest records its hash. It is replaced atomically, so a crash leaves the previous version.
 */
/** 4: facts no longer carry a calledBy column. */
export const SCHEMA_VERSION = 4;

const FileEntry = z.object({
  hash: z.string().nullable(),
  size: z.number(),
  mtimeMs: z.number(),
  language: z.string().nullable(),
  /** Why the file holds no chunks (binary, not UTF-8, minified …); null when indexed. */
  skipped: z.string().nullable(),
  chunks: z.number().int(),
});
export type FileEntry = z.infer<typeof FileEntry>;

/** How the index was built from the command line, so later commands reuse or refuse the options. */
const BuildRecord = z.object({
  /** `none`, a hub repository or an absolute model folder. */
  model: z.string(),
  exclude: z.array(z.string()),
  maxFileBytes: z.number().int(),
});
export type BuildRecord = z.infer<typeof BuildRecord>;

const ManifestSchema = z.object({
  schemaVersion: z.number().int(),
  parserVersion: z.string(),
  root: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  embedding: z.object({ modelId: z.string(), dimensions: z.number().int() }).nullable(),
  /** Why there are no vectors, when there are none. */
  embeddingReason: z.string().nullable(),
  /** Paths whose rows were being rewritten when the manifest was last written (crash recovery). */
  pending: z.array(z.string()),
  /** Which lexical snapshot and delta files are current. */
  lexicalGeneration: z.number().int(),
  files: z.record(z.string(), FileEntry),
  build: BuildRecord.optional(),
});
export type Manifest = z.infer<typeof ManifestSchema>;

export type ManifestRead =
  | { readonly kind: 'missing' }
  | { readonly kind: 'corrupt'; readonly reason: string }
  | { readonly kind: 'ok'; readonly manifest: Manifest };

export async function readManifest(file: string): Promise<ManifestRead> {
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (cause) {
    if ((cause as NodeJS.ErrnoException).code === 'ENOENT') return { kind: 'missing' };
    return { kind: 'corrupt', reason: (cause as Error).message };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (cause) {
    return { kind: 'corrupt', reason: `manifest is not valid JSON (${(cause as Error).message})` };
  }
  const parsed = ManifestSchema.safeParse(json);
  if (!parsed.success) {
    const version = (json as { schemaVersion?: unknown } | null)?.schemaVersion;
    return {
      kind: 'corrupt',
      reason:
        typeof version === 'number' && version !== SCHEMA_VERSION
          ? `schema version ${version}`
          : (parsed.error.issues[0]?.message ?? 'invalid manifest'),
    };
  }
  return { kind: 'ok', manifest: parsed.data };
}

export async function writeManifest(file: string, manifest: Manifest): Promise<void> {
  await writeFileAtomic(file, JSON.stringify({ ...manifest, updatedAt: new Date().toISOString() }));
}

export function emptyManifest(root: string, parserVersion: string): Manifest {
  const now = new Date().toISOString();
  return {
    schemaVersion: SCHEMA_VERSION,
    parserVersion,
    root,
    createdAt: now,
    updatedAt: now,
    embedding: null,
    embeddingReason: null,
    pending: [],
    lexicalGeneration: 0,
    files: {},
  };
}
