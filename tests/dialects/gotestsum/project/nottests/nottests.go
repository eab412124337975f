// Package nottests has no test files.
package nottests

// Answer is here so the package is not empty.
const Answer = 42
