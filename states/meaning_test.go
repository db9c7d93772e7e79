package states

import (
	"reflect"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// checkMeaningTable fails for every state of d that want (the test's
// expectations) or table (the package's own) lacks, for every state either
// names that d does not have, and for every state whose meaning is not
// the one want gives.
func checkMeaningTable[M any](t *testing.T, d *fsm.Definition, table, want map[fsm.State]M, meaning func(fsm.State) M) {
	t.Helper()
	known := map[fsm.State]bool{}
	for _, st := range d.States {
		known[st.Name] = true
		if _, ok := table[st.Name]; !ok {
			t.Errorf("%s state %s has no meaning", d.Machine, st.Name)
		}
		w, ok := want[st.Name]
		if !ok {
			t.Errorf("%s state %s: the test table does not say what it means", d.Machine, st.Name)
			continue
		}
		if got := meaning(st.Name); !reflect.DeepEqual(got, w) {
			t.Errorf("%s state %s means %+v, want %+v", d.Machine, st.Name, got, w)
		}
	}
	for st := range table {
		if !known[st] {
			t.Errorf("the %s meaning table lists %s, which is no state of the machine", d.Machine, st)
		}
	}
	for st := range want {
		if !known[st] {
			t.Errorf("the test table lists %s, which is no %s state", st, d.Machine)
		}
	}
	if got, w := meaning(""), meaning(d.Initial); !reflect.DeepEqual(got, w) {
		t.Errorf("%s: the empty state means %+v, not what %s means (%+v)", d.Machine, got, d.Initial, w)
	}
}

func TestClusterMeaningCoversEveryPhase(t *testing.T) {
	// Before it is provisioned and once it is being deleted, a cluster
	// has no servers to guard.
	progressing, serving := ClusterStateMeaning{Condition: PhaseProgressing}, ClusterStateMeaning{Condition: PhaseProgressing, HasServers: true}
	checkMeaningTable(t, ClusterDefinition(), clusterMeanings, map[fsm.State]ClusterStateMeaning{
		ClusterReady:    {Condition: PhaseReady, HasServers: true},
		ClusterDegraded: {Condition: PhaseDegraded, HasServers: true},
		ClusterDeleted:  {Condition: PhaseNone},
		// Every activity phase is on its way somewhere.
		ClusterPending: progressing, ClusterProvisioning: serving, ClusterScaling: serving,
		ClusterUpgrading: serving, ClusterReconfiguring: serving, ClusterDeleting: progressing,
	}, ClusterMeaning)
	if got := ClusterMeaning("Bogus"); got != serving {
		t.Errorf("an unknown phase means %+v, want %+v", got, serving)
	}
}

func TestUpgradeMeaningCoversEveryState(t *testing.T) {
	checkMeaningTable(t, UpgradeDefinition(), upgradeMeanings, map[fsm.State]UpgradeStateMeaning{
		// No run: the condition is removed.
		UpgradeIdle: {Upgrading: ConditionAbsent},
		// A run rolls.
		// A run requested is validated, and one validated picks its
		// first batch, in the same sync.
		// Validation fixes the run's target: the spec's until then.
		UpgradeValidating:     {Upgrading: ConditionTrue, Prompt: true, Target: SpecTarget},
		UpgradeRollingServers: {Upgrading: ConditionTrue, Prompt: true, Target: ValidatedTarget},
		UpgradeRollingClients: {Upgrading: ConditionTrue, Target: ValidatedTarget},
		// Held or just finished: False, and the reason says which.
		UpgradeBlocked: {Upgrading: ConditionFalse, Target: ValidatedTarget}, UpgradePaused: {Upgrading: ConditionFalse, Target: ValidatedTarget},
		UpgradeComplete: {Upgrading: ConditionFalse, Target: ValidatedTarget},
	}, UpgradeMeaning)
	if got := UpgradeMeaning("Bogus"); got.Upgrading != ConditionTrue {
		t.Errorf("an unknown upgrade state means %+v, want Upgrading True", got)
	}
}

func TestDisruptionMeaningCoversEveryState(t *testing.T) {
	checkMeaningTable(t, DisruptionDefinition(), disruptionMeanings, map[fsm.State]DisruptionStateMeaning{
		DisruptionLocked: {}, DisruptionOpen: {ZoneOpen: true}, DisruptionRecovering: {},
	}, DisruptionMeaning)
	if DisruptionMeaning("Bogus").ZoneOpen {
		t.Error("an unknown disruption state opens a zone")
	}
}
