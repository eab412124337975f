// this.retries(n): Mocha reruns a failed test up to n more times; only the final attempt reaches
// the reporters ('pass' or 'fail'), so the xunit reporter writes one <testcase> per test.
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
