package transitions

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The layering rule: fsm is a leaf (stdlib and looplab/fsm), states imports
// only fsm, transitions only fsm and states. Test files are exempt.
func TestPackagesImportOnlyWhatTheLayeringAllows(t *testing.T) {
	const mod = "github.com/gluster/anthill/"
	allowed := map[string][]string{
		"../fsm":    {"github.com/looplab/fsm"},
		"../states": {mod + "fsm"},
		".":         {mod + "fsm", mod + "states"},
	}
	for dir, extra := range allowed {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no Go files in %s: %v", dir, err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			af, err := parser.ParseFile(token.NewFileSet(), f, src, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				p, _ := strconv.Unquote(imp.Path.Value)
				stdlib := !strings.Contains(strings.SplitN(p, "/", 2)[0], ".")
				ok := stdlib
				for _, a := range extra {
					ok = ok || p == a
				}
				if !ok {
					t.Errorf("%s imports %q, which its layer does not allow", f, p)
				}
			}
		}
	}
}
