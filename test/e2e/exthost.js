// Stages (b) and (c): opens a workbench window whose payload names both the extension under
// development and a test runner (extensionTestsPath): `node exthost.js [suite]` runs
// test/e2e/<suite>/index.js (default `exthost`) on the folder in E2E_WS_<SUITE>. VS Code loads that
// runner inside the real (Node, server-side) extension host and calls its run(); the browser is
// only the window. When run() settles the workbench reports the exit code through
// window.codeAutomationExit, and test output through window.codeAutomationLog, the functions VS
// Code's own smoke-test driver provides and that we expose here with page.exposeFunction.
const fs = require('fs');
const path = require('path');
const { launchPage, workbenchUrl, log, env } = require('./workbench');

const SUITE = process.argv[2] || 'exthost';
const PORT = env('E2E_PORT');
const FOLDER = env(`E2E_WS_${SUITE.toUpperCase()}`);
const DEV = env('E2E_EXT_DEV_PATH');
const TESTS = path.join(__dirname, SUITE, 'index.js');
const SHOTS = env('E2E_SHOTS');
const CONSOLE_LOG = env('E2E_BROWSER_LOG');
const TIMEOUT = 180000;

(async () => {
  const { browser, page } = await launchPage();
  let settle;
  const exited = new Promise((resolve) => (settle = resolve));
  // Everything the workbench and extension host print (gallery lookups failing offline, stack
  // traces...) goes to a file; the suite's own results come back through E2E_RESULTS (index.js).
  const browserLog = fs.createWriteStream(CONSOLE_LOG);
  await page.exposeFunction('codeAutomationLog', (type, args) =>
    browserLog.write(`[automation ${type}] ${(args || []).join(' ')}\n`),
  );
  await page.exposeFunction('codeAutomationExit', (code) => {
    log('codeAutomationExit', code);
    settle(code);
  });
  page.on('console', (m) => browserLog.write(`[${m.type()}] ${m.text()}\n`));
  page.on('pageerror', (e) => browserLog.write(`[pageerror] ${e}\n`));

  await page.goto(workbenchUrl({ port: PORT, folder: FOLDER, devPath: DEV, testsPath: TESTS }));
  log('workbench opened; waiting for the extension-host suite');
  const code = await Promise.race([
    exited,
    new Promise((resolve) => setTimeout(() => resolve('timeout'), TIMEOUT)),
  ]);
  fs.mkdirSync(SHOTS, { recursive: true });
  if (code !== 0)
    await page
      .screenshot({ path: path.join(SHOTS, `99-${SUITE}-failure.png`) })
      .catch(() => undefined);
  // (taken after the suite: the extension host is shutting down, so Code Oracle's item is gone)
  else
    await page
      .screenshot({ path: path.join(SHOTS, `04-${SUITE}-after-suite.png`) })
      .catch(() => undefined);
  await browser.close();
  log(`extension-host suite ${SUITE} exit code:`, code);
  process.exit(code === 0 ? 0 : 1);
})().catch((e) => {
  console.error(`${SUITE}: FAILED:`, e);
  process.exit(1);
});
