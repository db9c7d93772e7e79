package states

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// ledgerLine is a change as the tests compare it.
func ledgerLine(c Change) string {
	return fmt.Sprintf("%s %s/%s %s:%s %v v=%s t=%s/%d o=%v %v @%s %s cause=%s", c.Action, c.Node, c.Peer, c.Volume, c.Brick, c.TargetPeers,
		c.Version, c.Template, c.Count, c.Objects, c.Options, c.State, c.Reason, c.Cause)
}

func ledgerLines(cs []Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, ledgerLine(c))
	}
	return out
}

// The node's change table: what each acting event and step puts on
// record, naming the node, its recorded peer, the state after the action
// and the reason; a device change on a peer not alive records nothing.
func TestNodeChanges(t *testing.T) {
	base := NodeSnapshot{
		Name: "n", RecordedPeerID: "p", DrainCause: "DecommissionRequested", PeerKnown: true, PeerAlive: true,
		NextBrickVolume: "v", NextBrickPath: "/b/1", NextBrickPlan: MovePlan{Targets: []string{"q", "r"}},
		HealReplacementVolume: "v", HealReplacementBrick: "/b/0", HealReplacementOptions: []string{"a=b"},
		TargetVersion: "11.1",
	}
	dead := base
	dead.PeerAlive = false
	for _, tc := range []struct {
		name string
		snap NodeSnapshot
		in   Decision
		want []string
	}{
		{name: "maintenance disables the devices", snap: base, in: Decision{Event: NodeEnterMaintenance, Reason: "R"},
			want: []string{"disableDevices n/p : [] v= t=/0 o=[] [] @Maintenance R cause="}},
		{name: "a drain's disable names the drain's own reason as its cause", snap: base, in: Decision{Event: NodeDrain, Reason: "R"},
			want: []string{"disableDevices n/p : [] v= t=/0 o=[] [] @Draining R cause=R"}},
		{name: "a dead peer's devices change nothing", snap: dead, in: Decision{Event: NodeDrain, Reason: "R"}},
		{name: "a restart disables the devices", snap: base, in: Decision{Event: NodeRestart, Reason: "R"},
			want: []string{"disableDevices n/p : [] v= t=/0 o=[] [] @Restarting R cause="}},
		{name: "resume enables them", snap: base, in: Decision{Event: NodeResume, Reason: "R"},
			want: []string{"enableDevices n/p : [] v= t=/0 o=[] [] @Online R cause="}},
		{name: "the disable step", snap: base, in: Decision{Step: NodeDisableDevices, Reason: "R"},
			want: []string{"disableDevices n/p : [] v= t=/0 o=[] [] @Maintenance R cause="}},
		{name: "the enable step", snap: base, in: Decision{Step: NodeEnableDevices, Reason: "R"},
			want: []string{"enableDevices n/p : [] v= t=/0 o=[] [] @Maintenance R cause="}},
		{name: "a move names the brick and its targets", snap: base, in: Decision{Step: NodeMoveBrick, Reason: "R"},
			want: []string{"replaceBrick n/p v:/b/1 [q r] v= t=/0 o=[] [] @Maintenance R cause=DecommissionRequested"}},
		{name: "a replacement's heal names its options", snap: base, in: Decision{Step: NodeHealReplacement, Reason: "R"},
			want: []string{"healReplacement n/p v:/b/0 [] v= t=/0 o=[] [a=b] @Maintenance R cause=DecommissionRequested"}},
		{name: "the peer's deletion names the drain's cause", snap: base, in: Decision{Step: NodeDeletePeer, Reason: "R"},
			want: []string{"deletePeer n/p : [] v= t=/0 o=[] [] @Maintenance R cause=DecommissionRequested"}},
		{name: "the workload's deletion too", snap: base, in: Decision{Step: NodeDeleteWorkload, Reason: "R"},
			want: []string{"deleteWorkload n/p : [] v= t=/0 o=[] [] @Maintenance R cause=DecommissionRequested"}},
		{name: "a roll names the version", snap: base, in: Decision{Step: NodeRollWorkload, Reason: "R"},
			want: []string{"rollWorkload n/p : [] v=11.1 t=/0 o=[] [] @Maintenance R cause="}},
		{name: "a lost pod's eviction", snap: base, in: Decision{Step: NodeEvictLostPod, Reason: "R"},
			want: []string{"evictLostPod n/p : [] v= t=/0 o=[] [] @Maintenance R cause="}},
		{name: "a join records nothing", snap: base, in: Decision{Event: NodeJoin}},
		{name: "a wait records nothing", snap: base, in: Decision{Reason: "R"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap
			s.State = NodeMaintenance
			if tc.in.Event != "" {
				s.State = NodeOnline
				if tc.in.Event == NodeRestart {
					s.State = NodeQuiescing
				}
				if tc.in.Event == NodeResume {
					s.State = NodeMaintenance
				}
			}
			if got := ledgerLines(NodeChanges(s, tc.in)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("changes %q, want %q", got, tc.want)
			}
		})
	}
	// An event the state does not allow has no target, and no change.
	if got := NodeChanges(NodeSnapshot{State: NodeDeleted, PeerKnown: true, PeerAlive: true}, Decision{Event: NodeDrain}); got != nil {
		t.Errorf("an event not allowed in the state records %+v", got)
	}
}

// A restart's decision carries its disable, and the roll that Restarting
// runs first, which the transition's write puts on record ahead; no other
// decision carries anything ahead.
func TestDecideNodeRecordsTheRollAheadOfARestart(t *testing.T) {
	s := healthyNode(NodeQuiescing)
	s.Name, s.RecordedPeerID = "n", "p"
	s.UpgradeSelected, s.TargetVersion = true, "11.1"
	d := DecideNode(s)
	if d.Event != NodeRestart {
		t.Fatalf("decided %+v, want a restart", d)
	}
	if got := ledgerLines(d.Changes); len(got) != 1 || got[0] != "disableDevices n/p : [] v= t=/0 o=[] [] @Restarting "+d.Reason+" cause=" {
		t.Errorf("the restart's changes: %q", got)
	}
	if got := ledgerLines(d.Ahead); len(got) != 1 || got[0] != "rollWorkload n/p : [] v=11.1 t=/0 o=[] [] @Restarting "+ReasonRestarting+" cause=" {
		t.Errorf("the roll ahead: %q", got)
	}
	for _, tc := range nodeCases() {
		s := healthyNode(tc.state)
		if tc.mutate != nil {
			tc.mutate(&s)
		}
		if d := DecideNode(s); d.Ahead != nil && d.Event != NodeRestart {
			t.Errorf("%s: %s carries %+v ahead", tc.name, d.Event, d.Ahead)
		}
	}
}

// What a node's step changes in status besides its message: the moved
// brick, the heals GD2 accepted, a forced deletion's history entry.
func TestNodeStepEffects(t *testing.T) {
	s := NodeSnapshot{NextBrickVolume: "v", NextBrickPath: "/b/1", HealReplacementDue: []BrickRef{{Volume: "v", Path: "/b/0"}}}
	for step, want := range map[fsm.Step]NodeStepEffect{
		NodeMoveBrick:       {Moved: &BrickRef{Volume: "v", Path: "/b/1"}},
		NodeHealReplacement: {HealsStarted: []BrickRef{{Volume: "v", Path: "/b/0"}}},
		NodeEvictLostPod:    {History: true},
		NodeDeletePeer:      {},
	} {
		if got := NodeStepEffects(s, step); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %+v, want %+v", step, got, want)
		}
	}
}
