package architecture

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

type exportedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Export     string
	Module     *struct{ Path string }
}

// checkedPackage is one module package type-checked from source.
type checkedPackage struct {
	path  string
	fset  *token.FileSet
	files []*ast.File
	info  *types.Info
	pkg   *types.Package
}

// typeCheckModule type-checks, from source, the module's packages among
// pattern's dependencies that keep accepts, everything else imported from
// the compiler's export data (so the walk costs a build of pattern). One
// importer serves every package, so that all of them see the same types.
func typeCheckModule(t *testing.T, pattern string, keep func(path string) bool) (types.Importer, []checkedPackage) {
	t.Helper()
	cmd := exec.Command("go", "list", "-export", "-deps", "-json", pattern)
	cmd.Dir = repoRoot()
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export %s: %v", pattern, err)
	}
	exports := map[string]string{}
	var own []exportedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p exportedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		exports[p.ImportPath] = p.Export
		if p.Module != nil && p.Module.Path == module && keep(p.ImportPath) {
			own = append(own, p)
		}
	}

	fset := token.NewFileSet()
	imp := importer.ForCompiler(fset, "gc", func(path string) (io.ReadCloser, error) {
		f, ok := exports[path]
		if !ok || f == "" {
			return nil, fmt.Errorf("no export data for %s", path)
		}
		return os.Open(f)
	})
	var checked []checkedPackage
	for _, p := range own {
		if len(p.CgoFiles) > 0 {
			t.Fatalf("%s has cgo files, which this walk cannot type-check", p.ImportPath)
		}
		var files []*ast.File
		for _, name := range p.GoFiles {
			if strings.HasPrefix(name, "zz_generated") {
				continue
			}
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, name), nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, f)
		}
		info := &types.Info{
			Types:      map[ast.Expr]types.TypeAndValue{},
			Defs:       map[*ast.Ident]types.Object{},
			Uses:       map[*ast.Ident]types.Object{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
		}
		conf := types.Config{Importer: imp, Error: func(err error) { t.Errorf("type-check %s: %v", p.ImportPath, err) }}
		pkg, err := conf.Check(p.ImportPath, fset, files, info)
		if err != nil {
			t.Fatalf("type-check %s: %v", p.ImportPath, err)
		}
		checked = append(checked, checkedPackage{path: p.ImportPath, fset: fset, files: files, info: info, pkg: pkg})
	}
	return imp, checked
}
