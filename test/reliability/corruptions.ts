import {
  appendFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { hostname } from 'node:os';
import * as path from 'node:path';

/**
 * Damage a store can suffer on disk: its manifest, the journal, the lock, LanceDB's files and the
 * lexical files, each cut, garbled, deleted or contradicted. The campaign checks that every one
 * is noticed and repaired with a message, or does no harm.
 */
export interface Corruption {
  readonly name: string;
  readonly damage: (storeDir: string) => void;
}

const garbage = (bytes: number) =>
  Buffer.from(Array.from({ length: bytes }, (_, i) => (i * 7919 + 13) % 256));

function overwrite(file: string, at: number, bytes: Buffer): void {
  const content = readFileSync(file);
  bytes.copy(content, Math.min(at, Math.max(0, content.length - bytes.length)));
  writeFileSync(file, content);
}

/** The manifest's fields the corruptions touch. */
interface ManifestFields {
  schemaVersion: number;
  counts: { chunks: number; facts: number };
  tableVersions: { chunks: number };
  lexicalDeltaBytes: number;
  lexicalGeneration: number;
  textsBytes: number;
  dataHashes: Record<string, string>;
}

function editManifest(storeDir: string, change: (manifest: ManifestFields) => void): void {
  const file = path.join(storeDir, 'manifest.json');
  const manifest = JSON.parse(readFileSync(file, 'utf8')) as ManifestFields;
  change(manifest);
  writeFileSync(file, JSON.stringify(manifest));
}

function tableFiles(storeDir: string, table: string, folder: string): string[] {
  const dir = path.join(storeDir, 'lance', `${table}.lance`, folder);
  return existsSync(dir)
    ? readdirSync(dir)
        .map((name) => path.join(dir, name))
        .sort((a, b) => statSync(b).size - statSync(a).size)
    : [];
}

function lexical(storeDir: string, extension: 'bin' | 'delta'): string {
  return storeFile(storeDir, new RegExp(`^lexical-\\d+\\.${extension}$`));
}

function texts(storeDir: string): string {
  return storeFile(storeDir, /^texts-\d+\.bin$/);
}

function storeFile(storeDir: string, pattern: RegExp): string {
  const name = readdirSync(storeDir).find((entry) => pattern.test(entry));
  if (!name) throw new Error(`the store has no file like ${pattern.source}`);
  return path.join(storeDir, name);
}

const manifest = (storeDir: string) => path.join(storeDir, 'manifest.json');

/** The store's current snapshot of file entries (the one the manifest names). */
function filesSnapshot(storeDir: string): string {
  const { filesLog } = JSON.parse(readFileSync(manifest(storeDir), 'utf8')) as {
    filesLog: { generation: number };
  };
  return path.join(storeDir, `files-${filesLog.generation}.json`);
}
const journal = (storeDir: string) => path.join(storeDir, 'pending.json');
const lock = (storeDir: string) => path.join(storeDir, 'index.lock');

export const CORRUPTIONS: readonly Corruption[] = [
  { name: 'manifest deleted', damage: (dir) => rmSync(manifest(dir)) },
  {
    name: 'manifest cut in half',
    damage: (dir) => truncateSync(manifest(dir), Math.floor(statSync(manifest(dir)).size / 2)),
  },
  { name: 'manifest garbled', damage: (dir) => overwrite(manifest(dir), 0, garbage(256)) },
  { name: 'manifest empty', damage: (dir) => writeFileSync(manifest(dir), '') },
  {
    name: 'manifest of a future schema',
    damage: (dir) => editManifest(dir, (m) => (m.schemaVersion = 99)),
  },
  {
    name: 'manifest counts one chunk too many',
    damage: (dir) => editManifest(dir, (m) => m.counts.chunks++),
  },
  {
    name: 'manifest counts one fact too few',
    damage: (dir) => editManifest(dir, (m) => m.counts.facts--),
  },
  {
    name: 'manifest names a table version that does not exist',
    damage: (dir) => editManifest(dir, (m) => (m.tableVersions.chunks = 9999)),
  },
  {
    name: 'manifest commits more delta bytes than written',
    damage: (dir) => editManifest(dir, (m) => (m.lexicalDeltaBytes += 50)),
  },
  {
    name: 'manifest names a lexical generation that does not exist',
    damage: (dir) => editManifest(dir, (m) => m.lexicalGeneration++),
  },
  {
    name: 'file entries lose one',
    damage: (dir) => {
      const file = filesSnapshot(dir);
      const files = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      delete files[Object.keys(files).sort()[3]!];
      writeFileSync(file, JSON.stringify(files));
    },
  },
  { name: 'file entries garbled', damage: (dir) => overwrite(filesSnapshot(dir), 0, garbage(64)) },
  { name: 'file entries deleted', damage: (dir) => rmSync(filesSnapshot(dir)) },
  {
    name: 'manifest with a wrong data checksum',
    damage: (dir) =>
      editManifest(dir, (m) => {
        const first = Object.keys(m.dataHashes)[0]!;
        m.dataHashes[first] = '0'.repeat(40);
      }),
  },
  { name: 'journal garbled', damage: (dir) => writeFileSync(journal(dir), garbage(64)) },
  { name: 'journal empty', damage: (dir) => writeFileSync(journal(dir), '') },
  {
    name: 'journal of a write that never began',
    damage: (dir) =>
      writeFileSync(journal(dir), JSON.stringify({ generation: 1, files: ['pkg0/mod0.py'] })),
  },
  {
    name: 'journal naming paths outside the folder',
    damage: (dir) =>
      writeFileSync(journal(dir), JSON.stringify({ generation: 1, files: ['../../etc/passwd'] })),
  },
  { name: 'lock garbled, old', damage: (dir) => writeLock(dir, garbage(40), 60_000) },
  {
    name: 'lock of a dead process',
    damage: (dir) => writeLock(dir, owner({ pid: 2 ** 22 + 4321 }), 0),
  },
  {
    name: 'lock of a reused pid',
    damage: (dir) => writeLock(dir, owner({ pid: 1, processStart: 1 }), 0),
  },
  {
    name: 'lock from before a reboot',
    damage: (dir) => writeLock(dir, owner({ pid: process.pid, bootId: 'another-boot' }), 0),
  },
  {
    name: 'lock of another host whose heartbeat stopped',
    damage: (dir) => writeLock(dir, owner({ pid: 77, host: 'elsewhere' }), 3_600_000),
  },
  {
    name: 'lock of another host, alive (readers answer from the commit)',
    damage: (dir) => writeLock(dir, owner({ pid: 77, host: 'elsewhere' }), 0),
  },
  {
    name: 'chunks table deleted',
    damage: (dir) => rmSync(path.join(dir, 'lance', 'chunks.lance'), { recursive: true }),
  },
  {
    name: 'facts table deleted',
    damage: (dir) => rmSync(path.join(dir, 'lance', 'facts.lance'), { recursive: true }),
  },
  {
    name: 'chunks data file truncated',
    damage: (dir) => {
      const file = tableFiles(dir, 'chunks', 'data')[0]!;
      truncateSync(file, Math.floor(statSync(file).size / 3));
    },
  },
  {
    name: '4 KB of garbage in the chunks data',
    damage: (dir) => {
      const file = tableFiles(dir, 'chunks', 'data')[0]!;
      overwrite(file, Math.floor(statSync(file).size / 2), garbage(4096));
    },
  },
  {
    name: 'facts data file garbled',
    damage: (dir) => overwrite(tableFiles(dir, 'facts', 'data')[0]!, 100, garbage(2048)),
  },
  {
    name: 'facts data file deleted',
    damage: (dir) => rmSync(tableFiles(dir, 'facts', 'data')[0]!),
  },
  {
    name: 'facts versions deleted',
    damage: (dir) =>
      rmSync(path.join(dir, 'lance', 'facts.lance', '_versions'), { recursive: true }),
  },
  {
    name: 'chunks version manifests garbled',
    damage: (dir) => {
      for (const file of tableFiles(dir, 'chunks', '_versions'))
        if (file.endsWith('.manifest')) overwrite(file, 8, garbage(64));
    },
  },
  {
    name: 'chunks transactions deleted',
    damage: (dir) =>
      rmSync(path.join(dir, 'lance', 'chunks.lance', '_transactions'), {
        recursive: true,
        force: true,
      }),
  },
  { name: 'lexical delta deleted', damage: (dir) => rmSync(lexical(dir, 'delta')) },
  {
    name: 'lexical delta cut short',
    damage: (dir) => truncateSync(lexical(dir, 'delta'), statSync(lexical(dir, 'delta')).size - 10),
  },
  {
    name: 'garbage after the committed lexical delta',
    damage: (dir) => appendFileSync(lexical(dir, 'delta'), '{"remove": ["pkg0/mod0.py"], "add'),
  },
  {
    name: 'lexical delta line garbled',
    damage: (dir) => overwrite(lexical(dir, 'delta'), 5, Buffer.from('#not json#')),
  },
  { name: 'lexical snapshot deleted', damage: (dir) => rmSync(lexical(dir, 'bin')) },
  {
    name: '4 KB of garbage in the lexical snapshot',
    damage: (dir) => {
      const file = lexical(dir, 'bin');
      overwrite(file, Math.floor(statSync(file).size / 2), garbage(4096));
    },
  },
  { name: 'texts file deleted', damage: (dir) => rmSync(texts(dir)) },
  {
    name: 'texts file cut short',
    damage: (dir) => truncateSync(texts(dir), statSync(texts(dir)).size - 10),
  },
  {
    name: 'garbage after the committed texts',
    damage: (dir) => appendFileSync(texts(dir), garbage(300)),
  },
  {
    name: '1 KB of garbage in the texts file',
    damage: (dir) => {
      const file = texts(dir);
      overwrite(file, Math.floor(statSync(file).size / 2), garbage(1024));
    },
  },
  {
    name: 'manifest commits more texts bytes than written',
    damage: (dir) => editManifest(dir, (m) => (m.textsBytes += 50)),
  },
];

function owner(fields: Record<string, unknown>): Buffer {
  return Buffer.from(
    JSON.stringify({ host: hostname(), startedAt: '2026-01-01T00:00:00Z', ...fields }),
  );
}

function writeLock(storeDir: string, content: Buffer, ageMs: number): void {
  writeFileSync(lock(storeDir), content);
  const when = new Date(Date.now() - ageMs);
  utimesSync(lock(storeDir), when, when);
}
