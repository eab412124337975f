// A failing beforeEach hook: Mocha reports the hook as one failure and does not run
// (nor count) the remaining tests of the describe.
const assert = require('node:assert');

describe('hooks', function () {
  let calls = 0;
  beforeEach(function () {
    calls += 1;
    if (calls === 2) {
      throw new Error('beforeEach failed on the second test');
    }
  });

  it('first test runs', function () {
    assert.ok(true);
  });

  it('second test never runs', function () {
    assert.ok(true);
  });

  it('third test never runs', function () {
    assert.ok(true);
  });
});
