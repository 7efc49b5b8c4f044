import { h, show } from './dom';
import { Runner } from './runner';

/**
 * The index's state above the chat: a staged progress bar while it builds, the runner game when
 * the first build takes longer than 5 seconds, then the "Index ready" banner. During the first
 * build the chat stays hidden; `revealChat` brings it in when the index is ready (or failed).
 */

/** A quick index never shows the game: it appears only after this long. */
const GAME_AFTER_MS = 5000;
/** After the index is ready, the game gets this long to end its run before it fades anyway. */
const GRACE_MS = 2000;
const FADE_MS = 400;

export class IndexingView {
  readonly banner = h('div', {
    class: 'banner',
    'data-testid': 'index-ready-banner',
    role: 'status',
    hidden: true,
  });
  readonly progress: HTMLElement;
  readonly game: HTMLElement;
  private readonly bar = h('div', { class: 'progress-fill' });
  private readonly label = h('span', { class: 'progress-label' });
  private readonly percent = h('span', { class: 'progress-percent' });
  private readonly canvas = h('canvas', {
    class: 'runner',
    'data-testid': 'runner-canvas',
    tabindex: '0',
    'aria-label': 'A small game to pass the time: space or click to jump',
  });
  private runner: Runner | null = null;
  private startedAt = 0;
  private gameTimer: ReturnType<typeof setTimeout> | undefined;
  private chatShown = false;
  private finishing = false;

  constructor(private readonly revealChat: (fade: boolean) => void) {
    this.progress = h(
      'div',
      {
        class: 'progress',
        'data-testid': 'progress',
        role: 'progressbar',
        'aria-valuemin': '0',
        'aria-valuemax': '100',
        'aria-valuenow': '0',
        'aria-label': 'Indexing',
        hidden: true,
      },
      h(
        'div',
        { class: 'progress-text' },
        h('span', { class: 'spinner', 'aria-hidden': 'true' }),
        this.label,
        this.percent,
      ),
      h('div', { class: 'progress-track' }, this.bar),
    );
    this.game = h('div', { class: 'game', hidden: true }, this.canvas);
  }

  /** The host's first word: an index that is already there means straight to the chat. */
  init(indexReady: boolean): void {
    if (indexReady) this.showChat(false);
    else if (!this.chatShown) this.update('Preparing the index…', 0);
  }

  update(label: string, percent: number, stage = ''): void {
    this.progress.dataset['stage'] = stage;
    if (this.startedAt === 0 && !this.chatShown) this.scheduleGame();
    const clamped = Math.max(0, Math.min(100, Math.round(percent)));
    this.progress.classList.remove('failed');
    this.progress.setAttribute('role', 'progressbar');
    this.progress.classList.toggle('complete', stage === 'ready');
    this.progress.setAttribute('aria-valuenow', String(clamped));
    this.label.textContent = label;
    this.percent.textContent = `${clamped}%`;
    this.bar.style.width = `${clamped}%`;
    show(this.progress, true);
  }

  ready(files: number, chunks: number): void {
    this.banner.textContent = `Index ready — results available (${files} files, ${chunks} chunks)`;
    show(this.banner, true);
    // A bar that was not showing (the index loaded from disk) is not flashed at 100%.
    if (!this.progress.hidden) this.update('Index ready', 100, 'ready');
    this.finish();
  }

  failed(message: string): void {
    this.progress.classList.add('failed');
    this.label.textContent = message;
    this.percent.textContent = '';
    this.progress.setAttribute('role', 'alert');
    show(this.progress, true);
    this.finish();
  }

  /** The user asked (Explain this error) before the index was ready: show the chat now. */
  showChatNow(): void {
    if (!this.chatShown) this.endGame();
  }

  /** Once a question is asked the banner has done its job. */
  dismissBanner(): void {
    show(this.banner, false);
  }

  private scheduleGame(): void {
    this.startedAt = Date.now();
    this.gameTimer = setTimeout(() => this.startGame(), GAME_AFTER_MS);
  }

  private startGame(): void {
    if (this.chatShown || Date.now() - this.startedAt < GAME_AFTER_MS) return;
    const context = this.canvas.getContext('2d');
    if (!context) return;
    show(this.game, true);
    this.runner = new Runner(this.canvas, context);
    this.runner.start();
  }

  /** Lets a run in progress end (or GRACE_MS pass) before the game fades: never cut a jump short. */
  private finish(): void {
    clearTimeout(this.gameTimer);
    if (this.finishing || this.chatShown) return this.hideProgressSoon();
    const runner = this.runner;
    if (!runner?.running) return this.endGame();
    this.finishing = true;
    const timer = setTimeout(() => this.endGame(), GRACE_MS);
    runner.onRunEnd = () => {
      clearTimeout(timer);
      this.endGame();
    };
  }

  private endGame(): void {
    clearTimeout(this.gameTimer);
    const runner = this.runner;
    this.runner = null;
    if (runner) {
      this.game.classList.add('fading');
      setTimeout(() => {
        runner.stop();
        show(this.game, false);
      }, FADE_MS);
    }
    this.showChat(true);
  }

  private showChat(fade: boolean): void {
    if (!this.chatShown) {
      this.chatShown = true;
      this.revealChat(fade);
    }
    this.hideProgressSoon();
  }

  /** A finished bar lingers a moment at 100% so the end is seen; a failure stays. */
  private hideProgressSoon(): void {
    if (this.progress.classList.contains('failed')) return;
    setTimeout(() => {
      if (this.progress.classList.contains('complete')) show(this.progress, false);
    }, FADE_MS * 2);
  }
}
