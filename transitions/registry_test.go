package transitions

import (
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// The event docs say "Action: ..." for events with a side effect and
// "No action" otherwise; the registry must agree with them, and every step
// (in-state work) must have an action.
func TestEveryEventThatNeedsAnActionHasOne(t *testing.T) {
	reg := Registered()
	for _, d := range states.Definitions() {
		have := reg[d.Machine]
		for _, e := range d.Events {
			says := strings.Contains(e.Doc, "Action:")
			saysNone := strings.Contains(e.Doc, "No action")
			if says == saysNone {
				t.Errorf("%s: doc of event %s must say either \"Action:\" or \"No action\"", d.Machine, e.Name)
				continue
			}
			if got := slices.Contains(have, e.Name); got != says {
				t.Errorf("%s: event %s has an action: %t, its doc says %t", d.Machine, e.Name, got, says)
			}
		}
		for _, st := range d.Steps {
			if !slices.Contains(have, st.Name) {
				t.Errorf("%s: step %s has no action", d.Machine, st.Name)
			}
		}
		for _, e := range have {
			if !d.HasEvent(e) && !d.HasStep(e) {
				t.Errorf("%s: action registered for %q, which is neither an event nor a step", d.Machine, e)
			}
		}
	}
	if len(reg) != len(states.Definitions()) {
		t.Errorf("registry has %d machines, want %d", len(reg), len(states.Definitions()))
	}
}

func TestLookupsAnswerOnlyForTheirMachine(t *testing.T) {
	if _, ok := NodeActionFor(states.NodeJoin); !ok {
		t.Error("NodeActionFor(join) missing")
	}
	if _, ok := NodeActionFor(states.NodePeerLost); ok {
		t.Error("peerLost has no side effect and must have no action")
	}
	if _, ok := HealActionFor(states.HealStartHeal); !ok {
		t.Error("HealActionFor(startHeal) missing")
	}
	if _, ok := ClusterActionFor(states.ClusterProvision); !ok {
		t.Error("ClusterActionFor(provision) missing")
	}
	if _, ok := UpgradeActionFor(fsm.Event("provision")); ok {
		t.Error("the upgrade machine has no provision action")
	}
}
