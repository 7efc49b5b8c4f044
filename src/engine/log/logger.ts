import { currentTraceId } from './trace';
import { redactDeep } from '../util/redact';
import type { Disposable } from '../util/event';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
export type LogFields = Record<string, unknown>;

export interface LogEvent extends LogFields {
  readonly time: string;
  readonly level: LogLevel;
  readonly event: string;
  readonly module: string;
  readonly trace_id?: string;
}

export interface LogSink {
  readonly minLevel: LogLevel;
  write(event: LogEvent): void;
}

const SEVERITY: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function severity(level: LogLevel): number {
  return SEVERITY[level];
}

/**
 * Where events go. One hub per thread; sinks (stderr JSON, a VS Code output channel, a test
 * capture, a worker's message port) subscribe to it. Events below every sink's level cost nothing.
 */
export class LogHub {
  private readonly sinks = new Set<LogSink>();
  private threshold = Infinity;

  addSink(sink: LogSink): Disposable {
    this.sinks.add(sink);
    this.recompute();
    return {
      dispose: () => {
        this.sinks.delete(sink);
        this.recompute();
      },
    };
  }

  enabled(level: LogLevel): boolean {
    return SEVERITY[level] >= this.threshold;
  }

  emit(event: LogEvent): void {
    const level = SEVERITY[event.level];
    // every sink gets the event with credentials taken out (an error text may echo a key)
    let redacted: LogEvent | null = null;
    for (const sink of this.sinks) {
      if (level >= SEVERITY[sink.minLevel]) sink.write((redacted ??= redactDeep(event)));
    }
  }

  private recompute(): void {
    this.threshold = Math.min(Infinity, ...[...this.sinks].map((s) => SEVERITY[s.minLevel]));
  }
}

export const logHub = new LogHub();

export class Logger {
  constructor(
    private readonly module: string,
    private readonly hub: LogHub = logHub,
  ) {}

  enabled(level: LogLevel): boolean {
    return this.hub.enabled(level);
  }

  debug(event: string, fields: LogFields = {}): void {
    this.log('debug', event, fields);
  }

  info(event: string, fields: LogFields = {}): void {
    this.log('info', event, fields);
  }

  warn(event: string, fields: LogFields = {}): void {
    this.log('warn', event, fields);
  }

  error(event: string, fields: LogFields = {}): void {
    this.log('error', event, fields);
  }

  log(level: LogLevel, event: string, fields: LogFields): void {
    if (!this.hub.enabled(level)) return;
    const traceId = currentTraceId();
    this.hub.emit({
      ...fields,
      time: new Date().toISOString(),
      level,
      event,
      module: this.module,
      ...(traceId ? { trace_id: traceId } : {}),
    });
  }
}

export function getLogger(module: string): Logger {
  return new Logger(module);
}

/** Milliseconds since `start` (a performance.now() reading), rounded for logs. */
export function elapsedMs(start: number): number {
  return Math.round((performance.now() - start) * 100) / 100;
}
