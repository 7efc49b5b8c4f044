import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { z } from 'zod';
import { appendAt, writeFileAtomic } from '../util/atomic-file';

/**
 * The manifest is the store's commit point: data for a file counts as indexed only once the
 * manifest records its hash. It is replaced atomically, so a crash leaves the previous version.
 *
 * Its entry per file lives beside it, so a save does not rewrite an entry per file of the index:
 * files-<generation>.json holds every entry as of a snapshot and files-<generation>.delta the
 * changes since, one line per commit, appended; the manifest names the generation and how many
 * bytes of the delta are committed (bytes past that belong to a write that never committed).
 */
/**
 * 4: facts no longer carry a calledBy column. 5: committed table versions, counts, checksums.
 * 6: the chunks' texts in a file of their own, read by offset.
 * 7: the file entries in a snapshot and a delta log beside the manifest.
 * 8: the chunks table no longer holds the texts: the texts file is their only copy.
 * 9: the lexical snapshot holds the posting lists, read from it by offset (its format 3).
 */
export const SCHEMA_VERSION = 9;

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
  /** Which file-entry snapshot is current, and how much of its delta log is committed. */
  filesLog: z.object({
    generation: z.number().int().nonnegative(),
    deltaBytes: z.number().int().nonnegative(),
  }),
  build: BuildRecord.optional(),
  /**
   * Bytes of the tables' folder when they were last compacted (or first written): the store
   * compacts again once writes have grown it by a share of that, so compaction costs stay in
   * proportion to what was written since.
   */
  compactedBytes: z.number().int().nonnegative().optional(),
});
/** The manifest with the entries of its files log read in. */
export type Manifest = z.infer<typeof ManifestSchema> & { files: Record<string, FileEntry> };

/** A commit's changes to the file entries: an entry written, or null for one removed. */
export type FileChanges = ReadonlyMap<string, FileEntry | null>;

const FileEntries = z.record(z.string(), FileEntry);
const FileChangeLine = z.record(z.string(), FileEntry.nullable());
/** The delta log is folded into a new snapshot when it outgrows this share of the snapshot … */
const FILES_DELTA_SHARE = 0.5;
/** … but a small index keeps appending until the log reaches this size. */
const MIN_FILES_DELTA_BYTES = 64 * 1024;

/** Where a files object's entries are on disk, as written or read by this process. */
interface FilesOnDisk {
  readonly directory: string;
  readonly generation: number;
  readonly deltaBytes: number;
  readonly snapshotBytes: number;
}

/**
 * The file-entry objects whose content is on disk as a manifest names it: a commit that changes
 * a few entries then appends only those, and a commit that changes none writes none.
 */
const persisted = new WeakMap<object, FilesOnDisk>();

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
  try {
    const files = await readFilesLog(path.dirname(file), parsed.data.filesLog);
    return { kind: 'ok', manifest: { ...parsed.data, files } };
  } catch (cause) {
    return { kind: 'corrupt', reason: `its file entries could not be read (${errorText(cause)})` };
  }
}

/**
 * Commits `manifest`. Its file entries go to the files log first: as one appended line when
 * `changes` says what changed since the entries this process last wrote or read, as nothing when
 * they are those entries unchanged, or else as a new snapshot (as also once the delta log has
 * grown past its share). Returns the manifest as written, naming its files log.
 */
export async function writeManifest(
  file: string,
  manifest: Manifest,
  changes?: FileChanges,
): Promise<Manifest> {
  const directory = path.dirname(file);
  const onDisk = persisted.get(manifest.files);
  const current =
    onDisk?.directory === directory &&
    onDisk.generation === manifest.filesLog.generation &&
    onDisk.deltaBytes === manifest.filesLog.deltaBytes;
  let log = onDisk && current ? onDisk : null;
  if (log && changes?.size) {
    const line = Buffer.from(`${JSON.stringify(Object.fromEntries(changes))}\n`, 'utf8');
    const limit = Math.max(MIN_FILES_DELTA_BYTES, log.snapshotBytes * FILES_DELTA_SHARE);
    log =
      log.deltaBytes + line.length > limit
        ? null
        : {
            ...log,
            deltaBytes: await appendAt(
              filesDeltaPath(directory, log.generation),
              line,
              log.deltaBytes,
            ),
          };
  }
  log ??= await writeFilesSnapshot(directory, manifest.filesLog.generation + 1, manifest.files);
  const { files, ...rest } = manifest;
  const written: Manifest = {
    ...rest,
    filesLog: { generation: log.generation, deltaBytes: log.deltaBytes },
    files,
  };
  await writeFileAtomic(
    file,
    JSON.stringify({ ...rest, filesLog: written.filesLog, updatedAt: new Date().toISOString() }),
  );
  persisted.set(files, log);
  if (!onDisk || onDisk.generation !== log.generation) await removeOtherFilesLogs(directory, log);
  return written;
}

/** Cuts the delta log of `manifest`'s files back to its committed length (a writer's rollback). */
export async function truncateFilesLog(directory: string, manifest: Manifest): Promise<boolean> {
  const delta = filesDeltaPath(directory, manifest.filesLog.generation);
  const size = await fs.stat(delta).then(
    (stat) => stat.size,
    () => 0,
  );
  if (size <= manifest.filesLog.deltaBytes) return false;
  await fs.truncate(delta, manifest.filesLog.deltaBytes);
  return true;
}

/** Whether `name` is one of a store's files-log files. */
function isFilesLogName(name: string): boolean {
  return /^files-\d+\.(json|delta)$/.test(name);
}

async function readFilesLog(
  directory: string,
  log: { generation: number; deltaBytes: number },
): Promise<Record<string, FileEntry>> {
  const snapshot = await fs.readFile(filesSnapshotPath(directory, log.generation), 'utf8');
  const files = FileEntries.parse(JSON.parse(snapshot));
  if (log.deltaBytes) {
    const handle = await fs.open(filesDeltaPath(directory, log.generation), 'r');
    let bytes: Buffer;
    try {
      bytes = Buffer.alloc(log.deltaBytes);
      const { bytesRead } = await handle.read(bytes, 0, log.deltaBytes, 0);
      if (bytesRead < log.deltaBytes)
        throw new Error(`the delta log holds ${bytesRead} bytes, ${log.deltaBytes} were committed`);
    } finally {
      await handle.close();
    }
    for (const line of bytes.toString('utf8').split('\n')) {
      if (!line) continue;
      for (const [file, entry] of Object.entries(FileChangeLine.parse(JSON.parse(line)))) {
        if (entry) files[file] = entry;
        else delete files[file];
      }
    }
  }
  persisted.set(files, { directory, ...log, snapshotBytes: Buffer.byteLength(snapshot) });
  return files;
}

async function writeFilesSnapshot(
  directory: string,
  generation: number,
  files: Record<string, FileEntry>,
): Promise<FilesOnDisk> {
  const text = JSON.stringify(files);
  await writeFileAtomic(filesSnapshotPath(directory, generation), text);
  // a delta left by a write of this generation that never committed starts over
  await fs.rm(filesDeltaPath(directory, generation), { force: true });
  return { directory, generation, deltaBytes: 0, snapshotBytes: Buffer.byteLength(text) };
}

/** Once a new snapshot is committed, the older generations' files go. */
async function removeOtherFilesLogs(directory: string, log: FilesOnDisk): Promise<void> {
  const keep = new Set([
    path.basename(filesSnapshotPath(directory, log.generation)),
    path.basename(filesDeltaPath(directory, log.generation)),
  ]);
  for (const name of await fs.readdir(directory))
    if (isFilesLogName(name) && !keep.has(name))
      await fs.rm(path.join(directory, name), { force: true });
}

function filesSnapshotPath(directory: string, generation: number): string {
  return path.join(directory, `files-${generation}.json`);
}

function filesDeltaPath(directory: string, generation: number): string {
  return path.join(directory, `files-${generation}.delta`);
}

function errorText(cause: unknown): string {
  return cause instanceof Error ? cause.message : String(cause);
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
    filesLog: { generation: 0, deltaBytes: 0 },
    files: {},
  };
}
