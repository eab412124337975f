// Two jest-junit reporters in one run, so both XML files describe the same attempts:
//   junit.xml           - jest-junit defaults (what most projects get)
//   junit-file-attr.xml - addFileAttribute, reportTestSuiteErrors, includeConsoleOutput and
//                         the " › " separator from jest-junit's README example
// Options are given here, not by JEST_JUNIT_* variables, because those override every reporter.
module.exports = {
  testEnvironment: 'node',
  reporters: [
    'default',
    ['jest-junit', { outputDirectory: '<rootDir>/..', outputName: 'junit.xml' }],
    [
      'jest-junit',
      {
        outputDirectory: '<rootDir>/..',
        outputName: 'junit-file-attr.xml',
        addFileAttribute: 'true',
        reportTestSuiteErrors: 'true',
        includeConsoleOutput: 'true',
        ancestorSeparator: ' › ',
      },
    ],
  ],
};
