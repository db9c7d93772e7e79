package states

import (
	"reflect"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

// The cluster, upgrade and heal change tables: what each acting step puts
// on record in the cluster's ledger.
func TestClusterUpgradeAndHealChanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []Change
		want []string
	}{
		{"options name the keys that differ with the spec's values, sorted",
			ClusterChanges(ClusterSnapshot{State: ClusterReady, OptionsDiffer: []string{"b", "a"}, ClusterOptions: map[string]string{"a": "1", "b": "2", "c": "3"}},
				Decision{Step: ClusterApplyOptions, Reason: "R"}),
			[]string{"setClusterOptions / : [] v= t=/0 o=[] [a=1 b=2] @Ready R cause="}},
		{"no option differs: nothing",
			ClusterChanges(ClusterSnapshot{State: ClusterReady}, Decision{Step: ClusterApplyOptions}), nil},
		{"scaling before the live plan: nothing",
			ClusterChanges(ClusterSnapshot{State: ClusterScaling}, Decision{Step: ClusterScaleNodes}), nil},
		{"scaling names each template's creations once and each node it asks to leave",
			ClusterChanges(ClusterSnapshot{State: ClusterScaling, Scale: &ScaleOrder{
				Create:       []string{"z1", "z1", "z2"},
				Decommission: []LeavingNode{{Name: "n", Peer: "p", Template: "z3", State: "Online"}},
			}}, Decision{Step: ClusterScaleNodes, Reason: "R"}),
			[]string{
				"createNodes / : [] v= t=z1/2 o=[] [] @Scaling R cause=",
				"createNodes / : [] v= t=z2/1 o=[] [] @Scaling R cause=",
				"decommissionNode n/p : [] v= t=z3/0 o=[] [] @Online R cause=",
			}},
		{"drivers name the objects missing",
			ClusterChanges(ClusterSnapshot{State: ClusterProvisioning, DriversMissing: []string{"CSIDriver x"}}, Decision{Step: ClusterEnsureDrivers, Reason: "R"}),
			[]string{"ensureCSIDrivers / : [] v= t=/0 o=[CSIDriver x] [] @Provisioning R cause="}},
		{"a cluster step without a lasting change records nothing",
			ClusterChanges(ClusterSnapshot{State: ClusterReady}, Decision{Step: ClusterSyncEndpoints}), nil},
		{"a client roll names the run's version",
			UpgradeChanges(UpgradeSnapshot{State: UpgradeRollingClients, ActiveTarget: "11.1"}, Decision{Step: UpgradeRollClients, Reason: "R"}),
			[]string{"rollCSIDrivers / : [] v=11.1 t=/0 o=[] [] @RollingClients R cause="}},
		{"a run without a version rolls nothing on record",
			UpgradeChanges(UpgradeSnapshot{State: UpgradeRollingClients}, Decision{Step: UpgradeRollClients}), nil},
		{"forcing bricks to start is one entry per peer, naming its node",
			HealChanges(HealSnapshot{State: HealHealPending, Volume: "v", NotStarted: BricksNotStarted{Peers: []string{"p", "q"}, Nodes: []string{"n", ""}}},
				Decision{Step: HealForceStartBricks, Reason: "R"}),
			[]string{"forceStartBricks n/p v: [] v= t=/0 o=[] [] @HealPending R cause=", "forceStartBricks /q v: [] v= t=/0 o=[] [] @HealPending R cause="}},
	} {
		if got := ledgerLines(tc.got); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

// Each upgrade event and step that moves the run's cursor, and how.
func TestMoveUpgradeCursor(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	now := t0.Add(time.Hour)
	running := UpgradeCursor{CurrentNodes: []string{"a"}, FromVersion: "10", ToVersion: "11", StartTime: t0, StepStartTime: t0}
	snap := UpgradeSnapshot{TargetVersion: "12", ServerVersions: []string{"11.2", "bad", "11.1"}, NextNodes: []string{"b"}, ActiveTarget: "11"}
	for _, tc := range []struct {
		name  string
		c     UpgradeCursor
		s     UpgradeSnapshot
		d     Decision
		want  UpgradeCursor
		moved bool
	}{
		{"a request clears the run's start", running, snap, Decision{Event: UpgradeRequest},
			UpgradeCursor{CurrentNodes: []string{"a"}, FromVersion: "10", ToVersion: "11", StepStartTime: t0}, true},
		{"validated starts a new run at a new target", running, snap, Decision{Event: UpgradeValidated},
			UpgradeCursor{CurrentNodes: []string{"a"}, FromVersion: "11.1", ToVersion: "12", StartTime: now, StepStartTime: now}, true},
		{"validated resumes a run at its target", running, UpgradeSnapshot{TargetVersion: "11"}, Decision{Event: UpgradeValidated},
			UpgradeCursor{CurrentNodes: []string{"a"}, FromVersion: "10", ToVersion: "11", StartTime: t0, StepStartTime: now}, true},
		{"servers done starts the client step", running, snap, Decision{Event: UpgradeServersDone},
			UpgradeCursor{FromVersion: "10", ToVersion: "11", StartTime: t0, StepStartTime: now}, true},
		{"settle ends the run's step", running, snap, Decision{Event: UpgradeSettle},
			UpgradeCursor{FromVersion: "10", ToVersion: "11", StartTime: t0}, true},
		{"cancel too", running, snap, Decision{Event: UpgradeCancel},
			UpgradeCursor{FromVersion: "10", ToVersion: "11", StartTime: t0}, true},
		{"a new batch starts its step", running, snap, Decision{Step: UpgradeSelectNextNode},
			UpgradeCursor{CurrentNodes: []string{"b"}, FromVersion: "10", ToVersion: "11", StartTime: t0, StepStartTime: now}, true},
		{"the same batch again keeps its start", running, UpgradeSnapshot{NextNodes: []string{"a"}, ActiveTarget: "11"}, Decision{Step: UpgradeSelectNextNode},
			running, true},
		{"a wait moves nothing", running, snap, Decision{}, running, false},
	} {
		got, moved := MoveUpgradeCursor(tc.c, tc.s, tc.d, now)
		if !reflect.DeepEqual(got, tc.want) || moved != tc.moved {
			t.Errorf("%s: %+v, %t; want %+v, %t", tc.name, got, moved, tc.want, tc.moved)
		}
	}
	if got := OldestVersion([]string{"x"}, "fallback"); got != "fallback" {
		t.Errorf("no version parses: %q", got)
	}
}

// The upgrade counts a volume unhealthy unless its heal machine is
// Healthy, and in split-brain when it is SplitBrain.
func TestUpgradeCountsVolumes(t *testing.T) {
	var s UpgradeSnapshot
	s.CountVolumes([]fsm.State{HealHealthy, HealSplitBrain, HealHealing, ""})
	if s.VolumesUnhealthy != 3 || s.VolumesSplitBrain != 1 {
		t.Errorf("unhealthy %d, split-brain %d; want 3, 1", s.VolumesUnhealthy, s.VolumesSplitBrain)
	}
}
