/**
 * Passes on the latest of a stream of values at most once per interval: progress per parsed
 * file and answer text per token would otherwise cross the thread boundary (and be validated
 * and drawn by the editor) thousands of times. `now` sends at once; `flush` sends what is pending.
 */
export class LatestThrottle<T> {
  private pending: { value: T } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private lastSent = 0;

  constructor(
    private readonly send: (value: T) => void,
    private readonly intervalMs: number,
  ) {}

  push(value: T, now = false): void {
    this.pending = { value };
    const wait = this.lastSent + this.intervalMs - Date.now();
    if (now || wait <= 0) return this.flush();
    this.timer ??= setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.pending) return;
    const { value } = this.pending;
    this.pending = null;
    this.lastSent = Date.now();
    this.send(value);
  }
}
