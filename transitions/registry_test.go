package transitions

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// The doc of an event says "Action:" when it has a side effect and "No
// action" otherwise. A step is work, so it has an action unless its doc
// says "No action" (such a step only records the machine's own status).
// The registry must agree with the docs.
func TestEveryEventAndStepThatNeedsAnActionHasOne(t *testing.T) {
	reg := registered()
	for _, d := range states.Definitions() {
		have := reg[d.Machine]
		for _, e := range d.Events {
			action, none := strings.Contains(e.Doc, "Action:"), strings.Contains(e.Doc, "No action")
			if action == none {
				t.Errorf("%s: doc of event %s must say either \"Action:\" or \"No action\"", d.Machine, e.Name)
			} else if got := slices.Contains(have.Events, e.Name); got != action {
				t.Errorf("%s: event %s has an action: %t, its doc says %t", d.Machine, e.Name, got, action)
			}
		}
		for _, st := range d.Steps {
			action := !strings.Contains(st.Doc, "No action")
			if got := slices.Contains(have.Steps, st.Name); got != action {
				t.Errorf("%s: step %s has an action: %t, its doc says %t", d.Machine, st.Name, got, action)
			}
		}
		for _, e := range have.Events {
			if !d.HasEvent(e) {
				t.Errorf("%s: action registered for event %q, which the machine does not have", d.Machine, e)
			}
		}
		for _, s := range have.Steps {
			if !d.HasStep(s) {
				t.Errorf("%s: action registered for step %q, which the machine does not have", d.Machine, s)
			}
		}
	}
	if len(reg) != len(states.Definitions()) {
		t.Errorf("registry has %d machines, want %d", len(reg), len(states.Definitions()))
	}
}

func TestLookupsAnswerOnlyForTheirMachine(t *testing.T) {
	if _, ok := NodeActions.Event(states.NodeJoin); !ok {
		t.Error("node join has no action")
	}
	if _, ok := NodeActions.Event(states.NodePeerLost); ok {
		t.Error("peerLost has no side effect and must have no action")
	}
	if _, ok := NodeActions.Step(states.NodeMoveBrick); !ok {
		t.Error("node moveBrick has no action")
	}
	if _, ok := HealActions.Event(states.HealStartHeal); !ok {
		t.Error("heal startHeal has no action")
	}
	if _, ok := ClusterActions.Event(states.ClusterProvision); !ok {
		t.Error("cluster provision has no action")
	}
	if _, ok := UpgradeActions.Event(fsm.Event("provision")); ok {
		t.Error("the upgrade machine has no provision action")
	}
	if _, ok := UpgradeActions.Step(states.UpgradeSelectNextNode); ok {
		t.Error("selectNextNode records the machine's own status and must have no action")
	}
}

// registered returns, per machine name, the events and steps that have an
// action, to check the registry against the definitions.
func registered() map[string]Names {
	registryMu.Lock()
	defer registryMu.Unlock()
	return maps.Clone(registry)
}
