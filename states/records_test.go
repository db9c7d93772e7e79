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
