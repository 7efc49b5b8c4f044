/**
 * The bench runs the engine in child processes so that each one's peak RSS is the engine's
 * alone, with the environment the extension starts its engine process with (glibc's memory
 * settings: host/engine-process.ts). A request goes to the child over IPC; the child answers
 * with one report or one error.
 */
import { fork } from 'node:child_process';
import { Engine } from '../src/engine/engine';
import { engineProcessEnv } from '../src/engine/host/engine-process';
import { unwrap } from '../src/engine/util/result';

/** What every child needs to open the engine on a row's tree and store. */
export interface EngineRequest {
  readonly phase: string;
  readonly root: string;
  readonly storeDir: string;
  readonly model: string;
}

/** Forks this script with `flag`, sends `request` and settles with the child's report. */
export function runChild<T>(
  flag: string,
  request: EngineRequest,
  execArgv: readonly string[] = [],
): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = fork(process.argv[1]!, [flag], {
      execArgv: ['--max-old-space-size=16384', ...execArgv],
      env: engineProcessEnv(),
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    let report: T | undefined;
    child.on('message', (message: { report?: T; error?: string }) => {
      if (message.error) reject(new Error(message.error));
      else report = message.report;
    });
    child.on('exit', (code) =>
      report ? resolve(report) : reject(new Error(`the ${request.phase} run exited with ${code}`)),
    );
    child.send(request);
  });
}

/** The child's side: answers the one request it is sent, then exits. */
export function serveChild<R>(handle: (request: R) => Promise<unknown>): void {
  process.once('message', (request: R) => {
    handle(request).then(
      (report) => process.send!({ report }, () => process.exit(0)),
      (cause: unknown) =>
        process.send!({ error: cause instanceof Error ? cause.message : String(cause) }, () =>
          process.exit(1),
        ),
    );
  });
}

export async function openEngine(request: EngineRequest): Promise<Engine> {
  return unwrap(
    await Engine.open({
      root: request.root,
      storeDir: request.storeDir,
      model: { kind: 'directory', path: request.model },
    }),
  );
}

/** How long one search takes, in milliseconds. */
export async function timeSearch(engine: Engine, query: string): Promise<number> {
  const started = performance.now();
  unwrap(await engine.search({ query }));
  return performance.now() - started;
}

/** The engine opened and its first question asked: what a user waits for after opening a folder. */
export interface OpenedEngine {
  readonly engine: Engine;
  readonly openSeconds: number;
  /** The first question pays for loading what search keeps in memory. */
  readonly firstQueryMs: number;
  /** The process's memory once the engine is open, before the first question. */
  readonly memoryAfterOpen: NodeJS.MemoryUsage;
}

export async function openAndAskFirst(
  request: EngineRequest,
  firstQuery: string,
): Promise<OpenedEngine> {
  const opened = performance.now();
  const engine = await openEngine(request);
  const openSeconds = round((performance.now() - opened) / 1000, 2);
  const memoryAfterOpen = process.memoryUsage();
  try {
    const firstQueryMs = round(await timeSearch(engine, firstQuery), 1);
    return { engine, openSeconds, firstQueryMs, memoryAfterOpen };
  } catch (cause) {
    engine.dispose();
    throw cause;
  }
}

/**
 * Waits until the engine's background count of the context's tokens has caught up (it starts
 * once the engine idles after opening), so the questions timed next find every count stored,
 * as a user's do once the count is done; says in the output how long that took.
 */
export async function waitForTokenCounts(engine: Engine): Promise<number> {
  const started = performance.now();
  await keptAlive(() => engine.countContextTokens());
  const seconds = round((performance.now() - started) / 1000, 2);
  process.stderr.write(
    `bench: waited ${seconds} s for the background token count before the questions\n`,
  );
  return seconds;
}

/**
 * Waits until the engine's warm-up after opening is done, so that the questions timed next
 * measure searching and not the warm-up running beside them (which the token count used to
 * outlast, before the counts were saved for the next opening).
 */
export function waitForWarmUp(engine: Engine): Promise<void> {
  return keptAlive(() => engine.whenWarm());
}

/**
 * Waits until the engine has saved what the next opening takes back (its graph's resolved calls,
 * the context's token counts), as a user's engine does once it idles after indexing, so that the
 * next opening takes them instead of redoing them.
 */
export function waitForIdleSaves(engine: Engine): Promise<void> {
  return keptAlive(() => engine.saveForNextOpening());
}

/**
 * Runs `work`, keeping the process alive meanwhile: the engine's background work waits on timers
 * that keep no process alive, and this child has nothing else to do.
 */
async function keptAlive<T>(work: () => Promise<T>): Promise<T> {
  const alive = setInterval(() => undefined, 1000);
  try {
    return await work();
  } finally {
    clearInterval(alive);
  }
}

/** Megabytes (MiB), whole. */
export function mb(bytes: number): number {
  return Math.round(bytes / 2 ** 20);
}

export function round(value: number, digits: number): number {
  return Math.round(value * 10 ** digits) / 10 ** digits;
}

/** The value after `name` among a bench command's flags. */
export function flagValue(flags: readonly string[], name: string): string | undefined {
  const at = flags.indexOf(name);
  return at >= 0 ? flags[at + 1] : undefined;
}

/** CPU time of `work` in milliseconds (this process runs nothing else meanwhile). */
export function cpuMs(work: () => void): number {
  const before = process.cpuUsage();
  work();
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}
