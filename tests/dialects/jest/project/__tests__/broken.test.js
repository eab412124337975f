// Throws while the file loads: Jest reports "Test suite failed to run" and no tests.
throw new Error('cannot load this test file');
