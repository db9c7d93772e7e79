package e2e

import (
	"path/filepath"
	"runtime"
	"testing"
)

// repoRoot is the repository's root directory, one level above this
// package.
func repoRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate the test file")
	}
	return filepath.Dir(filepath.Dir(file))
}
