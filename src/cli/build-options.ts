import { realpathSync } from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_MODEL_REPO, type ModelRequest } from '../engine/embed/embedder';
import { DEFAULT_MAX_FILE_BYTES, defaultStorageRoot, defaultStoreDir } from '../engine/engine';
import type { BuildRecord } from '../engine/store/manifest';
import { readBuildRecord } from '../engine/store/store';
import { note } from './output';

/**
 * The options that decide what an index holds (--model, --exclude, --max-file-size). The store
 * records them; a later command without them reuses them, and a query command that asks for
 * different ones is refused with the `index` command that would rebuild the index with them.
 */
export interface RequestedBuild {
  readonly model?: ModelRequest;
  readonly exclude?: readonly string[];
  readonly maxFileBytes?: number;
}

export class OptionsConflict extends Error {}

/** The model as the manifest records it: `none`, a hub repository, or an absolute folder. */
export function modelSetting(request: ModelRequest | undefined): string {
  if (!request) return DEFAULT_MODEL_REPO;
  if (request.kind === 'none') return 'none';
  return request.kind === 'hub' ? request.repo : path.resolve(request.path);
}

/** The store a folder's commands use: --store, or the default one under CODE_ORACLE_HOME. */
export function storeDirectory(root: string, store: string | undefined): string {
  if (store) return path.resolve(store);
  let real = path.resolve(root);
  try {
    real = realpathSync(real);
  } catch {
    // A missing folder is reported by Engine.open with its own message; any store name will do.
  }
  return defaultStoreDir(defaultStorageRoot(), real);
}

/**
 * The options a command runs with. `index` takes what it is given and keeps the rest; other
 * commands keep what the index was built with and refuse to silently rebuild it differently.
 */
export async function resolveBuild(
  command: 'index' | 'query',
  root: string,
  storeDir: string,
  requested: RequestedBuild,
): Promise<BuildRecord> {
  const recorded = await readBuildRecord(storeDir);
  const wanted: BuildRecord = {
    model: requested.model
      ? modelSetting(requested.model)
      : (recorded?.model ?? modelSetting(undefined)),
    exclude: [...(requested.exclude ?? recorded?.exclude ?? [])],
    maxFileBytes: requested.maxFileBytes ?? recorded?.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
  };
  if (!recorded) return wanted;
  const changed = differences(recorded, wanted);
  if (!changed.length) return wanted;
  if (command === 'index') {
    note(
      `note: rebuilding with ${changed.map((change) => change.now).join(' ')} (was ${changed.map((change) => change.before).join(' ')}).`,
    );
    return wanted;
  }
  throw new OptionsConflict(
    `the index of ${root} was built with ${changed.map((change) => change.before).join(' ')}, and this command asks for ${changed.map((change) => change.now).join(' ')}. ` +
      `To rebuild it with the new options, run: code-oracle index ${quote(root)} ${flags(wanted).join(' ')}`,
  );
}

interface Difference {
  readonly before: string;
  readonly now: string;
}

function differences(recorded: BuildRecord, wanted: BuildRecord): Difference[] {
  const changes: Difference[] = [];
  if (recorded.model !== wanted.model)
    changes.push({
      before: `--model ${quote(recorded.model)}`,
      now: `--model ${quote(wanted.model)}`,
    });
  if (recorded.exclude.join('\n') !== wanted.exclude.join('\n'))
    changes.push({ before: excludeFlags(recorded.exclude), now: excludeFlags(wanted.exclude) });
  if (recorded.maxFileBytes !== wanted.maxFileBytes)
    changes.push({
      before: `--max-file-size ${recorded.maxFileBytes}`,
      now: `--max-file-size ${wanted.maxFileBytes}`,
    });
  return changes;
}

function excludeFlags(patterns: readonly string[]): string {
  return patterns.length
    ? patterns.map((pattern) => `--exclude ${quote(pattern)}`).join(' ')
    : 'no --exclude';
}

/** The flags that reproduce a build, defaults left out. */
function flags(build: BuildRecord): string[] {
  return [
    ...(build.model !== DEFAULT_MODEL_REPO ? [`--model ${quote(build.model)}`] : []),
    ...build.exclude.map((pattern) => `--exclude ${quote(pattern)}`),
    ...(build.maxFileBytes !== DEFAULT_MAX_FILE_BYTES
      ? [`--max-file-size ${build.maxFileBytes}`]
      : []),
  ];
}

function quote(value: string): string {
  return /^[\w./@:=+-]+$/.test(value) ? value : `'${value.replace(/'/g, `'\\''`)}'`;
}
