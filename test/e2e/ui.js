// Stage (a): drives the real workbench like a person would, on a scratch copy of
// test/fixtures/shop-py with this repository loaded as an extension under development and no
// language model configured. Each step is a user journey with a screenshot at every stage:
//   1. "Code Oracle: Reindex Workspace" from the command palette; the status bar shows the index
//   2. the chat: open it from the activity bar, ask, see a cited answer, hide and show the view
//      and still see it, click a citation and land on the cited line
//   3. "Explain this error with Code Oracle" from the light bulb on a JSON syntax error (the
//      built-in JSON language server reports it), answered in the chat with the code around it
//   4. a "N callers" lens: click it, see the callers tree, click a caller and land on the call
//   5. with no model, Thinking and Deep are disabled and say why; with one (a fake OpenAI-compatible
//      server started here), a diagram whose label holds an <img onerror> is drawn as text, with
//      no link, and clicking it throws nothing; "New Chat" empties the conversation
//   6. typing lag: keypress-to-render in an editor while the first index of a 2,000-file
//      workspace builds, and the same once it is built (reported, not asserted: timings are noisy)
// A failed step is reported and the next one still runs; the last line is `ui: N passed, N failed`.
const fs = require('fs');
const path = require('path');
const http = require('http');
const { launchPage, workbenchUrl, log, env } = require('./workbench');

const PORT = env('E2E_PORT');
const FOLDER = env('E2E_WS_UI'); // a scratch copy of test/fixtures/shop-py
const DEV = env('E2E_EXT_DEV_PATH'); // the repository root
const SHOTS = env('E2E_SHOTS');
const TIMEOUT = 90000;
// IndexStatus.ready(): `$(database) ${files} files · ${chunks} chunks`; the codicon renders as an icon
const READY = /(\d+) files · (\d+) chunks/;
const STATUS_ITEM = '.statusbar-item[id$="codeOracle.status"]'; // `<extension id>.<item id>`
const PALETTE_LABEL = 'Code Oracle: Reindex Workspace'; // category + title from package.json
const QUESTION = 'why do I get readonly database after regenerating?';
// A JSON file with a missing comma on line 3: the JSON language server flags it as an error.
const BROKEN_JSON = 'shop-config.json';
const BROKEN_JSON_TEXT = '{\n  "name": "shop",\n  "version": 1\n  "private": true\n}\n';

fs.mkdirSync(SHOTS, { recursive: true });
fs.writeFileSync(path.join(FOLDER, BROKEN_JSON), BROKEN_JSON_TEXT);

/** Screenshots are numbered in the order they were taken, named after what they show. */
let shots = 0;
const shot = (page, name) =>
  page
    .screenshot({ path: path.join(SHOTS, `${String(++shots).padStart(2, '0')}-${name}.png`) })
    .catch(() => undefined);

function check(condition, message) {
  if (!condition) throw new Error(message);
}

/** The chat view's document: the webview's outer iframe holds the extension's page in an inner one. */
const chatFrame = (page) => page.frameLocator('iframe.webview.ready').frameLocator('iframe');

/**
 * Waits for the active editor's cursor ("Ln 20, Col 1" in the status bar) to be on `line`: an
 * editor opens first and gets its selection a moment later.
 */
async function expectCursorLine(page, line, what) {
  const seen = await page
    .waitForFunction(
      (expected) => {
        const text =
          document.querySelector('.statusbar-item[id="status.editor.selection"]')?.textContent ??
          '';
        return new RegExp(`Ln ${expected}\\b`).test(text) && text;
      },
      line,
      { timeout: 10000 },
    )
    .catch(() => null);
  if (!seen) {
    const text = await page
      .locator('.statusbar-item[id="status.editor.selection"]')
      .innerText({ timeout: 1000 })
      .catch(() => '(none)');
    throw new Error(`${what} put the cursor at ${JSON.stringify(text)}, not on line ${line}`);
  }
}

/** Opens a workspace file through Quick Open (Ctrl+P), as a user would. */
async function quickOpen(page, name) {
  // a file already open (a citation opened it as a preview) is brought forward by its tab: Quick
  // Open's Enter leaves such a preview behind another editor
  const tab = page.locator(`.tabs-container .tab[aria-label^="${name}"]`).first();
  if (await tab.count()) {
    await tab.click();
    return;
  }
  await page.keyboard.press('Control+P');
  await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
  await page.keyboard.type(name);
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: name })
    .first()
    .waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    (file) =>
      document
        .querySelector('.tabs-container .tab.active')
        ?.getAttribute('aria-label')
        ?.startsWith(file),
    name,
    { timeout: 15000 },
  );
}

async function reindexFromPalette(page) {
  const item = page.locator(STATUS_ITEM);
  // Record every text the item shows from now on, to prove the command really re-ran the index
  // (with nothing changed on disk it is quick, and the end state looks the same as the start).
  await page.evaluate((selector) => {
    const el = document.querySelector(selector);
    window.__oracleTexts = [];
    new MutationObserver(() => window.__oracleTexts.push(el.textContent)).observe(el, {
      subtree: true,
      childList: true,
      characterData: true,
    });
  }, STATUS_ITEM);

  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
  await page.keyboard.type(PALETTE_LABEL);
  await page
    .locator('.quick-input-list .monaco-list-row', { hasText: PALETTE_LABEL })
    .first()
    .waitFor({ timeout: 15000 });
  await shot(page, 'palette');
  await page.keyboard.press('Enter');

  // Done when the item went through an indexing state and is back to showing the index.
  const texts = await page
    .waitForFunction(
      (re) => {
        const seen = window.__oracleTexts;
        const last = seen[seen.length - 1];
        return (
          seen.some((t) => t.includes('Code Oracle:')) && last && new RegExp(re).test(last) && seen
        );
      },
      READY.source,
      { timeout: TIMEOUT },
    )
    .then((h) => h.jsonValue());
  log('status-bar texts after the command:', JSON.stringify([...new Set(texts)]));

  const final = await item.innerText();
  const m = READY.exec(final);
  check(m, `status bar ended as ${JSON.stringify(final)}`);
  const expected = fs
    .readdirSync(path.join(FOLDER, 'shop'))
    .filter((f) => f.endsWith('.py')).length;
  check(
    +m[1] === expected,
    `status bar shows ${m[1]} files, the workspace has ${expected} Python files`,
  );
  check(+m[2] >= +m[1], `status bar shows fewer chunks than files: ${final}`);
  await shot(page, 'reindexed');
}

async function askInChat(page) {
  await page.locator('.activitybar .action-item a[aria-label^="Code Oracle"]').first().click();
  const chat = chatFrame(page);
  const input = chat.locator('[data-testid=question-input]');
  await input.waitFor({ timeout: 30000 });
  await shot(page, 'chat-open');
  await input.fill(QUESTION);
  await chat.locator('[data-testid=send]').click();
  const answer = chat.locator('[data-testid=answer][data-status=done]').last();
  await answer.waitFor({ timeout: TIMEOUT });
  check(
    (await answer.innerText()).includes(QUESTION),
    'the answer is not under the question asked',
  );
  check(
    (await answer.locator('[data-testid=evidence-only-label]').count()) === 1,
    'an answer with no model is not labelled as evidence only',
  );
  const citations = await answer.locator('[data-testid=citation]').allInnerTexts();
  log('citations:', JSON.stringify(citations));
  check(citations.length > 0, 'the answer cites nothing');
  // without a model each place shows its code, highlighted, and why it matters in plain words
  const code = answer.locator('[data-testid=place-code]').first();
  await code.waitFor({ timeout: 5000 });
  const codeText = await code.innerText();
  check(/def |raise/.test(codeText), `the first place's code is ${JSON.stringify(codeText)}`);
  check((await code.locator('.tok-keyword').count()) > 0, 'the place code is not highlighted');
  const why = await answer.locator('[data-testid=place] .why').first().innerText();
  log('first place, why:', why);
  check(/Defines function /.test(why), `the first place's reason reads ${JSON.stringify(why)}`);
  // db.py:24 raises "attempt to write a readonly database"; the function holding it is cited
  // beside OrderService.regenerate (the step the question names), one of the first two places
  const [cited, file, start] = /^(.+):(\d+)-\d+$/.exec(citations[0]) || [];
  check(cited, `the first citation ${citations[0]} is not path:start-end`);
  check(
    citations.slice(0, 2).some((citation) => citation.startsWith('shop/db.py:')),
    `the raise site in shop/db.py is not among the first two citations: ${citations.join(', ')}`,
  );
  await answer.scrollIntoViewIfNeeded();
  await shot(page, 'chat-answer');

  // the conversation survives hiding the view (another view in the side bar) and showing it again
  await page.locator('.activitybar .action-item a[aria-label^="Explorer"]').first().click();
  await page.locator('.activitybar .action-item a[aria-label^="Code Oracle"]').first().click();
  await answer.waitFor({ timeout: 15000 });
  check(
    (await answer.locator('[data-testid=citation]').allInnerTexts()).join() === citations.join(),
    'the answer changed after hiding and showing the chat',
  );

  await answer.locator('[data-testid=citation]').first().click();
  await page.waitForFunction(
    (name) =>
      document
        .querySelector('.tabs-container .tab.active')
        ?.getAttribute('aria-label')
        ?.startsWith(name),
    file.split('/').pop(),
    { timeout: 15000 },
  );
  await expectCursorLine(page, +start, `the citation ${citations[0]}`);
  await shot(page, 'citation-opened');

  // "Fix this" under the answer: with no model the card says plainly that a patch needs one
  await answer.locator('[data-testid=fix-this]').click();
  const fix = answer.locator('[data-testid=fix] [role=alert]');
  await fix.waitFor({ timeout: 15000 });
  check(
    (await fix.innerText()).includes('Proposing a patch needs a language model'),
    `"Fix this" with no model says: ${await fix.innerText()}`,
  );
  await shot(page, 'fix-this-no-model');
}

async function explainFromLightBulb(page) {
  await quickOpen(page, BROKEN_JSON);
  const squiggle = page.locator('.monaco-editor .squiggly-error').first();
  await squiggle.waitFor({ timeout: 30000 });
  // the squiggle lies under the text layer: click through it to put the cursor on the error
  await squiggle.click({ force: true });
  const bulb = page.locator('.lightBulbWidget');
  await bulb.waitFor({ timeout: 15000 });
  await shot(page, 'error-light-bulb');
  await bulb.click();
  const action = page.locator('.action-widget .monaco-list-row', {
    hasText: 'Explain this error with Code Oracle',
  });
  await action.waitFor({ timeout: 15000 });
  await shot(page, 'error-quick-fix-menu');
  const chat = chatFrame(page);
  const before = await chat.locator('[data-testid=answer]').count();
  await action.click();
  // earlier answers are all done: the next done one is the explanation
  const answer = chat.locator('[data-testid=answer][data-status=done]').nth(before);
  await answer.waitFor({ timeout: TIMEOUT });
  const text = await answer.innerText();
  check(
    /Explain: Expected comma/.test(text),
    `the chat did not receive the diagnostic: ${text.slice(0, 200)}`,
  );
  const citations = await answer.locator('[data-testid=citation]').allInnerTexts();
  log('citations:', JSON.stringify(citations));
  // the code around the error (lines 1-5 of the file) is attached, so it is cited first
  check(
    citations[0] === `${BROKEN_JSON}:1-5`,
    `first citation is ${citations[0]}, expected ${BROKEN_JSON}:1-5`,
  );
  // the index does not hold a JSON file: the answer is the attached lines alone, no unrelated code
  const sources = await answer.locator('.sources [data-testid=citation]').allInnerTexts();
  check(sources.length === 1, `unrelated code cited after the attached lines: ${sources}`);
  await answer.scrollIntoViewIfNeeded();
  await shot(page, 'error-explained');
}

async function callersFromLens(page) {
  await quickOpen(page, 'service.py');
  // OrderService.create_order (line 13) is called once, by create_order_endpoint at api.py:24
  const lens = page.locator('.codelens-decoration a', { hasText: /^1 caller$/ }).first();
  await lens.waitFor({ timeout: 30000 });
  const lenses = await page.locator('.codelens-decoration a').allInnerTexts();
  log('lenses:', JSON.stringify(lenses));
  check(
    lenses.includes('no callers found'),
    'no lens says "no callers found" over an uncalled method',
  );
  await shot(page, 'callers-lens');
  await lens.click();
  const tree = page.locator('.pane', { has: page.locator('.pane-header', { hasText: 'Callers' }) });
  const caller = tree.locator('.monaco-list-row', { hasText: 'create_order_endpoint' });
  await caller.waitFor({ timeout: 15000 });
  const rows = await tree.locator('.monaco-list-row').allInnerTexts();
  log('callers tree:', JSON.stringify(rows));
  check(rows[0].startsWith('OrderService.create_order'), `the tree's root is ${rows[0]}`);
  await shot(page, 'callers-tree');
  await caller.click();
  await page.waitForFunction(
    () =>
      document
        .querySelector('.tabs-container .tab.active')
        ?.getAttribute('aria-label')
        ?.startsWith('api.py'),
    null,
    { timeout: 15000 },
  );
  await expectCursorLine(page, 24, 'the caller node (the call is at api.py:24)');
  await shot(page, 'caller-opened');
}

/** A fake OpenAI-compatible server whose answers carry a diagram with a hostile label. */
const HOSTILE_LABEL = '<img src=x onerror=window.__oraclePwned=1>';
function startFakeModel() {
  const answer = {
    answer: [
      'Database.connect raises the error (shop/db.py:20).',
      '',
      '```mermaid',
      'flowchart TD',
      `  A["${HOSTILE_LABEL}"] --> B[Database.connect]`,
      '  click A "https://example.invalid/x"',
      '```',
    ].join('\n'),
    confidence: 0.8,
    citations: [{ path: 'shop/db.py', startLine: 20, endLine: 26, why: 'raises it' }],
    followUps: ['Who calls `Database.connect`?'],
  };
  const content = JSON.stringify(answer);
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      if (/"stream"\s*:\s*true/.test(body)) {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        response.write(`data: ${JSON.stringify({ choices: [{ delta: { content } }] })}\n\n`);
        response.end('data: [DONE]\n\n');
      } else {
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(
          JSON.stringify({ choices: [{ message: { content }, finish_reason: 'stop' }] }),
        );
      }
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve({ server, port: server.address().port })),
  );
}

/** Chooses the answering model with "Code Oracle: Choose a Language Model…", as a user would. */
async function chooseModel(page, provider, baseUrl = '') {
  const rows = '.quick-input-list .monaco-list-row';
  await page.keyboard.press('F1');
  await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
  await page.keyboard.type('Code Oracle: Choose a Language Model');
  await page
    .locator(rows, { hasText: 'Choose a Language Model' })
    .first()
    .waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  await page
    .locator(rows, { hasText: 'No model: answers show the evidence' })
    .first()
    .waitFor({ timeout: 15000 });
  await page.keyboard.type(provider);
  await page.locator(rows, { hasText: provider }).first().waitFor({ timeout: 15000 });
  await page.keyboard.press('Enter');
  if (provider !== 'openai-compatible') return;
  for (const [prompt, value] of [
    ['Address of the OpenAI-compatible server', baseUrl],
    ['Model name on that server', ''],
  ]) {
    await page.locator('.quick-input-widget', { hasText: prompt }).waitFor({ timeout: 15000 });
    await page.keyboard.press('Control+A');
    if (value) await page.keyboard.type(value);
    else await page.keyboard.press('Backspace');
    await page.keyboard.press('Enter');
  }
}

/** Shows the chat; clicking the icon of a side bar already open would close it. */
async function showChat(page) {
  const open = await page
    .locator('.activitybar .action-item.checked a[aria-label^="Code Oracle"]')
    .count();
  if (!open)
    await page.locator('.activitybar .action-item a[aria-label^="Code Oracle"]').first().click();
  return chatFrame(page);
}

async function modesNeedAModel(page) {
  const chat = await showChat(page);
  const select = chat.locator('[data-testid=mode-select]');
  await select.waitFor({ timeout: 15000 });
  // no model: Thinking and Deep are disabled, and say why
  const disabled = await select
    .locator('option:disabled')
    .evaluateAll((options) => options.map((option) => `${option.value}: ${option.title}`));
  log('disabled modes:', JSON.stringify(disabled));
  check(
    disabled.length === 2 && disabled.every((text) => /need a language model/.test(text)),
    `without a model the disabled modes are ${JSON.stringify(disabled)}`,
  );
  await shot(page, 'modes-without-model');
}

async function hostileDiagramDrawnInert(page) {
  const chat = await showChat(page);
  const { server, port } = await startFakeModel();
  try {
    await chooseModel(page, 'openai-compatible', `http://127.0.0.1:${port}/v1`);
    await chat
      .locator('[data-testid=mode-select] option[value=thinking]:not([disabled])')
      .waitFor({ state: 'attached', timeout: 60000 });
    // choosing a model restarts the folders (long functions may now be summarised): let it settle
    await page.waitForTimeout(1500);
    await page.waitForFunction(
      ({ selector, re }) =>
        new RegExp(re).test(document.querySelector(selector)?.textContent ?? ''),
      { selector: STATUS_ITEM, re: READY.source },
      { timeout: TIMEOUT },
    );
    const before = await chat.locator('[data-testid=answer]').count();
    await chat.locator('[data-testid=question-input]').fill('draw how the readonly error happens');
    await chat.locator('[data-testid=send]').click();
    const answer = chat.locator('[data-testid=answer][data-status=done]').nth(before);
    await answer.waitFor({ timeout: TIMEOUT });
    const diagram = answer.locator('.mermaid-block.drawn .mermaid-diagram svg');
    await diagram.waitFor({ timeout: 30000 });
    const inDiagram = await diagram.evaluate((svg) => ({
      images: svg.querySelectorAll('img, image, foreignObject').length,
      links: svg.querySelectorAll('a, [href], [onclick]').length,
      text: svg.textContent,
    }));
    log('diagram:', JSON.stringify(inDiagram));
    check(inDiagram.images === 0, 'an element from a diagram label reached the page');
    check(inDiagram.links === 0, 'the diagram kept a link or a click handler');
    check(inDiagram.text.includes('<img'), 'the hostile label is not shown as text');
    const errors = [];
    const onError = (error) => errors.push(String(error));
    page.on('pageerror', onError);
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    await diagram.locator('g.node').first().click();
    await page.waitForTimeout(500);
    page.off('pageerror', onError);
    check(
      !errors.some((error) => /DataCloneError/.test(error)),
      `clicking a node threw: ${errors.filter((error) => /DataCloneError/.test(error))}`,
    );
    check(
      !(await chat.locator('body').evaluate(() => window.__oraclePwned === 1)),
      'the hostile label ran',
    );
    const chip = await answer.locator('[data-testid=follow-up]').first().innerText();
    check(!chip.includes('`'), `a follow-up chip shows backticks: ${chip}`);
    await answer.scrollIntoViewIfNeeded();
    await shot(page, 'diagram-sanitised');
  } finally {
    await chooseModel(page, 'none');
    server.close();
  }
}

async function newChatClears(page) {
  const chat = await showChat(page);
  // "New Chat" in the view's title bar empties the conversation
  check((await chat.locator('[data-testid=answer]').count()) > 0, 'nothing to clear');
  // a view's title actions show while the pointer is over its header
  await page.locator('.pane-header', { hasText: 'Chat' }).first().hover();
  await page.locator('.pane-header .action-label[aria-label="New Chat"]').first().click();
  await chat.locator('[data-testid=answer]').first().waitFor({ state: 'detached', timeout: 15000 });
  await shot(page, 'new-chat');
}

/** Files of the typing-lag workspace: small Python modules that call each other. */
const LAG_FILES = 2000;
function writeLagWorkspace(root) {
  for (let i = 0; i < LAG_FILES; i++) {
    const dir = path.join(root, `pkg${Math.floor(i / 100)}`);
    fs.mkdirSync(dir, { recursive: true });
    const next = (i + 1) % LAG_FILES;
    const lines = [`# Module ${i}.`, ''];
    for (let f = 0; f < 6; f++)
      lines.push(
        `def handle_${i}_${f}(order, amount):`,
        `    # Handles step ${f} of order processing in module ${i}.`,
        `    total = amount * ${f + 1} + len(str(order))`,
        `    if total > ${100 * (f + 1)}:`,
        `        raise ValueError("order ${i} step ${f} over limit")`,
        `    return handle_${next}_${f}(order, total) if total < 0 else total`,
        '',
      );
    fs.writeFileSync(path.join(dir, `mod${i}.py`), lines.join('\n'));
  }
}

/**
 * Types `count` keys into the focused editor; for each, the time from the keydown event (its
 * timeStamp: when the browser received the key) to the frame painted after the editor's text
 * changed.
 */
async function typingLatencies(page, count) {
  await page.evaluate(() => {
    window.__oracleLag = [];
    if (window.__oracleLagInstalled) return;
    window.__oracleLagInstalled = true;
    document.addEventListener(
      'keydown',
      (event) => {
        const lines = document.querySelector('.monaco-editor.focused .view-lines');
        if (!lines) return;
        const observer = new MutationObserver(() => {
          observer.disconnect();
          requestAnimationFrame(() => window.__oracleLag.push(performance.now() - event.timeStamp));
        });
        observer.observe(lines, { subtree: true, childList: true, characterData: true });
      },
      true,
    );
  });
  for (let i = 0; i < count; i++) {
    await page.keyboard.type(String.fromCharCode(97 + (i % 26)));
    await page.waitForTimeout(60);
  }
  await page.waitForTimeout(300);
  return page.evaluate(() => window.__oracleLag.slice());
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
  return {
    n: sorted.length,
    median: Math.round(at(0.5)),
    p90: Math.round(at(0.9)),
    max: Math.round(sorted[sorted.length - 1] ?? NaN),
  };
}

async function typingLagDuringFirstIndex(page) {
  const root = path.join(path.dirname(FOLDER), 'lag');
  writeLagWorkspace(root);
  await page.goto(workbenchUrl({ port: PORT, folder: root, devPath: DEV }));
  await page.waitForSelector('.monaco-workbench', { timeout: TIMEOUT });
  await quickOpen(page, 'mod1.py');
  await page.locator('.monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+End');
  await page.keyboard.press('Enter');
  // the first index is running: the status bar says what it is doing
  await page.waitForFunction(
    (selector) => /Code Oracle:/.test(document.querySelector(selector)?.textContent ?? ''),
    STATUS_ITEM,
    { timeout: TIMEOUT },
  );
  const during = [];
  while (during.length < 60) {
    if (READY.test(await page.locator(STATUS_ITEM).innerText())) break;
    during.push(...(await typingLatencies(page, 10)));
  }
  log('status after typing:', JSON.stringify(await page.locator(STATUS_ITEM).innerText()));
  await page.waitForFunction(
    ({ selector, re }) => new RegExp(re).test(document.querySelector(selector)?.textContent ?? ''),
    { selector: STATUS_ITEM, re: READY.source },
    { timeout: 300000 },
  );
  const idle = await typingLatencies(page, 30);
  const busy = summary(during);
  const calm = summary(idle);
  console.log(
    `typing-lag: keypress-to-render during the first index of ${LAG_FILES} files: median ${busy.median} ms, p90 ${busy.p90} ms, max ${busy.max} ms (${busy.n} keys); idle: median ${calm.median} ms, p90 ${calm.p90} ms, max ${calm.max} ms (${calm.n} keys)`,
  );
  check(busy.n >= 10, `only ${busy.n} keys were measured while the index built`);
  check(calm.n >= 10, `only ${calm.n} keys were measured after the index was built`);
  await shot(page, 'typing-lag');
}

const STEPS = [
  ['reindex from the command palette', reindexFromPalette],
  ['chat: a cited answer with no model, and a citation that opens its line', askInChat],
  ['explain this error from the light bulb', explainFromLightBulb],
  ['a callers lens opens the callers tree, and a caller its call', callersFromLens],
  ['without a model, Thinking and Deep are disabled and say why', modesNeedAModel],
  ['New Chat empties the conversation', newChatClears],
  [
    'a diagram whose label holds <img onerror> is drawn as text, without links',
    hostileDiagramDrawnInert,
  ],
  ['typing lag while the first index of 2,000 files builds', typingLagDuringFirstIndex],
];

(async () => {
  const { browser, page } = await launchPage();
  const consoleErrors = [];
  // kept for the failure report; first lines only (offline, the gallery errors carry long stacks)
  page.on('console', (m) => {
    if (m.type() === 'error') consoleErrors.push(m.text().split('\n')[0].slice(0, 300));
  });
  page.on('pageerror', (e) =>
    consoleErrors.push(`pageerror: ${String(e).split('\n')[0].slice(0, 300)}`),
  );
  let passed = 0,
    failed = 0;
  try {
    await page.goto(workbenchUrl({ port: PORT, folder: FOLDER, devPath: DEV }));
    await page.waitForSelector('.monaco-workbench', { timeout: TIMEOUT });
    // The status-bar item exists only once the remote extension host has activated the extension
    // (onStartupFinished), and activation indexes the folder by itself: every step starts after that.
    await page.locator(STATUS_ITEM).waitFor({ timeout: TIMEOUT });
    await page.waitForFunction(
      ({ selector, re }) =>
        new RegExp(re).test(document.querySelector(selector)?.textContent ?? ''),
      { selector: STATUS_ITEM, re: READY.source },
      { timeout: TIMEOUT },
    );
    log('first index done:', JSON.stringify(await page.locator(STATUS_ITEM).innerText()));
    await shot(page, 'indexed');
  } catch (error) {
    await shot(page, 'failure-startup');
    console.error(`ui: FAILED before the first step: ${error.message}`);
    for (const e of consoleErrors.slice(-15)) console.error('  browser console error:', e);
    console.log(`ui: 0 passed, ${STEPS.length} failed`);
    await browser.close();
    process.exit(1);
  }
  for (const [name, step] of STEPS) {
    log(`step: ${name}`);
    try {
      await step(page);
      passed++;
      log(`  passed: ${name}`);
    } catch (error) {
      failed++;
      await shot(page, 'failure');
      console.error(`ui: FAILED: ${name}: ${error.message.split('\n')[0]}`);
      await page.keyboard.press('Escape').catch(() => undefined); // close a menu left open
    }
  }
  if (failed)
    for (const e of consoleErrors.slice(-15)) console.error('  browser console error:', e);
  console.log(`ui: ${passed} passed, ${failed} failed; screenshots in ${SHOTS}`);
  await browser.close();
  process.exit(failed ? 1 : 0);
})().catch((e) => {
  console.error('ui: FAILED:', e);
  console.log('ui: 0 passed, 1 failed');
  process.exit(1);
});
