package framework

import (
	"path/filepath"
	"runtime"
)

// RepoRoot is the repository's root directory, two levels above this
// package's source: the tests run from a checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}
