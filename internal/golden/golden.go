// Package golden compares test output with checked-in golden files, and rewrites them when a test
// runs with -update after a deliberate change (review the diff before committing it).
package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// Compare fails t when the file at path does not hold got; with update it writes got there instead.
func Compare(t testing.TB, path, got string, update bool) {
	t.Helper()
	if update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file %s (go test -update creates it): %v", path, err)
	}
	if string(want) != got {
		t.Errorf("output differs from %s (review, then rerun with -update):\n--- want\n%s\n--- got\n%s", path, want, got)
	}
}
