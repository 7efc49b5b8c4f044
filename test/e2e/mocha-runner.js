// Runs one folder's *.test.js with mocha inside the extension host; each suite's index.js (the
// payload's extensionTestsPath) calls it. VS Code's convention: run() resolves when the tests pass
// and rejects when any fails.
//
// Mocha comes from the e2e tools folder, by absolute path: the extension host resolves bare
// `require('mocha')` from this file, and the repository's own devDependencies need not be installed.
// run.sh passes both paths through code-server's environment, which the extension host inherits.
const fs = require('fs');
const path = require('path');
const util = require('util');

const ROOT = path.resolve(__dirname, '..', '..');
const MOCHA = process.env.E2E_MOCHA || path.join(ROOT, '.tools', 'driver', 'node_modules', 'mocha');
const RESULTS = process.env.E2E_RESULTS;

/** `stage` names the summary line ("<stage>: N passed, N failed") run.sh counts. */
function runSuite(folder, stage) {
  const Mocha = require(MOCHA);
  const lines = [];
  // The spec reporter prints through Base.consoleLog: keep a copy, written to a file run.sh prints
  // (the extension host's console goes to the browser, which is harder to read in CI).
  Mocha.reporters.Base.consoleLog = (...args) => {
    const line = util.format(...args);
    lines.push(line);
    console.log(line);
  };
  const mocha = new Mocha({ ui: 'tdd', timeout: 60000, color: false, reporter: 'spec' });
  for (const file of fs.readdirSync(folder).sort()) {
    if (file.endsWith('.test.js')) mocha.addFile(path.join(folder, file));
  }
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const { passes, failures: failed, pending } = runner.stats;
      Mocha.reporters.Base.consoleLog(
        `extension host: pid ${process.pid}, node ${process.version}`,
      );
      Mocha.reporters.Base.consoleLog(
        `${stage}: ${passes} passed, ${failed} failed, ${pending} skipped`,
      );
      if (RESULTS) fs.writeFileSync(RESULTS, lines.join('\n') + '\n');
      if (failures > 0) reject(new Error(`${failures} extension-host tests failed`));
      else resolve();
    });
  });
}

module.exports = { runSuite };
