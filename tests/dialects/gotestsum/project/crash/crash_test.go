package crash

import "testing"

func TestBeforePanic(t *testing.T) {}

// A panic ends the package's test binary: TestAfterPanic never runs.
func TestPanics(t *testing.T) {
	var m map[string]int
	m["boom"] = 1
}

func TestAfterPanic(t *testing.T) {}
