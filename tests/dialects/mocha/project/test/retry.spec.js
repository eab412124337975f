// this.retries(n): Mocha reruns a failed test up to n more times; only the final attempt is
// reported to reporters ('pass' or 'fail'), earlier attempts emit only a 'retry' event.
const assert = require('node:assert');

let flakyCalls = 0;
let alwaysCalls = 0;

describe('retries', function () {
  this.retries(2);

  it('fails once, then passes on retry', function () {
    flakyCalls += 1;
    assert.ok(flakyCalls > 1, `attempt ${flakyCalls}`);
  });

  it('fails on every attempt', function () {
    alwaysCalls += 1;
    assert.strictEqual(`attempt ${alwaysCalls}`, 'never');
  });

  it('passes first time', function () {
    assert.ok(true);
  });
});
