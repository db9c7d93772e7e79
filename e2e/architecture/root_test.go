package architecture

import (
	"path/filepath"
	"runtime"
)

// module is the project's module path.
const module = "github.com/gluster/anthill"

// repoRoot is the repository's root directory, two levels above this
// package.
func repoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}
