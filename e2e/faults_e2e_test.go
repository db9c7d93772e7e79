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
	l := newLifecycle(t, name, faults)
	times := lifecycleTimes{decommission: l.decommission(), upgrade: l.upgrade(), deletion: l.deleteCluster()}
	t.Logf("under %+v: decommission %s, upgrade %s, deletion %s", faults, times.decommission.Round(time.Second), times.upgrade.Round(time.Second), times.deletion.Round(time.Second))
	return times
}

// lifecycle is one cluster of runLifecycle, set up and ready for its
// phases; the crash sweep (crash_e2e_test.go) runs the same phases.
type lifecycle struct {
	t        testing.TB
	ns, name string
	g        *gd2.Client
	// faults are injected into the operator's GD2 requests during each
	// phase.
	faults sim.Faults
	// victim is the node the decommission removes, peer its GD2 peer id
	// and bricks the number of bricks of the volume it held.
	victim, peer string
	bricks       int
}

// newLifecycle creates a cluster of six nodes (two per zone) in a new
// namespace with a 2 x 3 volume "life" under writes, waits for it to be
// Healthy and picks the node holding the most bricks (the first by name
// among equals, so every run picks the same one) as the one to
// decommission.
func newLifecycle(t testing.TB, name string, faults sim.Faults) *lifecycle {
	t.Helper()
	return newLifecycleIn(t, newNamespace(t), name, faults)
}

// newLifecycleIn is newLifecycle in the namespace ns, made by the caller.
func newLifecycleIn(t testing.TB, ns, name string, faults sim.Faults) *lifecycle {
	t.Helper()
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 11, WriteRate: 20, HealRate: 40})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "life", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	if err := simOf(t).Write("life", 40); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "life", 2*time.Minute)
	l := &lifecycle{t: t, ns: ns, name: name, g: g, faults: faults}
	l.victim = nodeWithMostBricks(t, g, nodes, "life")
	l.peer = nodes[l.victim].Status.PeerID
	l.bricks = bricksByPeer(t, g, "life")[l.peer]
	t.Cleanup(func() { _ = simOf(t).SetFaults(sim.Faults{}) })
	return l
}

// phase runs fn with the lifecycle's faults on and returns how long it
// took; the checks after it run fault-free.
func (l *lifecycle) phase(fn func()) time.Duration {
	l.t.Helper()
	if err := simOf(l.t).SetFaults(l.faults); err != nil {
		l.t.Fatal(err)
	}
	start := time.Now()
	fn()
	took := time.Since(start)
	if err := simOf(l.t).SetFaults(sim.Faults{}); err != nil {
		l.t.Fatal(err)
	}
	return took
}

// decommission removes the victim: its bricks move by replace-brick, a
// replacement node joins, and the cluster is back to six Online nodes
// with no brick on the victim's peer and every replica set in distinct
// zones.
func (l *lifecycle) decommission() time.Duration {
	t := l.t
	t.Helper()
	took := l.phase(func() {
		requestOnNode(t, l.ns, l.victim, "decommission")
		waitNodeState(t, l.ns, l.victim, "", 10*time.Minute)
		waitNodes(t, l.ns, l.name, 6, 5*time.Minute)
	})
	if got := bricksByPeer(t, l.g, "life")[l.peer]; got != 0 {
		t.Errorf("the decommissioned peer still holds %d brick(s)", got)
	}
	replicaSetsInDistinctZones(t, l.g, "life")
	noViolations(t)
	return took
}

// upgrade rolls the cluster to Gluster 5.0.0 and waits for the volume to
// be Healthy again.
func (l *lifecycle) upgrade() time.Duration {
	t := l.t
	t.Helper()
	took := l.phase(func() {
		setGlusterVersion(t, l.ns, l.name, "5.0.0")
		waitUpgradeState(t, l.ns, l.name, "Complete", 15*time.Minute)
	})
	waitVolumeHealthy(t, l.ns, l.name, "life", 3*time.Minute)
	noViolations(t)
	return took
}

// deleteCluster deletes the volume, as an admin would first (the cluster's
// deletion never deletes storage a volume uses), then the cluster, and
// waits for the GlusterCluster to be gone.
func (l *lifecycle) deleteCluster() time.Duration {
	t := l.t
	t.Helper()
	ctx := context.Background()
	if _, err := l.g.StopVolume(ctx, "life"); err != nil {
		t.Fatal(err)
	}
	if err := l.g.DeleteVolume(ctx, "life"); err != nil {
		t.Fatal(err)
	}
	took := l.phase(func() {
		if err := anthill.OperatorV1alpha1().GlusterClusters(l.ns).Delete(ctx, l.name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		waitChecked(ctx, t, l.ns, "the cluster's deletion", 10*time.Minute, func(ctx context.Context) error {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(l.ns).Get(ctx, l.name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			return fmt.Errorf("cluster %s: %v", c.Status.Phase, c.Status.Conditions)
		})
	})
	noViolations(t)
	return took
}

// TestLifecycleUnderGD2Faults runs the lifecycle with the simulator's chaos
// profile (one GD2 request in five fails, some after doing their work):
// every phase converges and nothing unsafe reaches GD2. The fault-free
// comparison is BenchmarkLifecycleFaults.
func TestLifecycleUnderGD2Faults(t *testing.T) {
	sideBySideLong(t)
	// Each hang holds a sync for the GD2 timeout; the test needs hangs,
	// not long ones (BenchmarkLifecycleFaults measures both).
	operatorArgs(t, "--gd2-timeout="+shortGD2Timeout.String())
	runLifecycle(t, "chaos", sim.ChaosFaults())
}

// shortGD2Timeout is the --gd2-timeout of BenchmarkLifecycleFaults's third
// run: a hang then holds a sync 5 s instead of the default 30 s.
const shortGD2Timeout = 5 * time.Second

// BenchmarkLifecycleFaults runs the lifecycle fault-free, then under the
// chaos profile, then under the chaos profile with the operator restarted
// at a short --gd2-timeout (shortGD2Timeout), and reports the slowdown the
// faults cost (ratio of a faulty run's phases to the fault-free run's).
// For each faulty run it prints the faults injected and the operator's GD2
// requests that timed out: if the slowdown is the hangs' (each holds a
// sync for the whole timeout), the third run's is much smaller. Run with
// `make bench`.
func BenchmarkLifecycleFaults(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	for range b.N {
		clean := runLifecycle(b, "life-clean", sim.Faults{})
		fmt.Printf("lifecycle: fault-free %s (decommission %s, upgrade %s, deletion %s)\n",
			clean.total().Round(time.Second), clean.decommission.Round(time.Second), clean.upgrade.Round(time.Second), clean.deletion.Round(time.Second))
		for _, run := range []struct {
			name, label string
			flags       []string
		}{
			{"life-chaos", "chaos", nil},
			{"life-chaos-short", "chaos, --gd2-timeout=" + shortGD2Timeout.String(), []string{"--gd2-timeout=" + shortGD2Timeout.String()}},
		} {
			addr := killAndStart(b, run.flags...)
			before := scrapeMetrics(b, addr)
			chaos := runLifecycle(b, run.name, sim.ChaosFaults())
			after := scrapeMetrics(b, addr)
			faults := simOf(b).InjectedFaults()
			grew := func(name string, labels map[string]string) float64 {
				v1, _ := after.value(name, labels)
				v0, _ := before.value(name, labels)
				return v1 - v0
			}
			ratio := chaos.total().Seconds() / clean.total().Seconds()
			b.ReportMetric(ratio, "slowdown-"+run.name)
			fmt.Printf("lifecycle: %s %s (%s, %s, %s); slowdown %.2f; injected %d errors, %d conflicts, %d hangs; operator GD2 requests %.0f, timed out %.0f\n",
				run.label, chaos.total().Round(time.Second), chaos.decommission.Round(time.Second), chaos.upgrade.Round(time.Second), chaos.deletion.Round(time.Second), ratio,
				faults["error"], faults["conflict"], faults["hang"],
				grew("anthill_gd2_requests_total", nil), grew("anthill_gd2_errors_total", map[string]string{"class": "timeout"}))
		}
		killAndStart(b)
	}
}
