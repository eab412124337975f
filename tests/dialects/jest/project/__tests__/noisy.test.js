describe('noisy', () => {
  test('prints a lot to stdout', () => {
    // Jest captures console.* per call, with the caller's stack; keep the calls few, the text long.
    for (let i = 0; i < 20; i += 1) {
      console.log(`call ${i}`);
    }
    const block = Array.from({ length: 3000 }, (_, i) => `line ${i}: ${'x'.repeat(60)}`).join('\n');
    console.log(block);
    process.stdout.write('raw process.stdout.write: not captured by Jest\n');
    expect(true).toBe(true);
  });
});
