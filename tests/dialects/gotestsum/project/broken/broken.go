// Package broken has a test file that does not compile.
package broken
