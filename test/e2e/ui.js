// Stage (a): drives the real workbench like a person would. Opens the workspace with this repository
// loaded as an extension under development, waits for Code Oracle's status-bar item, runs
// "Code Oracle: Reindex Workspace" from the command palette and checks that the status bar ends up
// showing the index ("<N> files · <M> chunks", see src/extension/status.ts).
const fs = require('fs');
const path = require('path');
const { launchPage, workbenchUrl, log, env } = require('./workbench');

const PORT = env('E2E_PORT');
const FOLDER = env('E2E_WS_UI');          // a scratch copy of test/fixtures/shop-py
const DEV = env('E2E_EXT_DEV_PATH');      // the repository root
const SHOTS = env('E2E_SHOTS');
const TIMEOUT = 90000;
// IndexStatus.ready(): `$(database) ${files} files · ${chunks} chunks`; the codicon renders as an icon
const READY = /(\d+) files · (\d+) chunks/;
const PALETTE_LABEL = 'Code Oracle: Reindex Workspace'; // category + title from package.json

fs.mkdirSync(SHOTS, { recursive: true });
const shot = (page, name) => page.screenshot({ path: path.join(SHOTS, name) }).catch(() => undefined);

(async () => {
  const { browser, page } = await launchPage();
  const consoleErrors = [];
  // kept for the failure report; first lines only (offline, the gallery errors carry long stacks)
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text().split('\n')[0].slice(0, 300)); });
  page.on('pageerror', (e) => consoleErrors.push(`pageerror: ${String(e).split('\n')[0].slice(0, 300)}`));
  // The item's id is `<extension id>.<item id>`: code-oracle.code-oracle.codeOracle.status
  const item = page.locator('.statusbar-item[id$="codeOracle.status"]');
  try {
    await page.goto(workbenchUrl({ port: PORT, folder: FOLDER, devPath: DEV }));
    await page.waitForSelector('.monaco-workbench', { timeout: TIMEOUT });
    log('workbench DOM present');

    // The status-bar item exists only once the remote extension host has activated the extension
    // (onStartupFinished). Until then the palette may not list our commands, or list them before
    // they can run: so the item, not the workbench, is the signal that the extension is there.
    await item.waitFor({ timeout: TIMEOUT });
    log('status-bar item present:', JSON.stringify(await item.innerText()));
    // Activation indexes the folder once by itself; let that finish so the reindex below is ours.
    await page.waitForFunction((re) => {
      const el = document.querySelector('.statusbar-item[id$="codeOracle.status"]');
      return el && new RegExp(re).test(el.textContent);
    }, READY.source, { timeout: TIMEOUT });
    log('first index done:', JSON.stringify(await item.innerText()));
    await shot(page, '01-indexed.png');

    // Record every text the item shows from now on, to prove the command really re-ran the index
    // (with nothing changed on disk it is quick, and the end state looks the same as the start).
    await page.evaluate(() => {
      const el = document.querySelector('.statusbar-item[id$="codeOracle.status"]');
      window.__oracleTexts = [];
      new MutationObserver(() => window.__oracleTexts.push(el.textContent))
        .observe(el, { subtree: true, childList: true, characterData: true });
    });

    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { timeout: 15000 });
    await page.keyboard.type(PALETTE_LABEL);
    await page.locator('.quick-input-list .monaco-list-row', { hasText: PALETTE_LABEL }).first().waitFor({ timeout: 15000 });
    await shot(page, '02-palette.png');
    await page.keyboard.press('Enter');
    log('command submitted');

    // Done when the item went through an indexing state and is back to showing the index.
    const texts = await page.waitForFunction((re) => {
      const seen = window.__oracleTexts;
      const last = seen[seen.length - 1];
      return seen.some((t) => t.includes('Code Oracle:')) && last && new RegExp(re).test(last) && seen;
    }, READY.source, { timeout: TIMEOUT }).then((h) => h.jsonValue());
    log('status-bar texts after the command:', JSON.stringify([...new Set(texts)]));

    const final = await item.innerText();
    const m = READY.exec(final);
    if (!m) throw new Error(`status bar ended as ${JSON.stringify(final)}`);
    const files = +m[1];
    const expected = fs.readdirSync(path.join(FOLDER, 'shop')).filter((f) => f.endsWith('.py')).length;
    if (files !== expected) throw new Error(`status bar shows ${files} files, the workspace has ${expected}`);
    if (+m[2] < files) throw new Error(`status bar shows fewer chunks than files: ${final}`);
    await shot(page, '03-reindexed.png');
    log(`status bar: ${JSON.stringify(final)}; screenshots in ${SHOTS}`);
    console.log('ui: 1 passed, 0 failed');
    await browser.close();
  } catch (error) {
    await shot(page, '99-ui-failure.png');
    const text = await item.innerText({ timeout: 1000 }).catch(() => '(no status-bar item)');
    const tooltip = await item.getAttribute('aria-label', { timeout: 1000 }).catch(() => '');
    console.error(`ui: FAILED: ${error.message}\n  status bar: ${JSON.stringify(text)} (${tooltip})`);
    for (const e of consoleErrors.slice(-15)) console.error('  browser console error:', e);
    console.log('ui: 0 passed, 1 failed');
    await browser.close();
    process.exit(1);
  }
})().catch((e) => { console.error('ui: FAILED:', e); process.exit(1); });
