// Same top-level describe text and same test names as ../legacy/calc.test.js,
// but different outcomes: a reader that keys tests on (suite name, classname, name)
// alone merges the two files.
const add = (a, b) => a + b;

describe('Calculator', () => {
  test('adds', () => {
    expect(add(1, 2)).toBe(3);
  });

  test('divides by zero', () => {
    expect(1 / 0).toBe(0); // fails: Infinity
  });

  describe('nested', () => {
    test('adds', () => {
      expect(add(2, 2)).toBe(4);
    });

    describe('deeper', () => {
      test('adds', () => {
        expect(add(-1, 1)).toBe(0);
      });
    });
  });

  test.skip('skipped here, runs in legacy', () => {
    expect(true).toBe(true);
  });

  // Two cases with byte-identical names in the same describe: only their order differs.
  test.each([
    [1, 1, 2],
    [1, 1, 3],
  ])('add(%i, %i)', (a, b, expected) => {
    expect(add(a, b)).toBe(expected);
  });
});
