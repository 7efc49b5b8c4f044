/**
 * The endless runner shown while the first index builds: a blinking cursor jumps bugs and red ×
 * syntax errors and collects green ✓ passing tests, over faint scrolling terminal text. Pure canvas,
 * no assets; colours come from CSS custom properties on the canvas (theme variables).
 */
const WIDTH = 400;
const HEIGHT = 120;
const GROUND = 104;
const RUNNER_X = 40;
const RUNNER_W = 8;
const RUNNER_H = 16;
const GRAVITY = 0.0026; // px/ms²
const JUMP_SPEED = 0.64; // px/ms: about 80 px high, half a second in the air
const START_SPEED = 0.16; // px/ms
const MAX_SPEED = 0.45;
const ACCELERATION = 0.000004; // px/ms per ms of run
const MAX_FRAME_MS = 50; // a frame after a pause must not teleport the runner into a bug
const TERMINAL = ['$ npm test', 'PASS src/parser.test.ts', 'compiling 214 files…', '$ tsc --noEmit', 'ok  pkg/api 0.42s', 'FAIL src/flaky.spec.ts', '$ git rebase -i', 'linking target…', '✓ 42 passing', 'warning: unused import'];

type Kind = 'bug' | 'error' | 'check';
interface Thing { kind: Kind; x: number; y: number }
interface Line { text: string; x: number; y: number }
interface Colors { fg: string; bg: string; ok: string; bad: string }

export class Runner {
  /** Called when a run ends in "Build failed.". */
  onRunEnd: () => void = () => {};
  private readonly context: CanvasRenderingContext2D;
  private readonly emoji: boolean;
  private colors: Colors = { fg: '#ccc', bg: '#1e1e1e', ok: '#73c991', bad: '#f14c4c' };
  private things: Thing[] = [];
  private lines: Line[] = [];
  private height = 0;
  private velocity = 0;
  private speed = START_SPEED;
  private score = 0;
  private runMs = 0;
  private nextSpawn = 0;
  private over = false;
  private frame = 0;
  private last = 0;
  private readonly onKey = (event: KeyboardEvent): void => {
    if (event.code !== 'Space' || isTyping(event.target)) return;
    event.preventDefault();
    this.press();
  };

  constructor(private readonly canvas: HTMLCanvasElement) {
    const scale = window.devicePixelRatio || 1;
    canvas.width = WIDTH * scale;
    canvas.height = HEIGHT * scale;
    const context = canvas.getContext('2d');
    if (!context) throw new Error('2D canvas unavailable');
    context.scale(scale, scale);
    this.context = context;
    this.emoji = canDrawEmoji();
    canvas.addEventListener('pointerdown', () => this.press());
  }

  /** True while a run is in progress (not on the "Build failed." screen). */
  get running(): boolean {
    return this.frame !== 0 && !this.over;
  }

  start(): void {
    document.addEventListener('keydown', this.onKey);
    this.restart();
    this.last = performance.now();
    this.frame = requestAnimationFrame((now) => this.tick(now));
  }

  stop(): void {
    document.removeEventListener('keydown', this.onKey);
    cancelAnimationFrame(this.frame);
    this.frame = 0;
  }

  private press(): void {
    if (this.over) this.restart();
    else if (this.height === 0) this.velocity = JUMP_SPEED;
  }

  private restart(): void {
    const style = getComputedStyle(this.canvas);
    const read = (name: string, fallback: string): string => style.getPropertyValue(name).trim() || fallback;
    this.colors = { fg: read('--runner-fg', this.colors.fg), bg: read('--runner-bg', this.colors.bg), ok: read('--runner-ok', this.colors.ok), bad: read('--runner-bad', this.colors.bad) };
    this.things = [];
    this.lines = Array.from({ length: 6 }, (_, i) => ({ text: pick(TERMINAL), x: Math.random() * WIDTH, y: 14 + i * 15 }));
    [this.height, this.velocity, this.speed, this.score, this.runMs, this.nextSpawn] = [0, 0, START_SPEED, 0, 0, 120];
    this.over = false;
  }

  private tick(now: number): void {
    const dt = Math.min(now - this.last, MAX_FRAME_MS);
    this.last = now;
    if (!this.over) this.step(dt);
    this.draw(now);
    this.frame = requestAnimationFrame((next) => this.tick(next));
  }

  private step(dt: number): void {
    this.runMs += dt;
    this.speed = Math.min(MAX_SPEED, START_SPEED + this.runMs * ACCELERATION);
    this.velocity -= GRAVITY * dt;
    this.height = Math.max(0, this.height + this.velocity * dt);
    if (this.height === 0) this.velocity = 0;
    const dx = this.speed * dt;
    for (const line of this.lines) {
      line.x -= dx * 0.3;
      if (line.x >= -200) continue;
      line.x = WIDTH + Math.random() * 80;
      line.text = pick(TERMINAL);
    }
    for (const thing of this.things) thing.x -= dx;
    this.things = this.things.filter((thing) => thing.x > -20);
    this.nextSpawn -= dx;
    if (this.nextSpawn <= 0) this.spawn();
    this.collide();
  }

  /** Gaps grow with speed so every obstacle stays jumpable. */
  private spawn(): void {
    const roll = Math.random();
    const kind: Kind = roll < 0.3 ? 'check' : roll < 0.65 ? 'bug' : 'error';
    const y = kind === 'check' && Math.random() < 0.6 ? GROUND - 40 - Math.random() * 25 : GROUND;
    this.things.push({ kind, x: WIDTH + 10, y });
    this.nextSpawn = (kind === 'check' ? 60 : 130) + this.speed * 500 + Math.random() * 160;
  }

  private collide(): void {
    const top = GROUND - this.height - RUNNER_H;
    const bottom = GROUND - this.height;
    for (const thing of this.things) {
      // Boxes a little smaller than the glyphs: a graze should not end the run.
      const hit = thing.x - 5 < RUNNER_X + RUNNER_W && thing.x + 5 > RUNNER_X && thing.y - 10 < bottom && thing.y - 2 > top;
      if (!hit) continue;
      if (thing.kind === 'check') {
        this.score += 1;
        thing.x = -100;
      } else {
        this.over = true;
        this.onRunEnd();
        return;
      }
    }
  }

  private draw(now: number): void {
    const c = this.context;
    const { fg, bg, ok, bad } = this.colors;
    c.fillStyle = bg;
    c.fillRect(0, 0, WIDTH, HEIGHT);
    c.textBaseline = 'alphabetic';
    c.globalAlpha = 0.13;
    c.fillStyle = fg;
    c.font = '10px monospace';
    for (const line of this.lines) c.fillText(line.text, line.x, line.y);
    c.globalAlpha = 0.35;
    c.fillRect(0, GROUND + 1, WIDTH, 1);
    // The cursor blinks like a terminal's (530 ms), dimming rather than vanishing so it stays playable.
    c.globalAlpha = Math.floor(now / 530) % 2 === 0 || this.over ? 1 : 0.45;
    c.fillRect(RUNNER_X, GROUND - this.height - RUNNER_H, RUNNER_W, RUNNER_H);
    c.globalAlpha = 1;
    c.textAlign = 'center';
    for (const thing of this.things) this.drawThing(thing, ok, bad);
    c.textAlign = 'left';
    c.fillStyle = fg;
    c.font = '11px monospace';
    c.fillText(`Tests passed: ${this.score}`, 8, 14);
    if (this.over) {
      c.textAlign = 'center';
      c.fillStyle = bad;
      c.font = 'bold 16px monospace';
      c.fillText('Build failed.', WIDTH / 2, HEIGHT / 2);
      c.textAlign = 'left';
    }
  }

  private drawThing(thing: Thing, ok: string, bad: string): void {
    const c = this.context;
    if (thing.kind === 'bug' && this.emoji) {
      c.font = '15px sans-serif';
      c.fillText('🐛', thing.x, thing.y);
    } else if (thing.kind === 'bug') {
      drawBug(c, thing.x, thing.y, bad);
    } else {
      c.fillStyle = thing.kind === 'check' ? ok : bad;
      c.font = 'bold 18px monospace';
      c.fillText(thing.kind === 'check' ? '✓' : '×', thing.x, thing.y);
    }
  }
}

/** A drawn bug for systems without a colour emoji font (there, 🐛 would be an empty box). */
function drawBug(c: CanvasRenderingContext2D, x: number, y: number, color: string): void {
  c.fillStyle = color;
  c.strokeStyle = color;
  c.beginPath();
  c.ellipse(x, y - 6, 7, 5, 0, 0, Math.PI * 2);
  c.fill();
  c.beginPath();
  for (const leg of [-4, 0, 4]) {
    c.moveTo(x + leg - 2, y - 10);
    c.lineTo(x + leg + 2, y);
  }
  c.stroke();
}

/** Whether 🐛 draws in colour: a missing glyph renders as a grey or empty box. */
function canDrawEmoji(): boolean {
  const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  if (!probe) return false;
  probe.font = '16px sans-serif';
  probe.fillText('🐛', 0, 16);
  const pixels = probe.getImageData(0, 0, 20, 20).data;
  for (let i = 0; i < pixels.length; i += 4) if (pixels[i] !== pixels[i + 1] || pixels[i + 1] !== pixels[i + 2]) return true;
  return false;
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}

function isTyping(target: EventTarget | null): boolean {
  return target instanceof HTMLElement && (target.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName));
}
