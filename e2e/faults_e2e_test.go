//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

// lifecycleTimes are the durations of the phases of runLifecycle that run
// under the fault profile.
type lifecycleTimes struct {
	decommission, upgrade, deletion time.Duration
}

func (l lifecycleTimes) total() time.Duration { return l.decommission + l.upgrade + l.deletion }

// runLifecycle drives one cluster through its life with faults injected
// into every GD2 request from the moment it has data: a decommission
// with brick moves (and the replacement node), a Gluster upgrade, and,
// once the volume is deleted, the cluster's deletion. The test's own GD2 calls (set-up, checks) run with
// faults off. It checks that every phase converges, that the decommissioned
// peer holds no brick, and that the simulator saw no violation.
func runLifecycle(t testing.TB, name string, faults sim.Faults) lifecycleTimes {
	t.Helper()
	ns := env.Namespace(t)
	ctx := context.Background()
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 11, WriteRate: 20, HealRate: 40})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "life", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	if err := gd2sim.Write("life", 40); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "life", 2*time.Minute)
	victim := nodeWithMostBricks(t, g, nodes, "life")
	peer := nodes[victim].Status.PeerID
	setFaults := func(f sim.Faults) {
		t.Helper()
		if err := gd2sim.SetFaults(f); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = gd2sim.SetFaults(sim.Faults{}) })

	var times lifecycleTimes
	setFaults(faults)
	start := time.Now()
	requestOnNode(t, ns, victim, "decommission")
	waitNodeState(t, ns, victim, "", 10*time.Minute)
	waitNodes(t, ns, name, 6, 5*time.Minute)
	times.decommission = time.Since(start)
	setFaults(sim.Faults{})
	if got := bricksByPeer(t, g, "life")[peer]; got != 0 {
		t.Errorf("the decommissioned peer still holds %d brick(s)", got)
	}
	replicaSetsInDistinctZones(t, g, "life")
	noViolations(t)

	setFaults(faults)
	start = time.Now()
	setGlusterVersion(t, ns, name, "5.0.0")
	waitUpgradeState(t, ns, name, "Complete", 15*time.Minute)
	times.upgrade = time.Since(start)
	setFaults(sim.Faults{})
	waitVolumeHealthy(t, ns, name, "life", 3*time.Minute)
	noViolations(t)

	// Volumes go first, as an admin deletes them: the cluster's deletion
	// never deletes storage a volume uses.
	if _, err := g.StopVolume(ctx, "life"); err != nil {
		t.Fatal(err)
	}
	if err := g.DeleteVolume(ctx, "life"); err != nil {
		t.Fatal(err)
	}
	setFaults(faults)
	start = time.Now()
	if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitChecked(ctx, t, ns, "the cluster's deletion", 10*time.Minute, func(ctx context.Context) error {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil
		}
		if err != nil {
			return err
		}
		return fmt.Errorf("cluster %s: %v", c.Status.Phase, c.Status.Conditions)
	})
	times.deletion = time.Since(start)
	setFaults(sim.Faults{})
	noViolations(t)
	t.Logf("under %+v: decommission %s, upgrade %s, deletion %s", faults, times.decommission.Round(time.Second), times.upgrade.Round(time.Second), times.deletion.Round(time.Second))
	return times
}

// TestLifecycleUnderGD2Faults runs the lifecycle with the simulator's chaos
// profile (one GD2 request in five fails, some after doing their work):
// every phase converges and nothing unsafe reaches GD2. The fault-free
// comparison is BenchmarkLifecycleFaults.
func TestLifecycleUnderGD2Faults(t *testing.T) {
	runLifecycle(t, "chaos", sim.ChaosFaults())
}

// BenchmarkLifecycleFaults runs the lifecycle fault-free and then under
// the chaos profile and reports the slowdown the faults cost (ratio of the
// faulty run's phases to the fault-free run's). Run with `make bench`.
func BenchmarkLifecycleFaults(b *testing.B) {
	for range b.N {
		clean := runLifecycle(b, "life-clean", sim.Faults{})
		chaos := runLifecycle(b, "life-chaos", sim.ChaosFaults())
		ratio := chaos.total().Seconds() / clean.total().Seconds()
		b.ReportMetric(clean.total().Seconds(), "fault-free-s")
		b.ReportMetric(chaos.total().Seconds(), "chaos-s")
		b.ReportMetric(ratio, "slowdown")
		fmt.Printf("lifecycle: fault-free %s (decommission %s, upgrade %s, deletion %s); chaos %s (%s, %s, %s); slowdown %.2f\n",
			clean.total().Round(time.Second), clean.decommission.Round(time.Second), clean.upgrade.Round(time.Second), clean.deletion.Round(time.Second),
			chaos.total().Round(time.Second), chaos.decommission.Round(time.Second), chaos.upgrade.Round(time.Second), chaos.deletion.Round(time.Second), ratio)
	}
}
