package calc

import "testing"

// Same package name (calc) and test names as example.com/dialect/calc, other outcomes.

func TestAdd(t *testing.T) {
	if Add(1, 2) != 4 {
		t.Fatal("1+2 is 3: TestAdd fails here, passes in the other calc")
	}
}

func TestDivide(t *testing.T) {
	if got := Div(7, 2); got != 3 {
		t.Errorf("Div(7, 2) = %d, want 3", got)
	}
}

func TestTable(t *testing.T) {
	t.Run("zero", func(t *testing.T) {})
}
