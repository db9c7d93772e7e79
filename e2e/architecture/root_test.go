package architecture

import (
	"io/fs"
	"path/filepath"
	"strings"
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

// walkGoFiles calls visit with each Go file below root, by its path and by
// its slash-separated path relative to root, leaving out dot directories
// and the directories skipDir names (by that relative path).
func walkGoFiles(root string, skipDir func(rel string) bool, visit func(path, rel string) error) error {
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || skipDir(rel)) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") {
			return nil
		}
		return visit(path, rel)
	})
}
