package node

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// recordAhead is the runner's record-ahead phase for a decision of the
// node's from snap: the changes states' table says its action makes
// (states.NodeChanges), noted in the node's ledger. snap names the node,
// its recorded peer and its drain's cause as the node's gatherer does.
func recordAhead(node *operatorv1alpha1.GlusterNode, snap states.NodeSnapshot, d states.Decision, now time.Time) bool {
	snap.Name, snap.RecordedPeerID, snap.DrainCause = node.Name, node.Status.PeerID, drainCause(node)
	return machinestatus.NodeLedger{}.Note(node, states.NodeChanges(snap, d), now)
}

// TestNodeSyncerRecordsAMoveBeforeItRuns: a brick move goes on record in
// the node's own ledger, with its targets, reason and the drain's cause,
// before it runs (the runner writes the record, and the move waits for a
// later sync). Its retry, even to other targets, records nothing more;
// the next brick's move is a new entry.
func TestNodeSyncerRecordsAMoveBeforeItRuns(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.State = string(states.NodeDraining)
	node.Status.PeerID = "peer-a"
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	snap := states.NodeSnapshot{State: states.NodeDraining, NextBrickVolume: "v", NextBrickPath: "/b/1",
		NextBrickPlan: states.MovePlan{Targets: []string{"peer-b", "peer-c"}}}
	d := states.Decision{Step: states.NodeMoveBrick, Reason: states.ReasonMovingBrick}
	if !recordAhead(node, snap, d, f.clock.Now()) {
		t.Fatal("a move not on record must be recorded before it runs")
	}
	l := node.Status.Ledger
	if len(l) != 1 || l[0].Node != "gc-z1-a" || l[0].Peer != "peer-a" || l[0].Volume != "v" || l[0].Brick != "/b/1" ||
		fmt.Sprint(l[0].TargetPeers) != "[peer-b peer-c]" || l[0].Reason != states.ReasonMovingBrick || l[0].Cause != "DecommissionRequested" {
		t.Fatalf("ledger before a move: %+v", l)
	}
	snap.NextBrickPlan.Targets = []string{"peer-c"}
	if recordAhead(node, snap, d, f.clock.Now()) {
		t.Error("the move's retry, to other targets, was recorded again")
	}
	snap.NextBrickPath = "/b/2"
	if !recordAhead(node, snap, d, f.clock.Now()) || len(node.Status.Ledger) != 2 {
		t.Errorf("the next brick's move was not recorded: %+v", node.Status.Ledger)
	}
}

// TestNodeSyncerLedgersLastingChanges: a deleted peer, a restart at a new
// version and a device change go on record before their action runs,
// once each however often the step repeats or its action fails and is
// retried; a second upgrade's restart is a new entry, and a device change
// on a dead peer (which the action skips) is not recorded. The node's
// ledger keeps its newest entries.
func TestNodeSyncerLedgersLastingChanges(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.PeerID = "peer-a"
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	record := func(in fsm.State, d states.Decision, snap states.NodeSnapshot) {
		t.Helper()
		snap.State = in
		recordAhead(node, snap, d, f.clock.Now())
	}
	alive := states.NodeSnapshot{PeerKnown: true, PeerAlive: true}
	for range 2 {
		record(states.NodeDetaching, states.Decision{Step: states.NodeDeletePeer, Reason: "BricksMoved"}, alive)
	}
	for _, v := range []string{"v2", "v2", "v3"} {
		record(states.NodeRestarting, states.Decision{Step: states.NodeRollWorkload, Reason: "Upgrade"}, states.NodeSnapshot{TargetVersion: v})
	}
	record(states.NodeOnline, states.Decision{Event: states.NodeDrain, Reason: "DecommissionRequested"}, states.NodeSnapshot{PeerKnown: true})
	record(states.NodeOnline, states.Decision{Event: states.NodeEnterMaintenance, Reason: "MaintenanceRequested"}, alive)

	var got []string
	for _, e := range node.Status.Ledger {
		if e.Node != node.Name || e.Peer != "peer-a" {
			t.Errorf("entry names the wrong node: %+v", e)
		}
		got = append(got, e.Action+"@"+e.Version+":"+e.Cause)
	}
	want := []string{"deletePeer@:DecommissionRequested", "rollWorkload@v2:", "rollWorkload@v3:", "disableDevices@:"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger = %v, want %v", got, want)
	}
	if l := node.Status.Ledger; l[len(l)-1].State != string(states.NodeMaintenance) {
		t.Errorf("an event's entry is in %s, want its target %s", l[len(l)-1].State, states.NodeMaintenance)
	}
	for i := range operatorv1alpha1.MaxNodeLedger {
		record(states.NodeDraining, states.Decision{Step: states.NodeMoveBrick}, states.NodeSnapshot{NextBrickVolume: "v", NextBrickPath: fmt.Sprint(i)})
	}
	if l := node.Status.Ledger; len(l) != operatorv1alpha1.MaxNodeLedger || l[0].Brick != "0" {
		t.Errorf("the node's ledger holds %d entries from %+v, want the newest %d", len(l), l[0], operatorv1alpha1.MaxNodeLedger)
	}
}

// TestDeletedNodeWaitsForItsLedgerInTheCluster: a node that reached
// Deleted keeps its GlusterNode until its cluster's ledger holds every
// entry of its own; then it is deleted.
func TestDeletedNodeWaitsForItsLedgerInTheCluster(t *testing.T) {
	f := newNodeFixture(t)
	ctx := context.Background()
	node := f.node()
	node.Status.State = string(states.NodeDeleted)
	node.Status.Ledger = []operatorv1alpha1.LedgerEntry{fixtures.LedgerMove(node.Name, "/b/1")}
	if _, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(f.node()); err != nil {
		t.Fatal(err)
	}
	res, err := f.syncer.Sync(ctx, gather.NodeKey("ns", node.Name))
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("sync = %+v, %v; want a wait", res, err)
	}
	if _, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(ctx, node.Name, metav1.GetOptions{}); err != nil {
		t.Fatalf("the node was removed before its cluster's ledger held its entries: %v", err)
	}
	c, err := f.syncer.Clusters.GlusterClusters("ns").Get("gc")
	if err != nil {
		t.Fatal(err)
	}
	c = c.DeepCopy()
	c.Status.Ledger = f.node().Status.Ledger
	if err := f.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.syncer.Sync(ctx, gather.NodeKey("ns", node.Name)); err != nil {
		t.Fatal(err)
	}
	if n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(ctx, node.Name, metav1.GetOptions{}); err == nil && n.DeletionTimestamp == nil {
		t.Fatal("the node was kept after its cluster's ledger held its entries")
	}
}
