package architecture

import (
	"path/filepath"
)

// module is the project's module path.
const module = "github.com/gluster/anthill"

// repoRoot is the repository's root directory, two levels above this
// package's, where go test runs its tests. Not the source file's path, which
// -trimpath (make test builds with it) reduces to the import path.
func repoRoot() string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return root
}
