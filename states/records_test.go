package states

import (
	"testing"

	"github.com/gluster/anthill/fsm"
)

// Every classified name is an event or a step of its machine, and says
// either what it records or why it records nothing, never both.
func TestRecordsNameTheMachinesEventsAndSteps(t *testing.T) {
	for machine, byName := range records {
		def := DefinitionByName(machine)
		if def == nil {
			t.Errorf("records classify the actions of %s, which is no machine", machine)
			continue
		}
		for name, r := range byName {
			if !def.HasEvent(fsm.Event(name)) && !def.HasStep(fsm.Step(name)) {
				t.Errorf("%s: %s is neither an event nor a step of the machine", machine, name)
			}
			if (len(r.Ledger) == 0) == (r.Unrecorded == "") {
				t.Errorf("%s %s: a record names ledger actions or says why it needs none, exactly one of them: %+v", machine, name, r)
			}
		}
	}
}

func TestLedgerActionOfADecision(t *testing.T) {
	for _, tc := range []struct {
		machine string
		d       Decision
		want    string
	}{
		{NodeMachine, Decision{Step: NodeMoveBrick}, LedgerReplaceBrick},
		{NodeMachine, Decision{Event: NodeRestart}, LedgerDisableDevices},
		{NodeMachine, Decision{Event: NodeJoin}, ""},
		{NodeMachine, Decision{Event: NodeRejoin}, ""},
		// Two ledger actions: the machine builds its entries itself.
		{ClusterMachine, Decision{Step: ClusterScaleNodes}, ""},
		{HealMachine, Decision{Step: HealForceStartBricks}, LedgerForceStartBricks},
	} {
		if got := LedgerActionOf(tc.machine, tc.d); got != tc.want {
			t.Errorf("%s %+v: ledger action %q, want %q", tc.machine, tc.d, got, tc.want)
		}
	}
}
