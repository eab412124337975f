// Every test passes, but afterAll throws: Jest fails the file, and jest-junit
// adds a made-up <testcase> for the hook failure.
describe('hooks', () => {
  afterAll(() => {
    throw new Error('afterAll hook failed');
  });

  test('passes before a failing afterAll', () => {
    expect(true).toBe(true);
  });
});
