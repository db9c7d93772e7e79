//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// TestDrainMovesBricksOfDifferentReplicaSetsTogether decommissions the node
// holding the most bricks of several volumes (replica 3, and a
// distributed-replicate 2x3 with subvolume-zones-overlap) with
// drainPolicy.maxParallelMoves 3, SIGKILLs the operator once two moves are
// on record, and shows from the ledger that a move started while an
// earlier replacement was still healing, that each brick moved exactly
// once (ledger and GD2's own record of replace-bricks), that every replica
// set kept its bricks in distinct zones at every moment sampled, and that
// the simulator saw no violation.
func TestDrainMovesBricksOfDifferentReplicaSetsTogether(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "pardrain"
	const parallel = 3
	createClusterEdited(t, ns, name, 2, defaultSimOptions, func(c *operatorv1alpha1.GlusterCluster) {
		c.Spec.DrainPolicy = &operatorv1alpha1.DrainPolicy{MaxParallelMoves: parallel}
	})
	waitNodes(t, ns, name, 6, 3*time.Minute)
	g := gd2Client(t)
	vols := []string{"pa", "pb", "pc", "pd", "pe"}
	for _, v := range vols[:4] {
		createReplicatedVolume(t, g, v)
	}
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "pe", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	// A backlog that takes each replacement several seconds to heal (at
	// the simulator's 40 entries/s), so that moves overlap visibly.
	for _, v := range vols {
		if err := simOf(t).Write(v, 300); err != nil {
			t.Fatal(err)
		}
	}
	waitVolumesHealthy(t, ns, name, vols, 3*time.Minute)

	nodes := waitNodes(t, ns, name, 6, time.Minute)
	victim, bricks := nodeWithMostSets(t, g, nodes, vols)
	if len(bricks) < 3 {
		t.Fatalf("node %s holds bricks in %d replica sets, want at least 3 to show moves overlap", victim, len(bricks))
	}
	peer := nodes[victim].Status.PeerID
	t.Logf("draining %s (peer %s), holding %v", victim, peer, bricks)

	timeline := startDrainTimeline(g, simOf(t).WholeSets, peer, vols...)
	defer timeline.finish()
	requestOnNode(t, ns, victim, "decommission")
	waitLedgerMoves(t, ns, victim, 2, 3*time.Minute)
	restartOperator(t)
	drained(t, g, ns, name, victim, peer, vols...)
	_, healed, zoneBreaks, samples := timeline.finish()
	for _, z := range zoneBreaks {
		t.Error(z)
	}
	noViolations(t)

	// Exactly once, as GD2 saw it.
	calls := simOf(t).DestructiveCalls()
	for _, r := range sim.RepeatedDestructiveCalls(calls) {
		t.Errorf("%s of %s sent again at %s after it succeeded at %s", r.Again.Op, r.Again.Target, r.Again.Time.Format(time.RFC3339Nano), r.First.Time.Format(time.RFC3339Nano))
	}
	if got := sim.SucceededDestructiveCalls(calls)["ReplaceBrick"]; got != len(bricks) {
		t.Errorf("%d replace-brick(s) succeeded for the %d brick(s) of the decommissioned node", got, len(bricks))
	}

	// Exactly once, and overlapping, as the ledger shows it.
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var moves []operatorv1alpha1.LedgerEntry
	for _, e := range c.Status.Ledger {
		if e.Action == operatorv1alpha1.LedgerActionReplaceBrick && e.Node == victim {
			moves = append(moves, e)
		}
	}
	var moved []string
	for _, e := range moves {
		moved = append(moved, e.Volume+" "+e.Brick)
	}
	sort.Strings(moved)
	if !slices.Equal(moved, bricks) {
		t.Fatalf("the ledger records the moves of %v, want each of %v once", moved, bricks)
	}
	// The ledger lists the moves in the order they were put on record,
	// each before its replace-brick was sent; its times are whole seconds,
	// so a move counts as started while an earlier one healed only with a
	// second to spare.
	var overlapped []string
	for i, a := range moves {
		end, ok := healed[a.Volume+" "+a.Brick]
		if !ok {
			t.Fatalf("the timeline (%d samples) never saw the replica set of %s %s healed after its move", samples, a.Volume, a.Brick)
		}
		for _, b := range moves[i+1:] {
			if b.Time.Add(time.Second).Before(end) {
				overlapped = append(overlapped, fmt.Sprintf("%s %s moved at %s while %s %s, moved at %s, healed only at %s",
					b.Volume, b.Brick, b.Time.Format(time.RFC3339), a.Volume, a.Brick, a.Time.Format(time.RFC3339), end.Format(time.RFC3339Nano)))
			}
		}
	}
	if len(overlapped) == 0 {
		t.Fatalf("no move started while an earlier replacement healed; moves %+v, healed %v", moves, healed)
	}
	t.Logf("%d move(s) started while an earlier replacement healed:\n%s", len(overlapped), strings.Join(overlapped, "\n"))
}

// waitLedgerMoves waits until node's ledger records n brick moves.
func waitLedgerMoves(t testing.TB, ns, node string, n int, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		gn, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		got := 0
		for _, e := range gn.Status.Ledger {
			if e.Action == operatorv1alpha1.LedgerActionReplaceBrick {
				got++
			}
		}
		return got >= n, fmt.Errorf("node %s is %s with %d move(s) on record: %s", node, gn.Status.State, got, gn.Status.Message)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for %d brick moves of %s on record: %v", n, node, err)
	}
}

// nodeWithMostSets is the node with bricks in the most replica sets of
// vols (the first by name among equals), and its bricks, "volume path",
// sorted.
func nodeWithMostSets(t testing.TB, g *gd2.Client, nodes map[string]operatorv1alpha1.GlusterNode, vols []string) (string, []string) {
	t.Helper()
	byPeer := map[string][]string{}
	for _, name := range vols {
		v, err := g.GetVolume(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range v.Bricks() {
			byPeer[b.PeerID] = append(byPeer[b.PeerID], name+" "+b.Path)
		}
	}
	best := ""
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		if best == "" || len(byPeer[nodes[n].Status.PeerID]) > len(byPeer[nodes[best].Status.PeerID]) {
			best = n
		}
	}
	out := byPeer[nodes[best].Status.PeerID]
	sort.Strings(out)
	return best, out
}
