package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const enginePath = module + "/kube/engine"

// TestEverySyncerSaysItsPhases holds that each machine room's Syncer says
// at compile time (var _ engine.X[...] = (*Syncer)(nil)) every optional
// phase the runner finds on it by a type assertion: a reader of the room
// sees which phases the machine has without reading the runner, and a
// method that makes a syncer implement a phase by accident (an embedded
// type's) is named.
func TestEverySyncerSaysItsPhases(t *testing.T) {
	phases := runnerPhases(t)
	if len(phases) < 5 {
		t.Fatalf("the runner asserts only %v on a syncer: the walk of kube/engine is broken", phases)
	}
	imp, rooms := typeCheckModule(t, "./kube/machines/...", func(path string) bool {
		return strings.HasPrefix(path, module+"/kube/machines/") && !testOnly(path)
	})
	engine, err := imp.Import(enginePath)
	if err != nil {
		t.Fatal(err)
	}
	syncers := 0
	for _, room := range rooms {
		tn, ok := room.pkg.Scope().Lookup("Syncer").(*types.TypeName)
		if !ok {
			continue
		}
		syncers++
		ptr := types.NewPointer(tn.Type())
		args := syncerTypeArgs(t, room.path, ptr)
		said := saidImplemented(room)
		for _, name := range phases {
			iface := instantiate(t, engine, name, args)
			if !types.Implements(ptr, iface.Underlying().(*types.Interface)) {
				continue
			}
			if !slices.ContainsFunc(said, func(s types.Type) bool { return types.Identical(s, iface) }) {
				t.Errorf("%s: Syncer implements engine.%s, which the runner looks for, but does not say so: add `_ %s = (*Syncer)(nil)`",
					room.path, name, types.TypeString(iface, (*types.Package).Name))
			}
		}
	}
	if syncers < 5 {
		t.Errorf("found only %d machine syncers under kube/machines", syncers)
	}
}

// runnerPhases are the engine's interfaces the runner looks for on a
// syncer: the interfaces kube/engine declares and asserts a value to.
func runnerPhases(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(repoRoot(), "kube", "engine")
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var asserted []string
	declared := map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok {
				if _, ok := ts.Type.(*ast.InterfaceType); ok {
					declared[ts.Name.Name] = true
				}
			}
			ta, ok := n.(*ast.TypeAssertExpr)
			if !ok || ta.Type == nil {
				return true
			}
			typ := ta.Type
			switch x := typ.(type) {
			case *ast.IndexExpr:
				typ = x.X
			case *ast.IndexListExpr:
				typ = x.X
			}
			if id, ok := typ.(*ast.Ident); ok {
				asserted = append(asserted, id.Name)
			}
			return true
		})
	}
	var names []string
	for _, name := range asserted {
		if declared[name] && !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// syncerTypeArgs are the object and facts types a syncer runs on, read off
// its Record(o O, outs []engine.Outcome[F], now).
func syncerTypeArgs(t *testing.T, room string, syncer types.Type) []types.Type {
	t.Helper()
	obj, _, _ := types.LookupFieldOrMethod(syncer, true, nil, "Record")
	fn, ok := obj.(*types.Func)
	if !ok {
		t.Fatalf("%s: Syncer has no Record method", room)
	}
	params := fn.Type().(*types.Signature).Params()
	outs, ok := params.At(1).Type().(*types.Slice)
	if !ok {
		t.Fatalf("%s: Record's second parameter is not a slice of outcomes", room)
	}
	named, ok := outs.Elem().(*types.Named)
	if !ok || named.TypeArgs().Len() != 1 {
		t.Fatalf("%s: Record's outcomes are not engine.Outcome[F]", room)
	}
	return []types.Type{params.At(0).Type(), named.TypeArgs().At(0)}
}

// instantiate is the engine's interface name at the syncer's object and
// facts types, as many of them as it takes.
func instantiate(t *testing.T, engine *types.Package, name string, args []types.Type) types.Type {
	t.Helper()
	tn, ok := engine.Scope().Lookup(name).(*types.TypeName)
	if !ok {
		t.Fatalf("engine.%s is not a type", name)
	}
	named := tn.Type().(*types.Named)
	n := named.TypeParams().Len()
	if n == 0 {
		return named
	}
	inst, err := types.Instantiate(nil, named, args[:n], true)
	if err != nil {
		t.Fatalf("instantiate engine.%s: %v", name, err)
	}
	return inst
}

// saidImplemented are the types of a room's package-level `var _ T = ...`
// declarations.
func saidImplemented(room checkedPackage) []types.Type {
	var out []types.Type
	for _, f := range room.files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.VAR {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Type != nil && len(vs.Names) == 1 && vs.Names[0].Name == "_" {
					out = append(out, room.info.Types[vs.Type].Type)
				}
			}
		}
	}
	return out
}
