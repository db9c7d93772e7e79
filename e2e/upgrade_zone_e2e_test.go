//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// TestUpgradeZoneBatched upgrades a 6-node, 3-zone cluster (two nodes per
// zone) with upgradePolicy maxParallel 3 and perZone, while the simulator
// keeps writing to two replica-3 volumes with one brick per zone. maxParallel
// is larger than a zone on purpose: without perZone the first batch would
// take both nodes of zone-1 and one of zone-2. It checks, from GD2's peer
// list sampled every 50 ms, that no replica set ever had two bricks offline
// at once, that the two nodes of every zone were offline together (the
// batches ran in parallel) and that peers of two zones were never offline
// at the same time; from the nodes' histories, that each zone was one
// batch and the zones went one after another; that the operator,
// SIGKILLed while the second zone is being upgraded, carries on with that
// batch; and that the simulator saw no unsafe operation.
func TestUpgradeZoneBatched(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "zones"
	const to = "4.1.1"
	// As in TestUpgradeRollsNodeByNode: writes outpace heals, so every
	// restarted node comes back with a backlog; GD2 takes two seconds to
	// start after its pod is Ready, so the nodes of a batch are offline
	// long enough to be seen offline together.
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 4, WriteRate: 100, HealRate: 25, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	vols := []string{"zonea", "zoneb"}
	for _, v := range vols {
		createReplicatedVolume(t, g, v)
	}
	waitVolumesHealthy(t, ns, name, vols, 2*time.Minute)
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) {
		if c.Spec.UpgradePolicy == nil {
			c.Spec.UpgradePolicy = &operatorv1alpha1.UpgradePolicy{}
		}
		c.Spec.UpgradePolicy.MaxParallel, c.Spec.UpgradePolicy.PerZone = 3, true
	})

	// Every replica set must have one brick per zone, or the batches of
	// one zone would share replica sets and the safety gate, not the
	// batching, would decide what stops together.
	zoneOf := map[string]string{}
	for _, n := range nodes {
		zoneOf[n.Status.PeerID] = n.Spec.Zone
	}
	sets := replicaSets(t, g, vols)
	for set, peers := range sets {
		zones := map[string]bool{}
		for _, p := range peers {
			zones[zoneOf[p]] = true
		}
		if len(peers) != 3 || len(zones) != 3 {
			t.Fatalf("replica set %s has bricks on peers %v in zones %v, want one brick in each of three zones", set, peers, zones)
		}
	}

	timeline := startPeerTimeline(g)
	t.Cleanup(timeline.stop)
	setGlusterVersion(t, ns, name, to)

	// SIGKILL the operator while the second zone's batch is being
	// upgraded; it must carry on with that batch.
	var batch []string
	err := framework.WaitFor(context.Background(), 5*time.Minute, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		nodes, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return false, err
		}
		up := c.Status.Upgrade
		if up == nil || len(up.CurrentNodes) == 0 {
			return false, fmt.Errorf("no batch selected yet: %s", desc)
		}
		done, busy := 0, 0
		for _, n := range nodes {
			if n.Status.Version == to && n.Status.State == "Online" {
				done++
			}
		}
		for _, n := range up.CurrentNodes {
			if slices.Contains(upgradeStates, nodes[n].Status.State) {
				busy++
			}
		}
		if done == 2 && busy > 0 {
			batch = slices.Clone(up.CurrentNodes)
			return true, nil
		}
		return false, fmt.Errorf("%d node(s) upgraded, batch %v: %s", done, up.CurrentNodes, desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the second batch to be upgraded: %v", err)
	}
	restartOperator(t)
	t.Logf("operator SIGKILLed while batch %v was being upgraded", batch)

	c := waitUpgradeState(t, ns, name, "Complete", 10*time.Minute)
	timeline.stop()
	if up := c.Status.Upgrade; up.ToVersion != to {
		t.Errorf("upgrade recorded as %s -> %s, want -> %s", up.FromVersion, up.ToVersion, to)
	}
	if len(batch) != 2 || nodes[batch[0]].Spec.Zone != nodes[batch[1]].Spec.Zone {
		t.Errorf("the batch in flight at the SIGKILL was %v, want the two nodes of one zone", batch)
	}

	// From GD2's point of view.
	if w := timeline.worstReplicaSet(sets); w.count > 1 {
		t.Errorf("a replica set had bricks offline at once: %s", w)
	}
	if w := timeline.mostZones(); w.count != 1 {
		t.Errorf("peers of more than one zone (or of none) were offline at once: %s", w)
	}
	perZone := timeline.mostInOneZone()
	for _, z := range []string{"zone-1", "zone-2", "zone-3"} {
		if perZone[z] != 2 {
			t.Errorf("at most %d peer(s) of %s were offline at once, want both (batches of a zone run in parallel); all zones: %v", perZone[z], z, perZone)
		}
	}

	// From the nodes' own histories: each window runs from the node's
	// selection to its return to Online.
	type window struct {
		node, zone string
		start, end time.Time
	}
	final, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var windows []window
	for _, n := range final {
		if n.Status.Version != to || n.Status.State != "Online" {
			t.Errorf("node %s is %s at %q after the upgrade", n.Name, n.Status.State, n.Status.Version)
		}
		w := window{node: n.Name, zone: n.Spec.Zone}
		var path []string
		for _, h := range n.Status.History {
			if h.Event == "upgrade" {
				w.start = h.Time.Time
			}
			if !w.start.IsZero() {
				path = append(path, h.From)
				if h.To == "Online" {
					w.end = h.Time.Time
					path = append(path, h.To)
					break
				}
			}
		}
		// One pass each, also for the batch the SIGKILL interrupted.
		if got := strings.Join(path, " -> "); got != "Online -> Quiescing -> Restarting -> Rejoining -> HealWait -> Online" {
			t.Errorf("node %s went %q through the upgrade", n.Name, got)
		}
		windows = append(windows, w)
	}
	slices.SortFunc(windows, func(a, b window) int { return a.start.Compare(b.start) })
	for i := range windows {
		for _, o := range windows[i+1:] {
			overlap := o.start.Before(windows[i].end)
			switch {
			case o.zone != windows[i].zone && overlap:
				t.Errorf("%s (%s) was upgraded from %s, before %s (%s) was done at %s: one batch spanned two zones",
					o.node, o.zone, o.start.Format("15:04:05.000"), windows[i].node, windows[i].zone, windows[i].end.Format("15:04:05.000"))
			case o.zone == windows[i].zone && !overlap:
				t.Errorf("%s and %s (%s) were upgraded one after the other, not as one batch", windows[i].node, o.node, o.zone)
			}
		}
	}
	t.Logf("timeline: %d samples, %d changes of the offline set; most peers offline in one zone %v; most zones offline at once %s; worst replica set %s",
		timeline.samples, len(timeline.changes), perZone, timeline.mostZones(), timeline.worstReplicaSet(sets))
	noViolations(t)
}

// TestUpgradeBatchSharingReplicaSets: with maxParallel 3 and no perZone,
// the first batch takes both nodes of zone-1 and one of zone-2, and the
// zone-2 node shares a replica set with one of them. The batch still
// never has two bricks of one replica set offline: the later member
// waits (BatchMemberFirst) until the earlier one is back and healed.
func TestUpgradeBatchSharingReplicaSets(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "shared"
	const to = "4.1.1"
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 4, WriteRate: 100, HealRate: 25, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	vols := []string{"shareda", "sharedb"}
	for _, v := range vols {
		createReplicatedVolume(t, g, v)
	}
	waitVolumesHealthy(t, ns, name, vols, 2*time.Minute)
	setUpgradePolicy(t, ns, name, 3, false)
	// Six bricks on six nodes, one each: whichever node of zone-2 comes
	// first, it shares a replica set with a node of zone-1.
	sets := replicaSets(t, g, vols)
	holders := map[string]bool{}
	for _, peers := range sets {
		for _, p := range peers {
			holders[p] = true
		}
	}
	if len(holders) != 6 {
		t.Fatalf("the volumes' bricks are on %d peers, want one on each of the six", len(holders))
	}

	timeline := startPeerTimeline(g)
	t.Cleanup(timeline.stop)
	setGlusterVersion(t, ns, name, to)
	var firstBatch []string
	waited := map[string]bool{}
	err := framework.WaitFor(context.Background(), 10*time.Minute, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		up := c.Status.Upgrade
		if up == nil {
			return false, fmt.Errorf("no upgrade status")
		}
		if firstBatch == nil && len(up.CurrentNodes) > 0 {
			firstBatch = slices.Clone(up.CurrentNodes)
		}
		nodes, err := framework.ClusterNodes(ctx, anthill, ns, name)
		if err != nil {
			return false, err
		}
		for _, n := range nodes {
			if cond := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionProgressing); cond != nil && cond.Reason == states.ReasonBatchMemberFirst {
				waited[n.Name] = true
			}
		}
		return up.State == "Complete", fmt.Errorf("upgrade is %s (%s), batch %v", up.State, up.Message, up.CurrentNodes)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the upgrade to complete: %v", err)
	}
	timeline.stop()

	if len(firstBatch) != 3 {
		t.Errorf("first batch %v, want three nodes across two zones", firstBatch)
	}
	if w := timeline.worstReplicaSet(sets); w.count > 1 {
		t.Errorf("a replica set had bricks offline at once: %s", w)
	}
	if len(waited) == 0 {
		t.Errorf("no node was seen waiting for an earlier batch member (%s); the test did not exercise the gate", states.ReasonBatchMemberFirst)
	}
	t.Logf("first batch %v; waited for an earlier member: %v; most zones offline at once %s; worst replica set %s",
		firstBatch, slices.Sorted(maps.Keys(waited)), timeline.mostZones(), timeline.worstReplicaSet(sets))
	noViolations(t)
}
