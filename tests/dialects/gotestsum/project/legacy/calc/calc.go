// Package calc is the code under test; legacy/calc has the same package name and test names.
package calc

// Add returns a + b.
func Add(a, b int) int { return a + b }

// Div returns a / b.
func Div(a, b int) int { return a / b }
