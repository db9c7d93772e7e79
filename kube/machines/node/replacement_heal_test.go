package node

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/states"
)

// A replacement's heal goes on the node's ledger before it runs, with the
// options it sets and the drain's cause, once however often it is sent
// again; the next brick's, after its move, is an entry of its own.
func TestNodeSyncerRecordsAReplacementsHealBeforeItRuns(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.State = string(states.NodeDraining)
	node.Status.PeerID = "peer-a"
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "drain", Reason: "DecommissionRequested"}}
	snap := states.NodeSnapshot{State: states.NodeDraining, HealReplacementVolume: "v", HealReplacementBrick: "/b/1",
		HealReplacementOptions: effects.ReplacementHealOptions()}
	d := states.Decision{Step: states.NodeHealReplacement, Reason: states.ReasonHealingReplacement}
	if !recordAhead(node, snap, d, f.clock.Now()) {
		t.Fatal("a replacement's heal not on record must be recorded before it runs")
	}
	l := node.Status.Ledger
	if len(l) != 1 || l[0].Action != operatorv1alpha1.LedgerActionHealReplacement || l[0].Volume != "v" || l[0].Brick != "/b/1" ||
		fmt.Sprint(l[0].Options) != fmt.Sprint(effects.ReplacementHealOptions()) || l[0].Cause != "DecommissionRequested" || l[0].Peer != "peer-a" {
		t.Fatalf("ledger before a replacement's heal: %+v", l)
	}
	if recordAhead(node, snap, d, f.clock.Now()) {
		t.Error("the heal sent again was recorded again")
	}
	// The heal is the volume's (its options, a full heal): the next
	// brick's, after that brick's move, is a change of its own.
	move := states.Decision{Step: states.NodeMoveBrick, Reason: states.ReasonMovingBrick}
	snap.NextBrickVolume, snap.NextBrickPath = "v", "/b/2"
	recordAhead(node, snap, move, f.clock.Now())
	snap.HealReplacementBrick = "/b/2"
	if !recordAhead(node, snap, d, f.clock.Now()) || len(node.Status.Ledger) != 3 {
		t.Errorf("the next brick's heal, after its move, was not recorded: %+v", node.Status.Ledger)
	}
}

// When GD2 accepted a replacement's heal, the node records when, per
// moved brick; a heal sent again moves that time, and another brick gets
// an entry of its own.
func TestAnAcceptedHealIsRecordedPerBrick(t *testing.T) {
	t0 := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	heals := withReplacementHeal(nil, states.BrickRef{Volume: "v", Path: "/b/1"}, t0)
	heals = withReplacementHeal(heals, states.BrickRef{Volume: "v", Path: "/b/2"}, t0)
	again := withReplacementHeal(heals, states.BrickRef{Volume: "v", Path: "/b/1"}, t0.Add(10*time.Second))
	want := []operatorv1alpha1.ReplacementHeal{
		{Volume: "v", Path: "/b/1", Time: metav1.Time{Time: t0.Add(10 * time.Second)}},
		{Volume: "v", Path: "/b/2", Time: metav1.Time{Time: t0}},
	}
	if fmt.Sprint(again) != fmt.Sprint(want) {
		t.Errorf("heals %v, want %v", again, want)
	}
	if !heals[0].Time.Time.Equal(t0) {
		t.Error("recording a heal again changed the list it was given")
	}
}

// A node's drain reads the moves and accepted heals of the other nodes of
// its cluster that drain too: a set one of them moved a brick of is judged
// by that replacement's evidence.
func TestADrainSeesTheReplacementsOfTheClustersOtherDrains(t *testing.T) {
	f := newNodeFixture(t)
	f.addNode("gc-z1-b")
	other := f.nodeNamed("gc-z1-b")
	at := metav1.NewTime(f.clock.Now())
	other.Status.State, other.Status.PeerID = string(states.NodeDraining), "peer-b"
	other.Status.MovedBricks = []operatorv1alpha1.BrickRef{{Volume: "w", Path: "/b/9"}}
	other.Status.ReplacementHeals = []operatorv1alpha1.ReplacementHeal{{Volume: "w", Path: "/b/9", Time: at}}
	if err := f.nodes.Update(other); err != nil {
		t.Fatal(err)
	}
	node := f.node()
	node.Status.ReplacementHeals = []operatorv1alpha1.ReplacementHeal{{Volume: "v", Path: "/b/1", Time: at}}
	movedBy, heals := f.syncer.replacements(node, "peer-a", []states.BrickRef{{Volume: "v", Path: "/b/1"}})
	if movedBy[states.BrickRef{Volume: "v", Path: "/b/1"}] != "peer-a" || movedBy[states.BrickRef{Volume: "w", Path: "/b/9"}] != "peer-b" {
		t.Errorf("moved by %v: want this node's move and the other drain's", movedBy)
	}
	if len(heals) != 2 {
		t.Errorf("heals %v: want this node's and the other drain's", heals)
	}
}

// Counts cleared for a node whose bricks are not read leave nothing of an
// earlier reading.
func TestClearBrickCountsLeavesNoReading(t *testing.T) {
	s := states.NodeSnapshot{BricksOnNode: 3, ReplacementsFilling: 1, HealReplacementVolume: "v", HealReplacementNodeDown: "x", VolumeNodeDown: "y", DevicesEnabled: 2}
	clearBrickCounts(&s)
	if !reflect.DeepEqual(s, states.NodeSnapshot{}) {
		t.Errorf("left %+v", s)
	}
}
