// Same top-level describe text and test titles as ../legacy/calc.spec.js, with
// different outcomes: only the file attribute of <testsuite> tells the two apart.
const assert = require('node:assert');

const add = (a, b) => a + b;

describe('Calculator', function () {
  it('adds', function () {
    assert.strictEqual(add(1, 2), 3);
  });

  it('divides by zero', function () {
    assert.strictEqual(1 / 0, 0); // fails: Infinity
  });

  describe('nested', function () {
    it('adds', function () {
      assert.strictEqual(add(2, 2), 4);
    });

    describe('deeper', function () {
      it('adds', function () {
        assert.strictEqual(add(-1, 1), 0);
      });
    });
  });

  // Two tests with byte-identical titles in one describe: only their order differs.
  it('same title twice', function () {
    assert.ok(true);
  });
  it('same title twice', function () {
    assert.fail('second copy fails');
  });
});
