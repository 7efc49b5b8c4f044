import type { LogEvent, LogLevel, LogSink } from './logger';

/** One JSON object per line: what the CLI writes to stderr and what `jq` reads. */
export class JsonLineSink implements LogSink {
  constructor(
    readonly minLevel: LogLevel,
    private readonly write_: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  write(event: LogEvent): void {
    this.write_(`${JSON.stringify(event, jsonSafe)}\n`);
  }
}

/** Human-readable lines for --debug-query and terminals. */
export class PrettySink implements LogSink {
  constructor(
    readonly minLevel: LogLevel,
    private readonly write_: (line: string) => void = (line) => process.stderr.write(line),
  ) {}

  write(event: LogEvent): void {
    const { time, level, event: name, module, trace_id, ...fields } = event;
    const rendered = Object.entries(fields)
      .map(
        ([key, value]) =>
          `${key}=${typeof value === 'string' ? value : JSON.stringify(value, jsonSafe)}`,
      )
      .join(' ');
    this.write_(
      `${time.slice(11, 23)} ${level.toUpperCase().padEnd(5)} ${name} [${module}${trace_id ? ` ${trace_id}` : ''}] ${rendered}\n`,
    );
  }
}

/** Keeps events in memory: tests assert on them, the CLI's --debug-query prints them. */
export class MemorySink implements LogSink {
  readonly events: LogEvent[] = [];

  constructor(readonly minLevel: LogLevel = 'debug') {}

  write(event: LogEvent): void {
    this.events.push(event);
  }

  named(name: string): LogEvent[] {
    return this.events.filter((e) => e.event === name);
  }
}

function jsonSafe(_key: string, value: unknown): unknown {
  if (value instanceof Map) return Object.fromEntries(value);
  if (value instanceof Set) return [...value];
  if (value instanceof Error) return value.message;
  return value;
}
