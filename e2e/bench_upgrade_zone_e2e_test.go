//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// BenchmarkUpgradeZoneBatched upgrades 30 nodes in 3 zones (10 each), with
// the clients writing at the sandbox's rates (framework.SandboxWriteRate)
// throughout, on one cluster: three times zone by zone (upgradePolicy
// maxParallel 10, perZone: a zone is one batch), then, to the next patch
// release, once node by node (maxParallel 1). Each run is measured against
// the lower bound the simulator's model implies: a batch lasts at least as
// long as its slowest node's restart (measured: how long GD2 listed its
// peer offline) plus the heal of what was written meanwhile (WriteRate ×
// downtime entries per replica set, drained at HealRate; none for a node
// without bricks), and batches go one after another. It prints every
// run's ratio (targets: zone by zone at most 1.15 in each run, node by
// node at most 1.2). Run with `make bench`.
func BenchmarkUpgradeZoneBatched(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	const writeRate, healRate = framework.SandboxWriteRate, framework.SandboxHealRate
	const startup = 3 * time.Second
	const perZone, zones = 10, 3
	for i := range b.N {
		ns := newNamespace(b)
		name := fmt.Sprintf("bench-zones-%d", i)
		createClusterWithSim(b, ns, name, perZone, framework.SimOptions{Seed: 5, WriteRate: writeRate, HealRate: healRate, StartupDelay: startup})
		g := gd2Client(b)
		nodes := waitNodes(b, ns, name, perZone*zones, 10*time.Minute)
		// Ten replica-3 volumes: thirty bricks, at most one per zone in
		// each replica set, so the nodes of a zone share no replica set.
		var vols []string
		for v := range 10 {
			vols = append(vols, fmt.Sprintf("benchz%d", v))
			createReplicatedVolume(b, g, vols[v])
		}
		waitVolumesHealthy(b, ns, name, vols, 5*time.Minute)
		zoneOf := map[string]string{}
		for _, n := range nodes {
			zoneOf[n.Status.PeerID] = n.Spec.Zone
		}
		withBricks := map[string]bool{}
		for _, peers := range replicaSets(b, g, vols) {
			for _, p := range peers {
				withBricks[p] = true
			}
		}
		model := upgradeModel{writeRate: writeRate, healRate: healRate, withBricks: withBricks}
		check := func(r *upgradeRun) {
			if len(r.down) != perZone*zones {
				b.Fatalf("saw %d peers restart (want %d)", len(r.down), perZone*zones)
			}
		}

		setUpgradePolicy(b, ns, name, perZone, true)
		var batchedTook time.Duration
		for run, version := range []string{"4.1.1", "4.1.2", "4.1.3"} {
			batched := timeUpgrade(b, ns, name, g, version, 10*time.Minute)
			waitUpgradeState(b, ns, name, "Complete", 5*time.Minute)
			check(batched)
			batchedLower := model.lowerBound(batched.down, func(peer string) string { return zoneOf[peer] })
			batchedRatio := batched.elapsed.Seconds() / batchedLower.Seconds()
			batchedTook = batched.elapsed
			unit := fmt.Sprintf("zone-batched-run%d", run+1)
			b.ReportMetric(batched.elapsed.Seconds(), unit+"-s")
			b.ReportMetric(batchedLower.Seconds(), unit+"-lower-bound-s")
			b.ReportMetric(batchedRatio, unit+"-ratio")
			fmt.Printf("bench: run %d: zone-batched upgrade of %d nodes (%d zones, maxParallel %d, perZone) took %s; lower bound (slowest restart incl. %s GD2 start-up + heal at %.0f/%.0f entries/s, per batch, one batch at a time) %s; ratio %.2f (target <= 1.15); load average %s\n",
				run+1, perZone*zones, zones, perZone, batched.elapsed.Round(time.Millisecond), startup, float64(writeRate), float64(healRate), batchedLower.Round(time.Millisecond), batchedRatio, loadAverage())
		}
		setUpgradePolicy(b, ns, name, 1, false)
		serial := timeUpgrade(b, ns, name, g, "4.1.4", 20*time.Minute)
		check(serial)
		serialLower := model.lowerBound(serial.down, func(peer string) string { return peer })
		serialRatio := serial.elapsed.Seconds() / serialLower.Seconds()
		b.ReportMetric(serial.elapsed.Seconds(), "node-by-node-s")
		b.ReportMetric(serialLower.Seconds(), "node-by-node-lower-bound-s")
		b.ReportMetric(serialRatio, "node-by-node-ratio")
		fmt.Printf("bench: node-by-node upgrade of the same %d nodes (maxParallel 1) took %s; lower bound (restart + heal per node, one at a time) %s; ratio %.2f (target <= 1.2); the last zone-batched run was %.1fx faster; load average %s\n",
			perZone*zones, serial.elapsed.Round(time.Millisecond), serialLower.Round(time.Millisecond), serialRatio, serial.elapsed.Seconds()/batchedTook.Seconds(), loadAverage())
	}
}

// upgradeModel is what the simulator's heal model makes a node's upgrade
// cost at least: its peer's downtime, then, for a peer holding bricks, the
// heal of WriteRate × downtime entries at HealRate (every brick heals at
// that rate on its own, so a peer's bricks heal in parallel).
type upgradeModel struct {
	writeRate, healRate float64
	withBricks          map[string]bool
}

// lowerBound sums, over the batches batchOf groups the peers into, the
// cost of the batch's most expensive peer.
func (m upgradeModel) lowerBound(down map[string]time.Duration, batchOf func(peer string) string) time.Duration {
	worst := map[string]time.Duration{}
	for p, d := range down {
		cost := d
		if m.withBricks[p] {
			cost += time.Duration(float64(d) * m.writeRate / m.healRate)
		}
		worst[batchOf(p)] = max(worst[batchOf(p)], cost)
	}
	var sum time.Duration
	for _, c := range worst {
		sum += c
	}
	return sum
}

// upgradeRun is one measured upgrade: from the version change to the moment
// the test saw every server done, and each restarted peer's downtime.
type upgradeRun struct {
	elapsed time.Duration
	down    map[string]time.Duration
}

// timeUpgrade sets the version and waits until the upgrade machine has
// fired serversDone for this run, sampling GD2's peers meanwhile. The end
// is when the test saw it (polled every 250 ms), not the history's
// timestamp, which has a resolution of one second.
func timeUpgrade(b *testing.B, ns, name string, g *gd2.Client, version string, timeout time.Duration) *upgradeRun {
	b.Helper()
	timeline := startPeerTimeline(g)
	defer timeline.stop()
	start := time.Now()
	setGlusterVersion(b, ns, name, version)
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		up := c.Status.Upgrade
		if up == nil || up.ToVersion != version {
			return false, fmt.Errorf("no run to %s yet", version)
		}
		// Once validated recorded this run's target, the last
		// requestUpgrade in the history is this run's.
		done := false
		for _, h := range up.History {
			switch h.Event {
			case "requestUpgrade":
				done = false
			case "serversDone":
				done = true
			}
		}
		return done, fmt.Errorf("upgrade to %s is %s (%s), batch %v", version, up.State, up.Message, up.CurrentNodes)
	})
	elapsed := time.Since(start)
	if err != nil {
		dumpNamespace(b, ns)
		b.Fatalf("upgrade to %s: %v", version, err)
	}
	timeline.stop()
	return &upgradeRun{elapsed: elapsed, down: timeline.downtime()}
}

// setUpgradePolicy sets upgradePolicy.maxParallel and perZone.
func setUpgradePolicy(t testing.TB, ns, name string, maxParallel int32, perZone bool) {
	t.Helper()
	editCluster(t, ns, name, func(c *operatorv1alpha1.GlusterCluster) {
		if c.Spec.UpgradePolicy == nil {
			c.Spec.UpgradePolicy = &operatorv1alpha1.UpgradePolicy{}
		}
		c.Spec.UpgradePolicy.MaxParallel, c.Spec.UpgradePolicy.PerZone = maxParallel, perZone
	})
}
