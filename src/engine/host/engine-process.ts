import { fork, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as path from 'node:path';
import type { LogLevel } from '../log/logger';

/**
 * How the engine's process is started. It runs apart from the editor's extension host, so an
 * engine that grows or crashes never takes the editor down with it, and so the memory settings
 * below (which glibc reads only when a process starts) apply to the engine alone.
 */

/** The argument that tells the engine process which log events to send. */
export const LOG_LEVEL_ARG = '--log-level=';

/**
 * glibc keeps freed memory for reuse: whatever lies below a trim threshold that grows with the
 * largest block freed, spread over up to 8 arenas per core. The engine frees large blocks while
 * it opens a store (the buffers it reads the tables through), and at 10k files 150-170 MB of
 * them stayed with the process. A fixed 128 KB threshold hands such memory back to the system;
 * two arenas keep the engine's threads (parse workers, LanceDB's) from each holding their own.
 */
const MALLOC_SETTINGS: Readonly<Record<string, string>> = {
  MALLOC_TRIM_THRESHOLD_: '131072',
  MALLOC_ARENA_MAX: '2',
};

/**
 * The engine process's environment: the editor's, the memory settings unless the user set them,
 * and ELECTRON_RUN_AS_NODE, because in VS Code `process.execPath` is Electron, which runs as
 * plain Node only with it (a Node binary ignores it).
 */
export function engineProcessEnv(base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...MALLOC_SETTINGS, ...base, ELECTRON_RUN_AS_NODE: '1' };
}

/**
 * Starts the engine process. Messages travel as structured clones (`advanced` serialization),
 * as they did between threads: log events keep their Maps and Sets, and nothing is turned into
 * JSON on the way. Its output is piped so the client can pass it on as log events.
 */
export function forkEngine(logLevel: LogLevel): ChildProcess {
  const script = engineScript();
  return fork(script.file, [`${LOG_LEVEL_ARG}${logLevel}`], {
    execArgv: script.execArgv,
    env: engineProcessEnv(),
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
}

/**
 * The bundle ships engine-worker.js beside the extension; from sources it runs through tsx. The
 * arguments are always given: a child otherwise inherits the editor's own (Electron's, an
 * inspector port when the editor is debugged).
 */
function engineScript(): { file: string; execArgv: string[] } {
  const bundled = path.join(__dirname, 'engine-worker.js');
  if (existsSync(bundled)) return { file: bundled, execArgv: [] };
  return { file: path.join(__dirname, 'engine-worker.ts'), execArgv: ['--require', 'tsx/cjs'] };
}
