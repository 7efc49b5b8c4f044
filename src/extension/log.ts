import * as vscode from 'vscode';
import type { LogEvent } from '../engine/log/logger';

/** Writes the engine's structured events to the "Code Oracle" log channel, one line each. */
export function writeEvent(channel: vscode.LogOutputChannel, event: LogEvent): void {
  const { time: _time, level, event: name, module, trace_id, ...fields } = event;
  const details = Object.entries(fields)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`)
    .join(' ');
  const line = `${name} [${module}${trace_id ? ` ${trace_id}` : ''}] ${details}`;
  switch (level) {
    case 'debug':
      return channel.debug(line);
    case 'info':
      return channel.info(line);
    case 'warn':
      return channel.warn(line);
    case 'error':
      return channel.error(line);
  }
}
