package states

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// acting lists, per machine, the events and steps whose doc says they act:
// an event's says "Action: …", a step's anything but "No action" (the rule
// TestEveryEventAndStepThatNeedsAnActionHasOne holds the registered
// actions to).
func acting(defs []*fsm.Definition) map[string][]string {
	out := map[string][]string{}
	for _, d := range defs {
		out[d.Machine] = nil
		for _, e := range d.Events {
			if strings.Contains(e.Doc, "Action:") {
				out[d.Machine] = append(out[d.Machine], string(e.Name))
			}
		}
		for _, s := range d.Steps {
			if !strings.Contains(s.Doc, "No action") {
				out[d.Machine] = append(out[d.Machine], string(s.Name))
			}
		}
	}
	return out
}

// changeRows lists, per machine, the events and steps its change table
// has a row for.
func changeRows() map[string][]string {
	return map[string][]string{
		NodeMachine:    slices.Sorted(maps.Keys(nodeChanges)),
		ClusterMachine: slices.Sorted(maps.Keys(clusterChanges)),
		UpgradeMachine: slices.Sorted(maps.Keys(upgradeChanges)),
		HealMachine:    slices.Sorted(maps.Keys(healChanges)),
	}
}

// classificationProblems holds the events and steps that act (acts) to
// how records classifies them and to the change tables (rows): each one
// that acts is either a lasting change, with ledger actions in records and
// a row in its machine's change table that says what the change names, or
// says in records why it needs no record (it changes nothing an admin
// would look for in the ledger: reversible, or recorded elsewhere) — as
// checkCoverage fails for an edge no decision takes.
func classificationProblems(acts map[string][]string, records map[string]map[string]Record, rows map[string][]string) []string {
	var out []string
	for machine, names := range acts {
		for _, name := range names {
			r, ok := records[machine][name]
			switch {
			case !ok:
				out = append(out, fmt.Sprintf("%s: %s acts (its doc says so) but states does not say what it puts on record: "+
					"its ledger actions in records and a Change row in the machine's change table, or unrecorded with the reason it needs none", machine, name))
			case len(r.Ledger) > 0 && !slices.Contains(rows[machine], name):
				out = append(out, fmt.Sprintf("%s: %s is recorded as %v but its machine's change table has no row saying what the change names", machine, name, r.Ledger))
			case len(r.Ledger) == 0 && slices.Contains(rows[machine], name):
				out = append(out, fmt.Sprintf("%s: %s has a row in the change table, but records says it needs no record (%s)", machine, name, r.Unrecorded))
			}
		}
	}
	for machine, byName := range records {
		for name := range byName {
			if !slices.Contains(acts[machine], name) {
				out = append(out, fmt.Sprintf("%s: records classifies %s, whose doc does not say it acts", machine, name))
			}
		}
	}
	for machine, names := range rows {
		for _, name := range names {
			if _, ok := records[machine][name]; !ok {
				out = append(out, fmt.Sprintf("%s: the change table has a row for %s, which records does not classify", machine, name))
			}
		}
	}
	slices.Sort(out)
	return out
}

// Every event or step whose doc says it acts is a lasting change with its
// Change row, or says why it goes on no record: a destructive step added
// by following the recipe cannot slip past the ledger.
func TestEveryActingEventAndStepIsClassified(t *testing.T) {
	for _, problem := range classificationProblems(acting(Definitions()), records, changeRows()) {
		t.Error(problem)
	}
}

// A step planted with a doc that acts and no classification is caught, and
// so is a lasting change whose row is missing from the change table.
func TestAnUnclassifiedStepIsCaught(t *testing.T) {
	defs := Definitions()
	node := *defs[0]
	node.Steps = append(slices.Clone(node.Steps), fsm.StepDoc{Name: "wipeBricks", In: []fsm.State{NodeDraining}, Doc: "Wipe the node's bricks."})
	defs[0] = &node
	want := "node: wipeBricks acts (its doc says so) but states does not say what it puts on record: " +
		"its ledger actions in records and a Change row in the machine's change table, or unrecorded with the reason it needs none"
	if got := classificationProblems(acting(defs), records, changeRows()); !slices.Equal(got, []string{want}) {
		t.Errorf("a planted unclassified step gives %q, want %q", got, want)
	}

	rows := changeRows()
	rows[NodeMachine] = slices.DeleteFunc(slices.Clone(rows[NodeMachine]), func(n string) bool { return n == string(NodeDeletePeer) })
	want = "node: deletePeer is recorded as [deletePeer] but its machine's change table has no row saying what the change names"
	if got := classificationProblems(acting(Definitions()), records, rows); !slices.Equal(got, []string{want}) {
		t.Errorf("a lasting change without its row gives %q, want %q", got, want)
	}
}

// sampleChanges runs machine's change table for d in state on a snapshot
// in which every row makes its change.
var sampleChanges = map[string]func(d Decision, state fsm.State) []Change{
	NodeMachine: func(d Decision, state fsm.State) []Change {
		return NodeChanges(NodeSnapshot{State: state, Name: "n", PeerKnown: true, PeerAlive: true}, d)
	},
	ClusterMachine: func(d Decision, state fsm.State) []Change {
		return ClusterChanges(ClusterSnapshot{State: state, OptionsDiffer: []string{"k"}, ClusterOptions: map[string]string{"k": "v"},
			Scale: &ScaleOrder{Create: []string{"z1"}, Decommission: []LeavingNode{{Name: "n", State: "Online"}}}}, d)
	},
	UpgradeMachine: func(d Decision, state fsm.State) []Change {
		return UpgradeChanges(UpgradeSnapshot{State: state, ActiveTarget: "11.1"}, d)
	},
	HealMachine: func(d Decision, state fsm.State) []Change {
		return HealChanges(HealSnapshot{State: state, Volume: "v", NotStarted: BricksNotStarted{Peers: []string{"p"}}}, d)
	},
}

// Each change-table row makes the changes records names for it, in a
// state its event or step runs in, and each of those ledger actions.
func TestChangeRowsMakeTheirRecordedActions(t *testing.T) {
	for _, def := range Definitions() {
		sample, ok := sampleChanges[def.Machine]
		if !ok {
			if len(changeRows()[def.Machine]) > 0 {
				t.Errorf("%s: no sample snapshot for its change table", def.Machine)
			}
			continue
		}
		for _, name := range changeRows()[def.Machine] {
			r := records[def.Machine][name]
			d, state := Decision{Step: fsm.Step(name), Reason: "R"}, fsm.State("")
			if def.HasEvent(fsm.Event(name)) {
				d = Decision{Event: fsm.Event(name), Reason: "R"}
				for _, tr := range def.Transitions {
					if tr.Event == d.Event {
						state = tr.From[0]
					}
				}
			} else {
				for _, s := range def.Steps {
					if s.Name == d.Step {
						state = s.In[0]
					}
				}
			}
			var made []string
			for _, c := range sample(d, state) {
				if !slices.Contains(r.Ledger, c.Action) {
					t.Errorf("%s %s makes a %s change, which records does not name (%v)", def.Machine, name, c.Action, r.Ledger)
				}
				if c.State == "" || c.Reason != "R" {
					t.Errorf("%s %s: its change names no state or not the decision's reason: %+v", def.Machine, name, c)
				}
				made = append(made, c.Action)
			}
			for _, l := range r.Ledger {
				if !slices.Contains(made, l) {
					t.Errorf("%s %s is recorded as %s, which its row never makes", def.Machine, name, l)
				}
			}
		}
	}
}
