// The first test of this file is outside any describe, so jest-junit has no
// describe title to name the <testsuite> with.
test('top-level test without describe', () => {
  expect(1).toBe(1);
});

describe('names: ünïcödé ✓ 日本語 | pipe `backtick` <script>alert(1)</script> & "quotes"', () => {
  test('emoji 🚀 and | pipes | in a title', () => {
    expect(true).toBe(true);
  });

  test('``double backticks`` and <b>html</b> & &amp;', () => {
    expect(true).toBe(true);
  });

  test('fails with markup in the message', () => {
    throw new Error('boom <script>alert("x")</script> | `tick` ]]> end of CDATA');
  });
});

describe('pending kinds', () => {
  test.skip('test.skip', () => {});
  test.todo('test.todo: written later');
  describe.skip('describe.skip', () => {
    test('inside a skipped describe', () => {});
  });
  // test.failing passes when its body throws (Jest's expected failure).
  test.failing('test.failing whose body throws', () => {
    throw new Error('expected to fail');
  });
  test.failing('test.failing whose body passes', () => {
    expect(1).toBe(1);
  });
});
