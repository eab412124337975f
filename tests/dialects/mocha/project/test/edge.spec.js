const assert = require('node:assert');

// Outside any describe: Mocha puts it in the root suite.
it('top-level test without describe', function () {
  assert.ok(true);
});

describe('names: ünïcödé ✓ 日本語 | pipe `backtick` <script>alert(1)</script> & "quotes"', function () {
  it('emoji 🚀 and | pipes | in a title', function () {
    assert.ok(true);
  });

  it('``double backticks`` and <b>html</b> & &amp;', function () {
    assert.ok(true);
  });

  it('fails with markup in the message', function () {
    throw new Error('boom <script>alert("x")</script> | `tick` ]]> end of CDATA');
  });
});

describe('pending kinds', function () {
  it.skip('it.skip', function () {});
  it('it without a body');
  it('this.skip() at run time', function () {
    this.skip();
  });
  describe.skip('describe.skip', function () {
    it('inside a skipped describe', function () {});
  });
});

describe('timeouts', function () {
  it('times out', function (done) {
    this.timeout(50);
    setTimeout(done, 500);
  });
});
