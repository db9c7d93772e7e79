package machines

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

func move(node, brick string) operatorv1alpha1.LedgerEntry {
	return operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionReplaceBrick, Node: node, Volume: "v", Brick: brick}
}

func TestLedgerKeepsEachMoveOnceAndTheNewestHundred(t *testing.T) {
	var ledger []operatorv1alpha1.LedgerEntry
	for i := range operatorv1alpha1.MaxLedger + 5 {
		var changed bool
		ledger, changed = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("n", fmt.Sprint(i))})
		if !changed {
			t.Fatalf("entry %d was not added", i)
		}
	}
	if len(ledger) != operatorv1alpha1.MaxLedger || ledger[0].Brick != "5" || ledger[len(ledger)-1].Brick != "104" {
		t.Fatalf("ledger holds %d entries, %s to %s; want the newest %d", len(ledger), ledger[0].Brick, ledger[len(ledger)-1].Brick, operatorv1alpha1.MaxLedger)
	}
	recovered := move("n", "104")
	recovered.Recovered = true
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{recovered}); changed {
		t.Error("a move already recorded was recorded again as recovered")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("other", "104")}); !changed {
		t.Error("the same brick path moved off another node is another move")
	}
}

func clusterLedger(t *testing.T, f *nodeFixture) []operatorv1alpha1.LedgerEntry {
	t.Helper()
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Status.Ledger
}

// TestNodeSyncerLedgersEveryMoveOnceAcrossACrash: a move persisted by the
// node's status write lands in the cluster's ledger with its targets and
// reason; a move whose ledger write was lost (the operator died between
// the two writes) is recorded as recovered before the node does anything
// else, and only once.
func TestNodeSyncerLedgersEveryMoveOnceAcrossACrash(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.State = string(states.NodeDraining)
	node.Status.PeerID = "peer-a"
	node.Status.MovedBricks = []operatorv1alpha1.BrickRef{{Volume: "v", Path: "/b/1"}}
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	out := engine.Outcome[*nodeSync]{
		Instance: engine.Instance[*nodeSync]{State: states.NodeDraining, Facts: &nodeSync{
			snap: states.NodeSnapshot{NextBrickVolume: "v", NextBrickPath: "/b/1"},
			view: nodeView{move: states.MovePlan{Targets: []string{"peer-b", "peer-c"}}},
		}},
		Kind: engine.Stepped, Decision: states.Decision{Step: states.NodeMoveBrick, Reason: states.ReasonMovingBrick}, To: states.NodeDraining,
	}
	if _, err := f.syncer.Finish(context.Background(), node, []engine.Outcome[*nodeSync]{out}, engine.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	ledger := clusterLedger(t, f)
	if len(ledger) != 1 || ledger[0].Node != "gc-z1-a" || ledger[0].Peer != "peer-a" || ledger[0].Volume != "v" || ledger[0].Brick != "/b/1" ||
		fmt.Sprint(ledger[0].TargetPeers) != "[peer-b peer-c]" || ledger[0].Reason != states.ReasonMovingBrick || ledger[0].Cause != "DecommissionRequested" || ledger[0].Recovered {
		t.Fatalf("ledger after a move: %+v", ledger)
	}

	// The next move was persisted on the node, then the operator died.
	node.Status.MovedBricks = append(node.Status.MovedBricks, operatorv1alpha1.BrickRef{Volume: "v", Path: "/b/2"})
	for range 2 { // the cluster lister is stale: the second Prepare must not add it again
		if done, _, err := f.syncer.Prepare(context.Background(), node.DeepCopy()); done || err != nil {
			t.Fatalf("Prepare = %t, %v", done, err)
		}
	}
	ledger = clusterLedger(t, f)
	if len(ledger) != 2 || ledger[1].Brick != "/b/2" || !ledger[1].Recovered || ledger[1].Cause != "DecommissionRequested" {
		t.Fatalf("ledger after the restart: %+v", ledger)
	}
}

// TestNodeSyncerLedgersLastingChanges: a deleted peer, a restart at a new
// version and a device change reach the ledger before their action runs,
// once each however often the step repeats or its action fails and is
// retried; a second upgrade's restart is a new entry, and a device change
// on a dead peer (which the action skips) is not recorded.
func TestNodeSyncerLedgersLastingChanges(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.PeerID = "peer-a"
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	act := func(in, to fsm.State, d states.Decision, snap states.NodeSnapshot) {
		t.Helper()
		ctx := engine.WithAction(context.Background(), engine.ActionContext{State: string(in), Target: string(to)})
		// The action itself runs against empty fakes and may fail: the
		// entry is written before it, and a failed action is retried.
		_ = f.syncer.Act(ctx, node, engine.Instance[*nodeSync]{State: in, Facts: &nodeSync{snap: snap}}, d)
	}
	alive := states.NodeSnapshot{PeerKnown: true, PeerAlive: true}
	for range 2 {
		act(states.NodeDetaching, "", states.Decision{Step: states.NodeDeletePeer, Reason: "BricksMoved"}, alive)
	}
	for _, v := range []string{"v2", "v2", "v3"} {
		act(states.NodeRestarting, "", states.Decision{Step: states.NodeRollWorkload, Reason: "Upgrade"}, states.NodeSnapshot{TargetVersion: v})
	}
	act(states.NodeOnline, states.NodeDraining, states.Decision{Event: states.NodeDrain, Reason: "DecommissionRequested"}, states.NodeSnapshot{PeerKnown: true})
	act(states.NodeOnline, states.NodeMaintenance, states.Decision{Event: states.NodeEnterMaintenance, Reason: "MaintenanceRequested"}, alive)

	var got []string
	for _, e := range clusterLedger(t, f) {
		if e.Node != node.Name || e.Peer != "peer-a" {
			t.Errorf("entry names the wrong node: %+v", e)
		}
		got = append(got, e.Action+"@"+e.Version+":"+e.Cause)
	}
	want := []string{"deletePeer@:DecommissionRequested", "rollWorkload@v2:", "rollWorkload@v3:", "disableDevices@:"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger = %v, want %v", got, want)
	}
	if l := clusterLedger(t, f); l[len(l)-1].State != string(states.NodeMaintenance) {
		t.Errorf("an event's entry is in %s, want its target %s", l[len(l)-1].State, states.NodeMaintenance)
	}
}

// TestLedgerWriteKeepsANewerStatus: the ledger write stamps this
// operator's status schema level, and refuses to write a cluster status a
// newer operator wrote (it would drop the fields this one does not know).
func TestLedgerWriteKeepsANewerStatus(t *testing.T) {
	f := newNodeFixture(t)
	ctx := context.Background()
	clusters := f.anthill.OperatorV1alpha1().GlusterClusters("ns")
	if err := appendLedger(ctx, f.anthill, "ns", "gc", []operatorv1alpha1.LedgerEntry{move("n", "/b/1")}); err != nil {
		t.Fatal(err)
	}
	c, err := clusters.Get(ctx, "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.StatusSchema != operatorv1alpha1.StatusSchemaLevel {
		t.Errorf("statusSchema %d after a ledger write, want %d", c.Status.StatusSchema, operatorv1alpha1.StatusSchemaLevel)
	}
	c.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel + 1
	if _, err := clusters.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := appendLedger(ctx, f.anthill, "ns", "gc", []operatorv1alpha1.LedgerEntry{move("n", "/b/2")}); err == nil {
		t.Error("the ledger was written into a newer operator's status")
	}
	if l := clusterLedger(t, f); len(l) != 1 {
		t.Errorf("ledger %+v, want the first entry only", l)
	}
}
