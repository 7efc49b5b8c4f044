/** VS Code-style disposables and events, so the engine composes the same way the extension does. */
export interface Disposable {
  dispose(): void;
}

export type Event<T> = (listener: (value: T) => void) => Disposable;

export class Emitter<T> implements Disposable {
  private readonly listeners = new Set<(value: T) => void>();

  readonly event: Event<T> = (listener) => {
    this.listeners.add(listener);
    return { dispose: () => this.listeners.delete(listener) };
  };

  fire(value: T): void {
    for (const listener of [...this.listeners]) listener(value);
  }

  dispose(): void {
    this.listeners.clear();
  }
}

export class DisposableStore implements Disposable {
  private readonly items: Disposable[] = [];

  add<D extends Disposable>(item: D): D {
    this.items.push(item);
    return item;
  }

  dispose(): void {
    while (this.items.length) this.items.pop()!.dispose();
  }
}
