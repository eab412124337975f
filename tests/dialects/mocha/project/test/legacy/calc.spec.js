// See ../calc/calc.spec.js: same describe and test titles, other outcomes.
const assert = require('node:assert');

const add = (a, b) => a + b;

describe('Calculator', function () {
  it('adds', function () {
    assert.strictEqual(add(1, 2), 3);
  });

  it('divides by zero', function () {
    assert.strictEqual(1 / 0, Infinity); // passes here
  });

  describe('nested', function () {
    it('adds', function () {
      assert.strictEqual(add(2, 2), 5); // fails here
    });
  });
});
