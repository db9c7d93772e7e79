package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
	imp, rooms := machineRooms(t)
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

var (
	machineRoomsOnce sync.Once
	machineRoomsImp  types.Importer
	machineRoomsPkgs []checkedPackage
)

// machineRooms are the packages below kube/machines, type-checked from
// source once for every test that reads them.
func machineRooms(t *testing.T) (types.Importer, []checkedPackage) {
	t.Helper()
	machineRoomsOnce.Do(func() {
		machineRoomsImp, machineRoomsPkgs = typeCheckModule(t, "./kube/machines/...", func(path string) bool {
			return strings.HasPrefix(path, module+"/kube/machines/") && !testOnly(path)
		})
	})
	if machineRoomsImp == nil {
		t.Fatal("the machine rooms could not be type-checked")
	}
	return machineRoomsImp, machineRoomsPkgs
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

// afterGather are the syncer methods that run once the facts are
// gathered: they read the facts and never write them. What an action
// learns is returned on the outcome (engine.Outcome.Learned).
var afterGather = []string{"Decide", "Act", "Message", "Record", "Finish"}

// TestFactsAreReadOnlyAfterGather fails for an assignment, in a syncer's
// phase after gathering, to anything reached through its facts: a later
// phase would read what an earlier one wrote, a side door around the
// runner.
func TestFactsAreReadOnlyAfterGather(t *testing.T) {
	_, rooms := machineRooms(t)
	checked := 0
	for _, room := range rooms {
		tn, ok := room.pkg.Scope().Lookup("Syncer").(*types.TypeName)
		if !ok {
			continue
		}
		facts := syncerTypeArgs(t, room.path, types.NewPointer(tn.Type()))[1]
		for _, f := range room.files {
			for _, decl := range f.Decls {
				fn, ok := decl.(*ast.FuncDecl)
				if !ok || fn.Recv == nil || fn.Body == nil || !slices.Contains(afterGather, fn.Name.Name) || !receives(room, fn, tn) {
					continue
				}
				checked++
				for _, pos := range factWrites(room.info, fn.Body, facts) {
					t.Errorf("%s: %s writes the facts after gathering (%s): return what the phase learned instead",
						room.path, fn.Name.Name, room.fset.Position(pos))
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("checked only %d phases of the machine syncers", checked)
	}
}

func TestFactWritesFindsPlantedWrites(t *testing.T) {
	const src = `package p

type facts struct {
	n    int
	list []int
	sub  struct{ m map[string]int }
}

type instance struct{ Facts *facts }

func act(in instance, other *facts) {
	f := in.Facts
	in.Facts.n = 1             // a write
	f.list = append(f.list, 1) // a write
	f.sub.m["a"] = 2           // a write
	f.n++                      // a write
	f = other                  // not one: the variable, not the facts
	n := f.n                   // not one: a read
	_ = n
}
`
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "p.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Types: map[ast.Expr]types.TypeAndValue{}, Defs: map[*ast.Ident]types.Object{}, Uses: map[*ast.Ident]types.Object{}}
	pkg, err := (&types.Config{}).Check("p", fset, []*ast.File{file}, info)
	if err != nil {
		t.Fatal(err)
	}
	facts := types.NewPointer(pkg.Scope().Lookup("facts").Type())
	var body *ast.BlockStmt
	for _, d := range file.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "act" {
			body = fn.Body
		}
	}
	if got := len(factWrites(info, body, facts)); got != 4 {
		t.Errorf("found %d writes of the facts, want 4", got)
	}
}

// receives reports whether fn is a method of the named type tn.
func receives(room checkedPackage, fn *ast.FuncDecl, tn *types.TypeName) bool {
	recv := room.info.TypeOf(fn.Recv.List[0].Type)
	if p, ok := recv.(*types.Pointer); ok {
		recv = p.Elem()
	}
	return types.Identical(recv, tn.Type())
}

// factWrites are the positions in body of assignments and increments whose
// target is reached through a value of the facts type (or what it points
// to): f.x = ..., in.Facts.list = append(...), f.m[k] = ....
func factWrites(info *types.Info, body *ast.BlockStmt, facts types.Type) []token.Pos {
	var elem types.Type
	if p, ok := facts.(*types.Pointer); ok {
		elem = p.Elem()
	}
	isFacts := func(e ast.Expr) bool {
		t := info.TypeOf(e)
		return t != nil && (types.Identical(t, facts) || (elem != nil && types.Identical(t, elem)))
	}
	through := func(lhs ast.Expr) bool {
		for e := lhs; ; {
			switch x := e.(type) {
			case *ast.SelectorExpr:
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			default:
				return false
			}
			if isFacts(e) {
				return true
			}
		}
	}
	var out []token.Pos
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			if s.Tok == token.DEFINE {
				return true
			}
			for _, lhs := range s.Lhs {
				if through(lhs) {
					out = append(out, lhs.Pos())
				}
			}
		case *ast.IncDecStmt:
			if through(s.X) {
				out = append(out, s.X.Pos())
			}
		}
		return true
	})
	return out
}
