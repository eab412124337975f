// Mocha does not capture output; mocha-junit-reporter writes test.consoleOutputs as
// <system-out> when its "outputs" option is on (see its README).
const assert = require('node:assert');

describe('noisy', function () {
  it('prints a lot to stdout', function () {
    const lines = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'x'.repeat(60)}`);
    this.test.consoleOutputs = lines;
    this.test.consoleErrors = ['one line on stderr'];
    process.stdout.write(`${lines.length} lines written to test.consoleOutputs\n`);
    assert.ok(true);
  });
});
