// Shared by the two drivers: launching Debian's Chromium through playwright-core and building the
// workbench URL that loads this repository as an extension under development.
const { chromium } = require('playwright-core'); // found through NODE_PATH=<tools>/driver/node_modules

const t0 = Date.now();
/** console.log with seconds since the driver started, so slow steps stand out in CI logs. */
function log(...args) {
  console.log(`[${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...args);
}

/** playwright-core never downloads a browser: it drives the system's /usr/bin/chromium. */
async function launchPage() {
  const browser = await chromium.launch({
    executablePath: process.env.E2E_CHROMIUM || '/usr/bin/chromium',
    headless: true,
    // --no-sandbox: we run as root; the rest keeps Chromium from calling home (there is no network)
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const page = await (
    await browser.newContext({ viewport: { width: 1400, height: 850 } })
  ).newPage();
  return { browser, page };
}

/**
 * `payload` is how a window is told to run an extension under development (and its tests): the
 * workbench reads it only when built with the smoke-test driver on (`--vscode-option
 * enable-smoke-test-driver`). Paths are `vscode-remote://` URIs: the extension host runs on the
 * code-server side, which is this machine, so they are plain local paths there.
 */
function workbenchUrl({ port, folder, devPath, testsPath }) {
  const authority = `127.0.0.1:${port}`;
  const remote = (p) => `vscode-remote://${authority}${p}`;
  const payload = [['extensionDevelopmentPath', remote(devPath)]];
  if (testsPath) payload.push(['extensionTestsPath', remote(testsPath)]);
  return `http://${authority}/?folder=${encodeURIComponent(folder)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;
}

/** Reads a required environment variable (run.sh sets them all). */
function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (run through scripts/e2e/run.sh)`);
  return value;
}

module.exports = { launchPage, workbenchUrl, log, env };
