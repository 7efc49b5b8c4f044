import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { Engine, type EngineOptions } from '../../src/engine/engine';
import { unwrap } from '../../src/engine/util/result';

/** Temporary folders for one test file, removed when it ends. */
export class Scratch {
  private readonly folders: string[] = [];

  folder(prefix = 'oracle-'): string {
    const folder = mkdtempSync(path.join(tmpdir(), prefix));
    this.folders.push(folder);
    return folder;
  }

  /** A folder holding `files` (relative path → content). */
  tree(files: Record<string, string | Buffer>): string {
    const root = this.folder('oracle-ws-');
    writeTree(root, files);
    return root;
  }

  /** A copy of a fixture repository under test/fixtures. */
  fixture(name: string): string {
    const root = this.folder(`oracle-${name}-`);
    cpSync(path.join(FIXTURES, name), root, { recursive: true });
    return root;
  }

  cleanup(): void {
    for (const folder of this.folders.splice(0)) rmSync(folder, { recursive: true, force: true });
  }
}

export const FIXTURES = path.resolve(__dirname, '..', 'fixtures');
/** The small real embedding model the project ships (see models/potion-base-2M/NOTICE). */
export const POTION_MODEL = path.resolve(__dirname, '..', '..', 'models', 'potion-base-2M');

export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), content);
  }
}

/** Opens an engine on `root` with its store in a scratch folder; no model unless asked. */
export async function openEngine(
  scratch: Scratch,
  root: string,
  options: Partial<EngineOptions> = {},
): Promise<Engine> {
  return unwrap(
    await Engine.open({
      root,
      storeDir: path.join(scratch.folder('oracle-store-'), 'store'),
      model: { kind: 'none' },
      workers: 0,
      ...options,
    }),
  );
}
