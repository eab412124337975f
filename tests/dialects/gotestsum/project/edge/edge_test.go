package edge

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestSkipped(t *testing.T) {
	t.Skip("not on this platform")
}

// Subtest names: go test turns spaces into underscores and keeps the rest.
func TestNames(t *testing.T) {
	for _, name := range []string{
		"ünïcödé ✓ 日本語",
		"pipe | pipe",
		"`backtick`",
		"<script>alert(1)</script> & \"quotes\"",
	} {
		t.Run(name, func(t *testing.T) {})
	}
	t.Run("fails <b>with</b> | markup", func(t *testing.T) {
		t.Error("boom <script>alert(\"x\")</script> | `tick` ]]> end of CDATA")
	})
}

func TestNoisy(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		fmt.Fprintf(&b, "line %d: %s\n", i, strings.Repeat("x", 60))
	}
	fmt.Print(b.String())
	t.Log("and one t.Log line")
}

// Passes on the second run only: the first run leaves a marker file in $FLAKY_MARKER_DIR.
// Without that variable it always passes (a plain go test run).
func TestFlaky(t *testing.T) {
	dir := os.Getenv("FLAKY_MARKER_DIR")
	if dir == "" {
		return
	}
	marker := dir + "/edge.TestFlaky"
	if _, err := os.Stat(marker); err != nil {
		if err := os.WriteFile(marker, []byte("failed once\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Fatal("first attempt fails")
	}
}
