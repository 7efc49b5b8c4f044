import type { EngineWorkerClient } from '../../src/engine/host/client';

/** What a crash of the engine looks like from the editor: its process killed outright. */
export function crashEngine(client: EngineWorkerClient): void {
  const pid = client.processId;
  if (pid === undefined) throw new Error('the engine process has no id: it never started');
  process.kill(pid, 'SIGKILL');
}
