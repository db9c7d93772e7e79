package architecture

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"slices"
	"strings"
	"testing"
)

// fsmNames are the fsm types whose constants name a machine's events,
// steps and states.
var fsmNames = []string{"Event", "Step", "State"}

// TestNoMachineRoomSwitchesOnStates holds that a machine room
// (kube/machines/<machine>) names no event, step or state constant in a
// switch: what a state means, what a step changes and what goes on record
// before an action are tables in states, which the room reads without
// naming their keys (docs/design/adding-a-state.md). A switch over them in
// a room is knowledge a new state or step would have to be added to in two
// places.
func TestNoMachineRoomSwitchesOnStates(t *testing.T) {
	_, rooms := machineRooms(t)
	checked := 0
	for _, room := range rooms {
		if !isMachineRoom(room.path) {
			continue
		}
		checked++
		for _, f := range room.files {
			for _, hit := range stateSwitches(room.info, room.fset, f) {
				t.Errorf("%s: %s: move what the switch knows into a table in states", room.path, hit)
			}
		}
	}
	if checked < 5 {
		t.Errorf("checked only %d machine rooms", checked)
	}
}

// isMachineRoom: path is a machine's own room, not a shared one.
func isMachineRoom(path string) bool {
	rest, ok := strings.CutPrefix(path, module+"/kube/machines/")
	if !ok || strings.Contains(rest, "/") {
		return false
	}
	return !slices.Contains([]string{"gather", "machinestatus", "wake"}, rest)
}

// stateSwitches are the places in f where a switch case names a constant
// of an fsm event, step or state type, as "file:line: switch names X".
func stateSwitches(info *types.Info, fset *token.FileSet, f *ast.File) []string {
	var out []string
	ast.Inspect(f, func(n ast.Node) bool {
		sw, ok := n.(*ast.SwitchStmt)
		if !ok {
			return true
		}
		for _, stmt := range sw.Body.List {
			for _, e := range stmt.(*ast.CaseClause).List {
				ast.Inspect(e, func(n ast.Node) bool {
					id, ok := n.(*ast.Ident)
					if !ok {
						return true
					}
					if c, ok := info.Uses[id].(*types.Const); ok && isFSMName(c.Type()) {
						pos := fset.Position(id.Pos())
						out = append(out, fmt.Sprintf("%s:%d: switch names %s", pos.Filename[strings.LastIndex(pos.Filename, "/")+1:], pos.Line, id.Name))
					}
					return true
				})
			}
		}
		return true
	})
	return out
}

// isFSMName: t is fsm.Event, fsm.Step or fsm.State.
func isFSMName(t types.Type) bool {
	named, ok := t.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return false
	}
	return named.Obj().Pkg().Path() == module+"/fsm" && slices.Contains(fsmNames, named.Obj().Name())
}

// A planted room file: a switch over a state, and a tagless one over a
// step, are caught; a switch over what a state means, one over a reason,
// and a comparison outside a switch are not.
func TestStateSwitchesFindsAPlantedSwitch(t *testing.T) {
	const src = `package planted

import (
	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

func f(st fsm.State, d states.Decision) int {
	switch st {
	case states.NodeDraining:
		return 1
	}
	switch {
	case d.Step == states.NodeMoveBrick:
		return 2
	}
	switch states.NodeMeaning(st).Class {
	case states.NodeClassLeaving:
		return 3
	}
	switch d.Reason {
	case states.ReasonMovingBrick:
		return 4
	}
	if st == states.NodeOnline {
		return 5
	}
	return 0
}
`
	imp, _ := machineRooms(t)
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, "planted.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	if _, err := (&types.Config{Importer: imp}).Check("planted", fset, []*ast.File{file}, info); err != nil {
		t.Fatal(err)
	}
	want := []string{"planted.go:10: switch names NodeDraining", "planted.go:14: switch names NodeMoveBrick"}
	if got := stateSwitches(info, fset, file); !slices.Equal(got, want) {
		t.Errorf("found %q, want %q", got, want)
	}
	for path, want := range map[string]bool{
		module + "/kube/machines/node":          true,
		module + "/kube/machines/machinestatus": false,
		module + "/kube/machines/node/sub":      false,
		module + "/kube/engine":                 false,
	} {
		if got := isMachineRoom(path); got != want {
			t.Errorf("%s is a machine room: %t, want %t", path, got, want)
		}
	}
}
