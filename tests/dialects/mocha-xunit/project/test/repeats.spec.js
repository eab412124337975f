// Tests that share a title in one describe, as real suites have them (latex-utensils' parser
// tests have two tests titled 'parse entry with command' with different bodies). Mocha runs and
// counts each; its xunit reporter writes each as a <testcase> with the same classname and name.
const assert = require('node:assert');

describe('parser', function () {
  it('parse entry with command', function () {
    assert.strictEqual('\\command{aaa}'.length, 13);
  });

  it('parse entry with command', function () {
    assert.strictEqual('\\$\\%'.length, 4);
  });

  it('parse \\url', function () {
    assert.ok(true);
  });

  it('parse \\url', function () {
    assert.ok(true);
  });

  it('parse \\url', function () {
    assert.ok(true);
  });

  // The same title, the first one failing: two tests, not a retry.
  it('parse unbalanced \\begin', function () {
    assert.strictEqual('\\begin{a}'.indexOf('\\end'), 0, 'no \\end');
  });

  it('parse unbalanced \\begin', function () {
    assert.ok(true);
  });
});

describe('parser 2', function () {
  it('parse entry with command', function () {
    assert.ok(true);
  });
});
