package architecture

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/gd2"
)

// The rooms that decide and drive (the engine, the machines' syncers, the
// decisions, the object builders, the operator's wiring) change the world
// only through kube/effects: no call there writes to the API server or to
// GD2. The runner's status writers and its Events are the exceptions,
// named below with their reasons. transitions calls the effects through
// its Ops interfaces, whose methods carry the same names, and is the
// effects' one caller: it is not checked here.
var writeFreeRooms = []string{"kube/engine", "kube/machines", "kube/objects", "kube/operator", "states", "fsm"}

// allowedWrites are the files of those rooms that write, with the reason.
var allowedWrites = map[string]string{
	"kube/machines/machinestatus/status_writers.go": "the machines' status writers (see TestOnlyTheStatusWritersWriteStatus)",
	"kube/engine/status_writer.go":                  "the runner's one status write, through the writer status_writers.go supplies",
	"kube/engine/transition_events.go":              "the transition log records its Events",
}

// apiWrites are the client-go verbs that write.
var apiWrites = []string{"Create", "Update", "UpdateStatus", "Patch", "Apply", "ApplyStatus", "Delete", "DeleteCollection"}

// gd2Writes are the methods of the GD2 client that change GD2: every
// method but those that read.
func gd2Writes() []string {
	reads := []string{"BricksStatus", "ClusterOptions", "DialAddress", "Endpoint", "Endpoints", "GetDevice", "GetPeer", "GetVolume",
		"HealInfo", "ListAllDevices", "ListDevices", "ListPeers", "ListVolumes", "Ping", "RebalanceStatus", "Version",
		"VolumeOption", "VolumeOptions", "VolumeStatus"}
	var out []string
	t := reflect.TypeOf(&gd2.Client{})
	for i := range t.NumMethod() {
		if name := t.Method(i).Name; !slices.Contains(reads, name) {
			out = append(out, name)
		}
	}
	return out
}

// TestOnlyTheEffectsWrite: no call in the rooms that decide writes to the
// API server or GD2; a call is a write when it names a writing verb or GD2
// method and passes a context first, as every client call does.
func TestOnlyTheEffectsWrite(t *testing.T) {
	root := repoRoot()
	writes := append(slices.Clone(apiWrites), gd2Writes()...)
	if !slices.Contains(writes, "ReplaceBrick") || !slices.Contains(writes, "DeletePeer") {
		t.Fatalf("GD2 writes %v: the client's writing methods are not found", writes)
	}
	fset := token.NewFileSet()
	found := map[string]bool{}
	for _, room := range writeFreeRooms {
		err := filepath.WalkDir(filepath.Join(root, room), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return err
			}
			rel, _ := filepath.Rel(root, path)
			rel = filepath.ToSlash(rel)
			f, err := parser.ParseFile(fset, path, nil, 0)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) == 0 {
					return true
				}
				sel, ok := call.Fun.(*ast.SelectorExpr)
				if !ok || !slices.Contains(writes, sel.Sel.Name) {
					return true
				}
				if ctx, ok := call.Args[0].(*ast.Ident); !ok || ctx.Name != "ctx" {
					return true
				}
				if _, ok := allowedWrites[rel]; ok {
					found[rel] = true
					return true
				}
				t.Errorf("%s: %s writes outside kube/effects", fset.Position(call.Pos()), sel.Sel.Name)
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for file := range allowedWrites {
		if !found[file] {
			t.Errorf("%s writes nothing any more: take it off allowedWrites", file)
		}
	}
}
