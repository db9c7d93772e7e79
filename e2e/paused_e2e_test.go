//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// TestPausedHoldsADrain pauses a cluster in the middle of a drain: once the
// decommissioned node has moved one brick of its replica-3 volumes and
// still holds another, spec.paused keeps every remaining brick where it is
// and the node in Draining with reason Paused, even once the volumes have
// healed and nothing else holds the next move; clearing it lets the drain
// finish.
func TestPausedHoldsADrain(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "paused"
	createCluster(t, ns, name, 2)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	g := gd2Client(t)
	vols := []string{"rep", "dist"}
	createReplicatedVolume(t, g, "rep")
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "dist", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	for _, v := range vols {
		if err := simOf(t).Write(v, 40); err != nil {
			t.Fatal(err)
		}
		waitVolumeHealthy(t, ns, name, v, 2*time.Minute)
	}

	// The node holding the most bricks, so that the drain has a middle.
	bricksOn := func(peer string) int {
		n := 0
		for _, v := range vols {
			n += bricksByPeer(t, g, v)[peer]
		}
		return n
	}
	victim, most := "", 0
	for n, node := range nodes {
		if c := bricksOn(node.Status.PeerID); c > most {
			victim, most = n, c
		}
	}
	if most < 2 {
		t.Fatalf("no node holds two bricks; a drain would have no middle")
	}
	peer := nodes[victim].Status.PeerID

	// Self-heal crawls while the first brick moves, so that its
	// replacement keeps the next move waiting until the pause lands; it
	// runs fast again once the pause is seen, so that from then on only
	// the pause holds the drain.
	setHealRate(t, 0.1)
	requestOnNode(t, ns, victim, "decommission")
	waitMovedBrick(t, ns, victim, 2*time.Minute)
	setPaused(t, ns, name, true)
	waitNodeCondition(t, ns, victim, "Paused", time.Minute)
	held := bricksOn(peer)
	if held == 0 || held == most {
		t.Fatalf("paused at %d of %d bricks left on %s, not in the middle of the drain", held, most, victim)
	}
	t.Logf("paused with %d of %d bricks left on %s", held, most, victim)
	stillHeld := func() {
		t.Helper()
		if got := bricksOn(peer); got != held {
			t.Fatalf("a brick moved off %s while the cluster was paused: %d left, %d when paused", victim, got, held)
		}
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), victim, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionProgressing)
		if n.Status.State != "Draining" || c == nil || c.Reason != "Paused" {
			t.Fatalf("node %s while paused: %s (%+v), want Draining with reason Paused", victim, n.Status.State, c)
		}
	}
	setHealRate(t, 200)
	for _, v := range vols {
		waitVolumeHealthy(t, ns, name, v, time.Minute)
	}
	stillHeld()
	// The cluster, scaling to replace the leaving node, holds too.
	err := framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) (bool, error) {
		gc, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := apimeta.FindStatusCondition(gc.Status.Conditions, operatorv1alpha1.ConditionProgressing)
		return c != nil && c.Reason == "Paused", fmt.Errorf("cluster %s is %s: %+v", name, gc.Status.Phase, c)
	})
	if err != nil {
		t.Fatalf("waiting for the paused cluster to report Paused: %v", err)
	}

	// Bounded observation: with nothing but the pause holding it, the
	// drain stays where it was for the whole window.
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		stillHeld()
		time.Sleep(time.Second)
	}

	setPaused(t, ns, name, false)
	drained(t, g, ns, name, victim, peer, vols...)
	noViolations(t)
}

// setHealRate changes the simulator's self-heal rate (entries per second
// per brick) from now on.
func setHealRate(t testing.TB, rate float64) {
	t.Helper()
	if err := simOf(t).SetRates(0, rate); err != nil {
		t.Fatal(err)
	}
}

// setPaused sets the cluster's spec.paused.
func setPaused(t testing.TB, ns, cluster string, paused bool) {
	t.Helper()
	editCluster(t, ns, cluster, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.Paused = paused })
}
