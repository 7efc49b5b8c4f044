// The test runner VS Code loads inside the extension host (the payload's extensionTestsPath) for
// stage (b): every *.test.js of this folder, in a trusted workspace.
const { runSuite } = require('../mocha-runner');

exports.run = () => runSuite(__dirname, 'exthost');
