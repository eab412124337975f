package calc

import "testing"

func TestAdd(t *testing.T) {
	if Add(1, 2) != 3 {
		t.Fatal("1+2 != 3")
	}
}

func TestDivide(t *testing.T) {
	if got := Div(7, 2); got != 4 {
		t.Errorf("Div(7, 2) = %d, want 4", got) // fails here, passes in legacy/calc
	}
}

// Same subtest name "zero" under two parents, and nested subtests.
func TestTable(t *testing.T) {
	t.Run("zero", func(t *testing.T) {
		if Add(0, 0) != 0 {
			t.Fatal("0+0")
		}
	})
	t.Run("negative", func(t *testing.T) {
		if Add(-1, -1) != -3 {
			t.Error("-1 + -1 is -2, this subtest fails and so does TestTable")
		}
	})
}

func TestOther(t *testing.T) {
	t.Run("zero", func(t *testing.T) {
		t.Skip("skipped subtest with the same name as TestTable/zero")
	})
	t.Run("outer", func(t *testing.T) {
		t.Run("inner", func(t *testing.T) {})
		t.Run("inner", func(t *testing.T) {}) // go test renames the second copy inner#01
	})
}
