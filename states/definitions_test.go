package states

import (
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
)

func TestEveryDefinitionValidates(t *testing.T) {
	for _, d := range Definitions() {
		t.Run(d.Machine, func(t *testing.T) {
			if err := d.Validate(); err != nil {
				t.Fatalf("Validate():\n%v", err)
			}
		})
	}
}

func TestMachineNamesAreUniqueAndResolvable(t *testing.T) {
	names := MachineNames()
	if want := []string{"node", "heal", "upgrade", "cluster", "disruption"}; !slices.Equal(names, want) {
		t.Fatalf("MachineNames() = %v, want %v", names, want)
	}
	for _, n := range names {
		if d := DefinitionByName(n); d == nil || d.Machine != n {
			t.Errorf("DefinitionByName(%q) = %v", n, d)
		}
	}
	if DefinitionByName("volume") != nil {
		t.Error("DefinitionByName(volume) should be nil")
	}
}

// The state docs are written by hand; this keeps them honest about the
// graph: every event that leaves a state, and every step run in it, must be
// named (in backticks) in the state's doc.
func TestEveryStateDocNamesItsExitsAndSteps(t *testing.T) {
	for _, d := range Definitions() {
		for _, s := range d.States {
			var want []string
			for _, e := range d.Exits(s.Name) {
				want = append(want, string(e))
			}
			for _, st := range d.Steps {
				if slices.Contains(st.In, s.Name) {
					want = append(want, string(st.Name))
				}
			}
			for _, e := range want {
				if !strings.Contains(s.Doc, "`"+e+"`") {
					t.Errorf("%s: doc of state %s does not mention `%s`", d.Machine, s.Name, e)
				}
			}
		}
	}
}

func TestEveryNonInitialStateDocSaysHowItIsEntered(t *testing.T) {
	for _, d := range Definitions() {
		for _, s := range d.States {
			if s.Name == d.Initial {
				continue
			}
			var entering []fsm.Event
			for _, tr := range d.Transitions {
				if tr.To == s.Name {
					entering = append(entering, tr.Event)
				}
			}
			ok := slices.ContainsFunc(entering, func(e fsm.Event) bool {
				return strings.Contains(s.Doc, "`"+string(e)+"`")
			})
			if !ok {
				t.Errorf("%s: doc of state %s names none of its entering events %v", d.Machine, s.Name, entering)
			}
		}
	}
}

func TestDefinitionsAreFreshCopies(t *testing.T) {
	a := NodeDefinition()
	a.States[0].Doc = "changed"
	if NodeDefinition().States[0].Doc == "changed" {
		t.Error("NodeDefinition shares state with callers")
	}
}
