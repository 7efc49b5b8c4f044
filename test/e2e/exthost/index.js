// The test runner VS Code loads inside the extension host (the payload's extensionTestsPath).
// VS Code's convention: export run(), resolve when the tests pass, reject when any fails.
//
// Mocha comes from the e2e tools folder, by absolute path: the extension host resolves bare
// `require('mocha')` from this file, and the repository's own devDependencies need not be installed.
// run.sh passes both paths through code-server's environment, which the extension host inherits.
const fs = require('fs');
const path = require('path');
const util = require('util');

const ROOT = path.resolve(__dirname, '..', '..', '..');
const MOCHA = process.env.E2E_MOCHA || path.join(ROOT, '.tools', 'driver', 'node_modules', 'mocha');
const RESULTS = process.env.E2E_RESULTS;

exports.run = function run() {
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
  for (const file of fs.readdirSync(__dirname).sort()) {
    if (file.endsWith('.test.js')) mocha.addFile(path.join(__dirname, file));
  }
  return new Promise((resolve, reject) => {
    const runner = mocha.run((failures) => {
      const { passes, failures: failed, pending } = runner.stats;
      Mocha.reporters.Base.consoleLog(
        `extension host: pid ${process.pid}, node ${process.version}`,
      );
      Mocha.reporters.Base.consoleLog(
        `exthost: ${passes} passed, ${failed} failed, ${pending} skipped`,
      );
      if (RESULTS) fs.writeFileSync(RESULTS, lines.join('\n') + '\n');
      if (failures > 0) reject(new Error(`${failures} extension-host tests failed`));
      else resolve();
    });
  });
};
