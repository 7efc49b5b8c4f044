import { logHub, type LogEvent } from '../../src/engine/log/logger';
import { MemorySink } from '../../src/engine/log/sinks';

/** Runs `fn` and returns its result with every event emitted meanwhile. */
export async function captureLogs<T>(
  fn: () => Promise<T> | T,
): Promise<{ result: T; events: LogEvent[] }> {
  const sink = new MemorySink('debug');
  const subscription = logHub.addSink(sink);
  try {
    const result = await fn();
    return { result, events: sink.events };
  } finally {
    subscription.dispose();
  }
}

export function eventsNamed(events: readonly LogEvent[], name: string): LogEvent[] {
  return events.filter((event) => event.event === name);
}
