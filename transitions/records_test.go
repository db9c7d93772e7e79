package transitions

import (
	"fmt"
	"slices"
	"testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// classification lists, for every machine, the events and steps with an
// action that states does not classify (a lasting change to put on record
// first, or a reason it needs none), and the names states classifies that
// have no action.
func classification(reg map[string]Names, classified map[string][]string) []string {
	var out []string
	for machine, names := range reg {
		var acting []string
		for _, e := range names.Events {
			acting = append(acting, string(e))
		}
		for _, s := range names.Steps {
			acting = append(acting, string(s))
		}
		for _, name := range acting {
			if !slices.Contains(classified[machine], name) {
				out = append(out, fmt.Sprintf("%s: %s acts but states does not say what it puts on record (states.records)", machine, name))
			}
		}
		for _, name := range classified[machine] {
			if !slices.Contains(acting, name) {
				out = append(out, fmt.Sprintf("%s: states classifies %s, which has no action", machine, name))
			}
		}
	}
	for machine := range classified {
		if _, ok := reg[machine]; !ok {
			out = append(out, fmt.Sprintf("states classifies the actions of %s, which registers none", machine))
		}
	}
	slices.Sort(out)
	return out
}

// Every action is a lasting change put on record before it runs, or says
// why it needs no record: a new destructive step cannot slip past the
// ledger.
func TestEveryActionIsClassified(t *testing.T) {
	for _, problem := range classification(registered(), states.Classified()) {
		t.Error(problem)
	}
}

// A step planted with an action and no classification is caught.
func TestAnUnclassifiedActionIsCaught(t *testing.T) {
	reg := registered()
	node := reg[states.NodeMachine]
	node.Steps = append(slices.Clone(node.Steps), fsm.Step("wipeBricks"))
	reg[states.NodeMachine] = node
	got := classification(reg, states.Classified())
	want := "node: wipeBricks acts but states does not say what it puts on record (states.records)"
	if !slices.Equal(got, []string{want}) {
		t.Errorf("a planted unclassified step gives %q, want %q", got, want)
	}
}
