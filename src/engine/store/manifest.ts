import { promises as fs } from 'node:fs';
import { z } from 'zod';
import { writeFileAtomic } from '../util/atomic-file';

/**
 * The manifest is the store's commit point: data for a file counts as indexed only once the
 * manifest records its hash. It is replaced atomically, so a crash leaves the previous version.
 */
/**
 * 4: facts no longer carry a calledBy column. 5: committed table versions, counts, checksums.
 * 6: the chunks' texts in a file of their own, read by offset.
 */
export const SCHEMA_VERSION = 6;

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
  /** Counts up at every commit: a process holding an older one reloads before it reads or writes. */
  generation: z.number().int().nonnegative(),
  /** The LanceDB version of each table as committed; readers check these out, recovery restores them. */
  tableVersions: z.object({ chunks: z.number().int(), facts: z.number().int() }).nullable(),
  /** Which lexical snapshot and delta files are current. */
  lexicalGeneration: z.number().int().nonnegative(),
  /** How much of the current delta log is committed; bytes past it belong to an unfinished write. */
  lexicalDeltaBytes: z.number().int().nonnegative(),
  /** SHA-1 of the current lexical snapshot (null before the first): checked when it is read. */
  lexicalSnapshotHash: z.string().nullable(),
  /** Which texts file is current, and how many of its bytes are committed (see TextsFile). */
  textsGeneration: z.number().int().nonnegative(),
  textsBytes: z.number().int().nonnegative(),
  /**
   * SHA-1 of each LanceDB data and deletion file (path under lance/): they are immutable once
   * written, so each is hashed once, and checked whenever the store opens.
   */
  dataHashes: z.record(z.string(), z.string()),
  /** What the tables and the lexical segment held at the commit, checked when the store opens. */
  counts: z.object({
    chunks: z.number().int().nonnegative(),
    facts: z.number().int().nonnegative(),
    lexical: z.number().int().nonnegative(),
  }),
  files: z.record(z.string(), FileEntry),
  build: BuildRecord.optional(),
  /**
   * Bytes of the tables' folder when they were last compacted (or first written): the store
   * compacts again once writes have grown it by a share of that, so compaction costs stay in
   * proportion to what was written since.
   */
  compactedBytes: z.number().int().nonnegative().optional(),
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
    generation: 0,
    tableVersions: null,
    lexicalGeneration: 0,
    lexicalDeltaBytes: 0,
    lexicalSnapshotHash: null,
    textsGeneration: 0,
    textsBytes: 0,
    dataHashes: {},
    counts: { chunks: 0, facts: 0, lexical: 0 },
    files: {},
  };
}
