package states

import (
	"reflect"
	"slices"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// TestNodeMeaningCoversEveryState lists every node state with all it
// means: a state added to the machine without saying how it counts, what
// it shows, what it reads and what entering it resets fails here.
func TestNodeMeaningCoversEveryState(t *testing.T) {
	const (
		down, alive, moved, refused = CursorDownSince, CursorAliveSince, CursorMovedBricks, CursorRefusedPeers
		receives, barred            = true, false
		bricks, noBricks            = true, false
		version                     = true
		prompt                      = true
	)
	rows := []struct {
		state    fsm.State
		class    NodeClass
		receive  bool
		cond     PhaseCondition
		gd2      GD2Use
		bricks   bool
		reset    []NodeCursor
		stamp    []NodeCursor
		recorded bool
		prompt   bool
	}{
		{NodePending, NodeClassJoining, receives, PhaseProgressing, GD2Never, noBricks, []NodeCursor{alive}, nil, false, false},
		{NodeProvisioning, NodeClassJoining, receives, PhaseProgressing, GD2WhenWorkloadReady, noBricks, []NodeCursor{alive}, nil, false, false},
		{NodeJoining, NodeClassJoining, receives, PhaseProgressing, GD2Always, noBricks, []NodeCursor{alive}, nil, false, false},
		{NodeOnline, NodeClassOnline, receives, PhaseReady, GD2Always, noBricks, []NodeCursor{down, alive, moved, refused}, nil, version, false},
		{NodeOffline, NodeClassUnhealthy, barred, PhaseDegraded, GD2Always, noBricks, nil, []NodeCursor{down}, false, false},
		{NodeMaintenance, NodeClassMaintenance, barred, PhaseNone, GD2Always, noBricks, []NodeCursor{alive}, nil, false, false},
		{NodeFailed, NodeClassUnhealthy, barred, PhaseDegraded, GD2Always, noBricks, nil, nil, false, false},
		{NodeDraining, NodeClassLeaving, barred, PhaseProgressing, GD2Always, bricks, []NodeCursor{alive}, nil, false, false},
		{NodeAbandoned, NodeClassLeaving, barred, PhaseDegraded, GD2Always, bricks, []NodeCursor{alive}, nil, false, false},
		{NodeDetaching, NodeClassLeaving, barred, PhaseProgressing, GD2Always, bricks, []NodeCursor{down, alive}, nil, false, false},
		{NodeDeleting, NodeClassLeaving, barred, PhaseProgressing, GD2Always, bricks, []NodeCursor{down, alive}, nil, false, false},
		{NodeDeleted, NodeClassGone, barred, PhaseNone, GD2Never, noBricks, []NodeCursor{down, alive}, nil, false, false},
		{NodeQuiescing, NodeClassUpgrading, receives, PhaseProgressing, GD2Always, bricks, []NodeCursor{alive}, nil, false, prompt},
		{NodeRestarting, NodeClassUpgrading, receives, PhaseProgressing, GD2Always, bricks, []NodeCursor{alive}, nil, false, prompt},
		{NodeRejoining, NodeClassUpgrading, receives, PhaseProgressing, GD2Always, bricks, []NodeCursor{alive}, nil, false, false},
		{NodeHealWait, NodeClassUpgrading, receives, PhaseProgressing, GD2Always, bricks, []NodeCursor{alive}, nil, false, prompt},
	}
	want := map[fsm.State]NodeStateMeaning{}
	for _, r := range rows {
		want[r.state] = NodeStateMeaning{Class: r.class, MayReceiveBricks: r.receive, Condition: r.cond, GD2: r.gd2,
			ReadsBricks: r.bricks, ResetOnEntry: r.reset, StampOnEntry: r.stamp, RecordsVersion: r.recorded, Prompt: r.prompt}
	}
	// Restarting's entry puts its roll on record: its write comes before
	// anything is stopped.
	restarting := want[NodeRestarting]
	restarting.RecordsAhead = AheadStep{Step: NodeRollWorkload, Reason: ReasonRestarting}
	want[NodeRestarting] = restarting
	checkMeaningTable(t, NodeDefinition(), nodeMeanings, want, NodeMeaning)
}

// The fields of a meaning are not independent: these are the rules that
// tie them together, checked for every state.
func TestNodeMeaningsAreConsistent(t *testing.T) {
	def := NodeDefinition()
	for _, st := range def.States {
		m := NodeMeaning(st.Name)
		fail := func(rule string) { t.Errorf("%s: %s (%+v)", st.Name, rule, m) }
		if m.ReadsBricks && m.GD2 == GD2Never {
			fail("reads bricks but never GD2")
		}
		if m.MayReceiveBricks && !m.Counts() {
			fail("a node that no longer counts may receive bricks")
		}
		if m.MayReceiveBricks && (m.Class == NodeClassUnhealthy || m.Class == NodeClassMaintenance) {
			fail("a down or held node may receive bricks")
		}
		// A recovery window is only measured for a down node.
		down := m.Class == NodeClassUnhealthy
		if down == slices.Contains(m.ResetOnEntry, CursorAliveSince) {
			fail("aliveSince must be kept exactly by the down states")
		}
		for _, c := range m.StampOnEntry {
			if slices.Contains(m.ResetOnEntry, c) {
				fail("a cursor is both reset and stamped")
			}
		}
		if def.IsTerminal(st.Name) && m.GD2 != GD2Never {
			fail("a terminal state reads GD2")
		}
		if m.Leaving() && m.Counts() {
			fail("a leaving node counts")
		}
	}
}

func TestNodeMeaningOfStatesOutsideTheDefinition(t *testing.T) {
	if got := NodeMeaning(""); !reflect.DeepEqual(got, NodeMeaning(NodePending)) {
		t.Errorf("the empty state means %+v, want Pending's", got)
	}
	// A peer with no mirrored state (new, or not anthill's) may receive.
	if !NodeStateMayReceiveBricks("") {
		t.Error("a peer without a recorded node state may not receive bricks")
	}
	// A state this operator does not know (a newer one's) counts and reads
	// everything, but receives no brick: it may mean the node is leaving.
	m := NodeMeaning("Evacuating")
	if m.Class != NodeClassUnknown || !m.Counts() || m.Leaving() || m.MayReceiveBricks || m.Condition != PhaseProgressing || m.GD2 != GD2Always || !m.ReadsBricks {
		t.Errorf("an unknown state means %+v: want it to count, read everything, show Progressing and receive no brick", m)
	}
}

func TestNodeReadsGD2(t *testing.T) {
	for _, tc := range []struct {
		name             string
		state            fsm.State
		pvcBound, podRdy bool
		want             bool
	}{
		{"a pending node is decided from Kubernetes alone", NodePending, true, true, false},
		{"a provisioning node waits for its claims before asking GD2", NodeProvisioning, false, true, false},
		{"a provisioning node waits for its pod before asking GD2", NodeProvisioning, true, false, false},
		{"a provisioning node with its workload ready asks GD2", NodeProvisioning, true, true, true},
		{"an online node asks GD2 with its pod gone", NodeOnline, false, false, true},
		{"a deleted node decides nothing", NodeDeleted, true, true, false},
		{"an unknown state reads everything", "Bogus", false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NodeSnapshot{State: tc.state, PVCBound: tc.pvcBound, PodReady: tc.podRdy}
			if got := NodeReadsGD2(s); got != tc.want {
				t.Errorf("NodeReadsGD2(%+v) = %t, want %t", s, got, tc.want)
			}
		})
	}
}
