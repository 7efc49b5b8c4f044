/** The endless runner shown while the first index builds: a blinking cursor jumps 🐛 bugs and red ×
 *  syntax errors and collects green ✓ passing tests over faint scrolling terminal text. Pure canvas;
 *  colours come from CSS custom properties on the canvas, i.e. from the theme. */
const [WIDTH, HEIGHT, GROUND] = [400, 120, 104];
const RUNNER = { x: 40, w: 8, h: 16 };
const [GRAVITY, JUMP_SPEED] = [0.0026, 0.64]; // px/ms², px/ms: a jump is ~80 px high, ~0.5 s long
const [START_SPEED, ACCELERATION, MAX_SPEED] = [0.16, 0.000004, 0.45]; // px/ms, px/ms per ms of run
const MAX_FRAME_MS = 50; // the first frame after a pause must not teleport the runner into a bug
const TERMINAL = [
  '$ npm test',
  'PASS src/parser.test.ts',
  'compiling 214 files…',
  '$ tsc --noEmit',
  'ok  pkg/api 0.42s',
  'FAIL src/flaky.spec.ts',
  '$ git rebase -i',
  'linking target…',
  '✓ 42 passing',
  'warning: unused import',
];

interface Thing {
  kind: 'bug' | 'error' | 'check';
  x: number;
  y: number;
}

/** One run, from the start to "Build failed.". */
function newRun() {
  const lines = Array.from({ length: 5 }, (_, i) => ({
    text: pick(TERMINAL),
    x: Math.random() * WIDTH,
    y: 32 + i * 15,
  }));
  return {
    height: 0,
    velocity: 0,
    speed: START_SPEED,
    score: 0,
    ms: 0,
    nextSpawn: 120,
    over: false,
    things: [] as Thing[],
    lines,
  };
}

export class Runner {
  /** Called when a run ends in "Build failed.". */
  onRunEnd: () => void = () => {};
  private run = newRun();
  private colors = { fg: '', bg: '', ok: '', bad: '' };
  private readonly emoji = canDrawEmoji();
  private frame = 0;
  private last = 0;
  private readonly onKey = (event: KeyboardEvent): void => {
    if (event.code !== 'Space') return;
    event.preventDefault();
    this.press();
  };

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly c: CanvasRenderingContext2D,
  ) {
    const scale = window.devicePixelRatio || 1;
    [canvas.width, canvas.height] = [WIDTH * scale, HEIGHT * scale];
    c.scale(scale, scale);
    canvas.addEventListener('pointerdown', () => this.press());
  }

  /** True while a run is in progress (not on the "Build failed." screen). */
  get running(): boolean {
    return this.frame !== 0 && !this.run.over;
  }

  /** Space anywhere plays: while the game shows, the rest of the chat is hidden. */
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
    if (this.run.over) this.restart();
    else if (this.run.height === 0) this.run.velocity = JUMP_SPEED;
  }

  /** Colours are read per run, so a theme switched mid-game shows from the next run. */
  private restart(): void {
    const style = getComputedStyle(this.canvas);
    const read = (name: string): string => style.getPropertyValue(name).trim() || style.color;
    this.colors = {
      fg: read('--runner-fg'),
      bg: read('--runner-bg'),
      ok: read('--runner-ok'),
      bad: read('--runner-bad'),
    };
    this.run = newRun();
  }

  private tick(now: number): void {
    const dt = Math.min(now - this.last, MAX_FRAME_MS);
    this.last = now;
    if (!this.run.over) this.step(dt);
    this.draw(now);
    this.frame = requestAnimationFrame((next) => this.tick(next));
  }

  private step(dt: number): void {
    const run = this.run;
    run.ms += dt;
    run.speed = Math.min(MAX_SPEED, START_SPEED + run.ms * ACCELERATION);
    run.velocity -= GRAVITY * dt;
    run.height = Math.max(0, run.height + run.velocity * dt);
    if (run.height === 0) run.velocity = 0;
    const dx = run.speed * dt;
    for (const line of run.lines) {
      line.x -= dx * 0.3;
      if (line.x < -160) [line.x, line.text] = [WIDTH + Math.random() * 80, pick(TERMINAL)];
    }
    for (const thing of run.things) thing.x -= dx;
    run.things = run.things.filter((thing) => thing.x > -20);
    run.nextSpawn -= dx;
    if (run.nextSpawn <= 0) this.spawn();
    this.collide();
  }

  /** The gap after an obstacle grows with speed, so every one stays jumpable. */
  private spawn(): void {
    const roll = Math.random();
    const kind = roll < 0.3 ? 'check' : roll < 0.65 ? 'bug' : 'error';
    const y = kind === 'check' && Math.random() < 0.6 ? GROUND - 40 - Math.random() * 25 : GROUND;
    this.run.things.push({ kind, x: WIDTH + 10, y });
    this.run.nextSpawn = (kind === 'check' ? 60 : 130) + this.run.speed * 500 + Math.random() * 160;
  }

  private collide(): void {
    const run = this.run;
    const [top, bottom] = [GROUND - run.height - RUNNER.h, GROUND - run.height];
    // Boxes a little smaller than the glyphs: a graze should not end the run.
    const hit = run.things.find(
      (t) =>
        t.x - 5 < RUNNER.x + RUNNER.w && t.x + 5 > RUNNER.x && t.y - 10 < bottom && t.y - 2 > top,
    );
    if (hit?.kind === 'check') {
      run.score += 1;
      hit.x = -100;
    } else if (hit) {
      run.over = true;
      this.onRunEnd();
    }
  }

  private draw(now: number): void {
    const { c, run, colors } = this;
    c.fillStyle = colors.bg;
    c.fillRect(0, 0, WIDTH, HEIGHT);
    c.globalAlpha = 0.13;
    for (const line of run.lines) this.text(line.text, line.x, line.y, '10px monospace', colors.fg);
    c.globalAlpha = 0.35;
    c.fillRect(0, GROUND + 1, WIDTH, 1);
    // The cursor blinks at a terminal's 530 ms, dimming rather than vanishing so it stays playable.
    c.globalAlpha = run.over || Math.floor(now / 530) % 2 === 0 ? 1 : 0.45;
    c.fillRect(RUNNER.x, GROUND - run.height - RUNNER.h, RUNNER.w, RUNNER.h);
    c.globalAlpha = 1;
    for (const thing of run.things) this.drawThing(thing);
    this.text(`Tests passed: ${run.score}`, 8, 14, '11px monospace', colors.fg);
    if (run.over)
      this.text(
        'Build failed.',
        WIDTH / 2,
        HEIGHT / 2,
        'bold 16px monospace',
        colors.bad,
        'center',
      );
  }

  private drawThing({ kind, x, y }: Thing): void {
    // Without a colour emoji font 🐛 would be an empty box; a red ✱ stands in for it.
    const bug = this.emoji ? '🐛' : '✱';
    const glyph = kind === 'check' ? '✓' : kind === 'error' ? '×' : bug;
    this.text(
      glyph,
      x,
      y,
      kind === 'bug' ? '15px sans-serif' : 'bold 18px monospace',
      kind === 'check' ? this.colors.ok : this.colors.bad,
      'center',
    );
  }

  private text(
    value: string,
    x: number,
    y: number,
    font: string,
    color: string,
    align: CanvasTextAlign = 'left',
  ): void {
    Object.assign(this.c, { font, fillStyle: color, textAlign: align });
    this.c.fillText(value, x, y);
  }
}

/** Whether 🐛 draws in colour; a missing glyph draws as a grey or empty box. */
function canDrawEmoji(): boolean {
  const probe = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  if (!probe) return false;
  probe.font = '16px sans-serif';
  probe.fillText('🐛', 0, 16);
  const pixels = probe.getImageData(0, 0, 20, 20).data;
  return pixels.some(
    (value, i) => i % 4 === 0 && (value !== pixels[i + 1] || value !== pixels[i + 2]),
  );
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)] as T;
}
