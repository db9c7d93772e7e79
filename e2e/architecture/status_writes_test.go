package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// statusWriters is the one file whose code may write a status: the
// machines' status writers (see engine.StatusWriter). Actions, gatherers
// and the commands change the world; only a machine's runner, through its
// writer, changes its status.
const statusWriters = "kube/machines/machinestatus/status_writers.go"

// otherStatusWriters write the status of objects that are not anthill's
// own custom resources, each with the reason.
var otherStatusWriters = map[string]string{
	"kube/storageversion/migrate.go": "the storage migration trims a CustomResourceDefinition's status.storedVersions",
	"e2e/framework/node_loss.go":     "the test harness reports a restored kwok node's pods Ready, as their kubelet would",
}

func TestOnlyTheStatusWritersWriteStatus(t *testing.T) {
	root := repoRoot()
	fset := token.NewFileSet()
	var sites []string
	found := 0
	// Generated clients define UpdateStatus; they do not call it.
	skip := func(rel string) bool { return rel == "kube/client" || rel == "tools" }
	err := walkGoFiles(root, skip, func(path, rel string) error {
		if strings.HasSuffix(rel, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "UpdateStatus" {
				if rel == statusWriters {
					found++
				} else if _, ok := otherStatusWriters[rel]; !ok {
					sites = append(sites, fset.Position(call.Pos()).String())
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sites {
		t.Errorf("status written outside %s: %s", statusWriters, s)
	}
	if found == 0 {
		t.Errorf("%s writes no status: the check no longer looks at the writers", statusWriters)
	}
}
