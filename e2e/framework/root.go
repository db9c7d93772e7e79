package framework

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
)

// module is the project's module path.
const module = "github.com/gluster/anthill"

// RepoRoot is the repository's root directory: the nearest directory at or
// above the working directory whose go.mod declares the project's module.
// Tests run from their package's directory in a checkout. It does not use
// the source file's path, which -trimpath (make test builds with it, so a
// fresh clone reuses the build cache) reduces to the import path.
func RepoRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		panic("framework: no working directory: " + err.Error())
	}
	for {
		if declaresModule(filepath.Join(dir, "go.mod")) {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			panic("framework: no go.mod of " + module + " at or above the working directory")
		}
		dir = up
	}
}

// declaresModule reports whether the go.mod at path declares the project's
// module.
func declaresModule(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if fields := strings.Fields(s.Text()); len(fields) == 2 && fields[0] == "module" {
			return fields[1] == module
		}
	}
	return false
}
