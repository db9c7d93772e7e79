package states

import (
	"fmt"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// decisionCase is one row of a machine's decision table, reduced to what
// the coverage check needs.
type decisionCase struct {
	name  string
	state fsm.State
	got   Decision
}

// checkDecisionIsAllowed fails when a decision fires an event or runs a
// step the definition does not allow in the state it was computed for.
func checkDecisionIsAllowed(t *testing.T, d *fsm.Definition, state fsm.State, got Decision) {
	t.Helper()
	if got.Event != "" && got.Step != "" {
		t.Errorf("%s/%s: decision sets both event %q and step %q", d.Machine, state, got.Event, got.Step)
	}
	if got.Event != "" {
		if _, ok := d.Target(got.Event, state); !ok {
			t.Errorf("%s/%s: decided event %q, which has no transition from this state", d.Machine, state, got.Event)
		}
	}
	if got.Step != "" && !d.StepAllowed(got.Step, state) {
		t.Errorf("%s/%s: decided step %q, which does not run in this state", d.Machine, state, got.Step)
	}
	if got.Reason == "" || got.Message == "" {
		t.Errorf("%s/%s: decision %+v lacks a reason or message", d.Machine, state, got)
	}
}

// checkCoverage fails for every transition edge and every step placement
// of d that no table case decides, so that each edge in the docs is known
// to have a decision path.
func checkCoverage(t *testing.T, d *fsm.Definition, cases []decisionCase) {
	t.Helper()
	seen := map[string]bool{}
	for _, c := range cases {
		if c.got.Event != "" {
			seen[fmt.Sprintf("%s --%s-->", c.state, c.got.Event)] = true
		}
		if c.got.Step != "" {
			seen[fmt.Sprintf("%s step %s", c.state, c.got.Step)] = true
		}
	}
	for _, tr := range d.Transitions {
		for _, f := range tr.From {
			if k := fmt.Sprintf("%s --%s-->", f, tr.Event); !seen[k] {
				t.Errorf("%s: no decision table case fires %s %s", d.Machine, k, tr.To)
			}
		}
	}
	for _, st := range d.Steps {
		for _, s := range st.In {
			if k := fmt.Sprintf("%s step %s", s, st.Name); !seen[k] {
				t.Errorf("%s: no decision table case runs %s", d.Machine, k)
			}
		}
	}
}
