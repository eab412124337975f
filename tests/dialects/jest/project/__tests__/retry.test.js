// jest.retryTimes: Jest reruns a failed test up to N more times and reports only
// the last attempt's status; earlier failure messages are kept.
jest.retryTimes(2);

let flakyCalls = 0;
let alwaysCalls = 0;

describe('retries', () => {
  test('fails once, then passes on retry', () => {
    flakyCalls += 1;
    expect(flakyCalls).toBeGreaterThan(1);
  });

  test('fails on every attempt', () => {
    alwaysCalls += 1;
    expect(`attempt ${alwaysCalls}`).toBe('never');
  });

  test('passes first time', () => {
    expect(true).toBe(true);
  });
});
