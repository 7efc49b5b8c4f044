import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

setFlagsFromString('--expose-gc');
const collect = runInNewContext('gc') as () => void;

/** The heap in use once what is garbage is collected: what a test's objects still hold. */
export function heapUsedAfterCollecting(): number {
  collect();
  collect();
  return process.memoryUsage().heapUsed;
}
