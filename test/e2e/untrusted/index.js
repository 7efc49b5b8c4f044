// The test runner VS Code loads inside the extension host (the payload's extensionTestsPath) for
// stage (c): every *.test.js of this folder, in a workspace opened in Restricted Mode.
const { runSuite } = require('../mocha-runner');

exports.run = () => runSuite(__dirname, 'untrusted');
