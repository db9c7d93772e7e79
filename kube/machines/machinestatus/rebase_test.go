package machinestatus

import (
	"encoding/json"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// stored is c as the API server keeps it: through JSON, times to the
// second.
func stored(t *testing.T, c *operatorv1alpha1.GlusterCluster) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out operatorv1alpha1.GlusterCluster
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

func upgradeOwn(st *operatorv1alpha1.GlusterClusterStatus) []any { return []any{&st.Upgrade} }

func healOwn(st *operatorv1alpha1.GlusterClusterStatus) []any { return []any{&st.Volumes} }

func cond(t, status, reason string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason}
}

func rec(machine, to string) operatorv1alpha1.TransitionRecord {
	return operatorv1alpha1.TransitionRecord{Machine: machine, To: to}
}

// The status every case starts from, as the sync read it.
func readStatus() *operatorv1alpha1.GlusterCluster {
	return &operatorv1alpha1.GlusterCluster{Status: operatorv1alpha1.GlusterClusterStatus{
		Upgrade:    &operatorv1alpha1.UpgradeStatus{State: "RollingServers"},
		Volumes:    []operatorv1alpha1.VolumeStatus{{Name: "v", State: "Healing"}},
		Conditions: []metav1.Condition{cond("Upgrading", "True", "NodeUpgrading"), cond("Ready", "True", "Ready")},
		History:    []operatorv1alpha1.TransitionRecord{rec("cluster", "Ready")},
		Ledger:     []operatorv1alpha1.LedgerEntry{{Action: "rollWorkload", Node: "a"}},
	}}
}

func TestAMachinesWriteIsMadeAgainOverAnothersWrite(t *testing.T) {
	// The upgrade machine selects the next node and records it; the heal
	// machine meanwhile records the volume healed.
	before := readStatus()
	after := before.DeepCopy()
	after.Status.Upgrade.CurrentNodes = []string{"b"}
	now := metav1.NewTime(time.Date(2026, 12, 7, 9, 0, 0, 123456789, time.UTC))
	after.Status.Upgrade.StepStartTime = &now
	after.Status.Conditions[0] = cond("Upgrading", "True", "SelectingNode")
	after.Status.Conditions[0].LastTransitionTime = now
	after.Status.Ledger = append(after.Status.Ledger, operatorv1alpha1.LedgerEntry{Action: "rollWorkload", Node: "b", Time: now})

	healed := before.DeepCopy()
	healed.Status.Volumes[0].State = "Healthy"
	healed.Status.History = append(healed.Status.History, rec("heal", "Healthy"))
	healed.Status.Conditions = append(healed.Status.Conditions, cond("HealTrigger", "True", "HealTriggerFailed"))

	live := healed.DeepCopy()
	if !rebaseCluster(upgradeOwn)(live, before, after) {
		t.Fatal("the upgrade machine's write could not be made over the heal machine's")
	}
	want := healed.DeepCopy()
	want.Status.Upgrade = after.Status.Upgrade
	want.Status.Conditions[0] = after.Status.Conditions[0]
	want.Status.Ledger = after.Status.Ledger
	if !equality.Semantic.DeepEqual(live.Status, want.Status) {
		t.Errorf("rebased status\n%+v\nwant\n%+v", live.Status, want.Status)
	}
	written := stored(t, live)
	if !holdsCluster(upgradeOwn)(stored(t, written), before, after, written) {
		t.Error("the status as stored does not hold the write")
	}
	if holdsCluster(upgradeOwn)(stored(t, healed), before, after, written) {
		t.Error("a status without the write holds it")
	}
	again := live.DeepCopy()
	if !rebaseCluster(upgradeOwn)(again, before, after) || !equality.Semantic.DeepEqual(again.Status, live.Status) {
		t.Error("rebasing onto a status that holds the write changed it")
	}

	// The heal machine's write, from the same read, over the upgrade
	// machine's: both history records and both writes kept.
	live2 := live.DeepCopy()
	live2.Status.History = append(live2.Status.History, rec("cluster", "Upgrading"))
	if !rebaseCluster(healOwn)(live2, before, healed) {
		t.Fatal("the heal machine's write could not be made over the upgrade machine's")
	}
	if n := len(live2.Status.History); n != 3 || live2.Status.History[1] != rec("heal", "Healthy") || live2.Status.History[2] != rec("cluster", "Upgrading") {
		t.Errorf("history %v: want the heal record once, beside the others", live2.Status.History)
	}
}

func TestAWriteOverAChangeToTheMachinesOwnPartIsRefused(t *testing.T) {
	before := readStatus()
	after := before.DeepCopy()
	after.Status.Upgrade.CurrentNodes = []string{"b"}
	for _, tc := range []struct {
		name   string
		change func(*operatorv1alpha1.GlusterCluster)
	}{
		{"its own field", func(c *operatorv1alpha1.GlusterCluster) { c.Status.Upgrade.State = "Blocked" }},
		{"a condition type it changes", func(c *operatorv1alpha1.GlusterCluster) {
			c.Status.Conditions[0] = cond("Upgrading", "False", "Paused")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := after.DeepCopy()
			a.Status.Conditions[0] = cond("Upgrading", "True", "SelectingNode")
			live := before.DeepCopy()
			tc.change(live)
			kept := live.DeepCopy()
			if rebaseCluster(upgradeOwn)(live, before, a) {
				t.Fatal("rebased over a change to the machine's own part")
			}
			if !equality.Semantic.DeepEqual(live.Status, kept.Status) {
				t.Error("a refused rebase changed the live status")
			}
		})
	}
}
