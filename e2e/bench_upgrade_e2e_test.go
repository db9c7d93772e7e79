//go:build e2e

package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
)

// BenchmarkUpgrade measures a rolling upgrade of 6 nodes in 3 zones under
// a steady write load against the lower bound the simulator's model
// implies: each node must be down for its restart (measured: how long the
// simulator saw its peer offline — the pod's replacement plus GD2's
// modelled start-up delay) and must then heal what was written meanwhile
// (the model: WriteRate × downtime entries, drained at HealRate), one node
// at a time. The ratio is the operator's overhead on top of that (target:
// at most 1.3). Run with `make bench`.
func BenchmarkUpgrade(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	const writeRate, healRate = 20.0, 10.0
	const startup = 3 * time.Second
	for i := range b.N {
		ns := newNamespace(b)
		name := fmt.Sprintf("bench-up-%d", i)
		createClusterWithSim(b, ns, name, 2, framework.SimOptions{Seed: 3, WriteRate: writeRate, HealRate: healRate, StartupDelay: startup})
		g := gd2Client(b)
		waitNodes(b, ns, name, 6, 5*time.Minute)
		vols := []string{"bencha", "benchb"}
		for _, v := range vols {
			createReplicatedVolume(b, g, v)
		}
		waitVolumesHealthy(b, ns, name, vols, 2*time.Minute)

		down := startPeerTimeline(g)
		start := time.Now()
		setGlusterVersion(b, ns, name, "4.1.1")
		c := waitUpgradeState(b, ns, name, "RollingClients", 20*time.Minute)
		elapsed := time.Since(start)
		for _, h := range c.Status.Upgrade.History {
			if h.Event == "serversDone" {
				elapsed = h.Time.Sub(start)
			}
		}
		down.stop()
		perPeer := down.downtime()

		var lower time.Duration
		for _, d := range perPeer {
			heal := time.Duration(float64(d) * writeRate / healRate)
			lower += d + heal
		}
		if len(perPeer) != 6 || lower <= 0 {
			b.Fatalf("saw %d peers restart (want 6), lower bound %s", len(perPeer), lower)
		}
		ratio := elapsed.Seconds() / lower.Seconds()
		b.ReportMetric(elapsed.Seconds(), "upgrade-s")
		b.ReportMetric(lower.Seconds(), "lower-bound-s")
		b.ReportMetric(ratio, "ratio")
		fmt.Printf("bench: upgrade of 6 nodes took %s; lower bound (restart incl. %s GD2 start-up + heal at %.0f/%.0f entries/s, per node, one at a time) %s; ratio %.2f (target <= 1.3)\n",
			elapsed.Round(time.Millisecond), startup, writeRate, healRate, lower.Round(time.Millisecond), ratio)
	}
}
