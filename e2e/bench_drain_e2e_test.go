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

// BenchmarkDrain measures the decommission of a node holding 12 bricks in
// 12 replica sets (4 volumes of 3x3, one node per zone, so that every set
// has a brick on every node), onto a fresh node of its zone: three times
// with drainPolicy.maxParallelMoves 12, then once with the default (1),
// each in a cluster of its own, at shipped defaults and with the clients
// writing at the sandbox's rates (framework.SandboxWriteRate) throughout,
// as users run it. Each is compared with the slowest single move + heal
// of the same run: from the replace-brick GD2 received to the first
// moment its replica set was healed again. With every set moving at once
// the drain can take no less than that (target: at most 1.3 times it, in
// every run); one at a time it takes about the sum of the twelve. Every
// run's ratio is printed, not the best. Run with `make bench`.
func BenchmarkDrain(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	for i := range b.N {
		for run, parallel := range []int32{12, 12, 12, 1} {
			elapsed, slowest := drainOnce(b, fmt.Sprintf("bench-drain-%d-%d-%d", i, run, parallel), parallel)
			ratio := elapsed.Seconds() / slowest.Seconds()
			unit := fmt.Sprintf("parallel%d-run%d", parallel, run+1)
			b.ReportMetric(elapsed.Seconds(), unit+"-drain-s")
			b.ReportMetric(slowest.Seconds(), unit+"-slowest-move-s")
			b.ReportMetric(ratio, unit+"-ratio")
			target := ""
			if parallel >= 12 {
				target = " (target <= 1.3)"
			}
			fmt.Printf("bench: run %d: drain of 12 bricks in 12 replica sets with maxParallelMoves %d took %s; slowest single move + heal %s; ratio %.2f%s; load average %s\n",
				run+1, parallel, elapsed.Round(time.Millisecond), slowest.Round(time.Millisecond), ratio, target, loadAverage())
		}
	}
}

// drainOnce builds the benchmark's cluster in a namespace of its own,
// drains the node of zone-1 and returns how long the drain took (from the
// request to the node leaving Draining) and the slowest single move +
// heal of it.
func drainOnce(b *testing.B, name string, parallel int32) (elapsed, slowest time.Duration) {
	b.Helper()
	ctx := context.Background()
	ns := newNamespace(b)
	// The clients write throughout at the sandbox's rate, so a
	// replacement made later has more to heal: the slowest move + heal is
	// the bound the drain is measured against.
	createClusterEdited(b, ns, name, 1, framework.SimOptions{Seed: 7, WriteRate: framework.SandboxWriteRate, HealRate: framework.SandboxHealRate}, func(c *operatorv1alpha1.GlusterCluster) {
		c.Spec.DrainPolicy = &operatorv1alpha1.DrainPolicy{MaxParallelMoves: parallel}
	})
	nodes := waitNodes(b, ns, name, 3, 5*time.Minute)
	g := gd2Client(b)
	vols := []string{"da", "db", "dc", "dd"}
	for _, v := range vols {
		createVolume(b, g, gd2.VolumeCreateRequest{Name: v, Size: 6 << 30, Distribute: 3, Replica: 3, SubvolZonesOverlap: true})
		if err := simOf(b).Write(v, 275); err != nil {
			b.Fatal(err)
		}
	}
	waitVolumesHealthy(b, ns, name, vols, 3*time.Minute)
	victim := ""
	for n, gn := range nodes {
		if gn.Spec.Zone == "zone-1" {
			victim = n
		}
	}
	peer := nodes[victim].Status.PeerID
	if got := len(bricksOf(b, g, peer, vols)); got != 12 {
		b.Fatalf("node %s holds %d bricks, want 12", victim, got)
	}
	// A fresh node in the victim's zone takes the replacements.
	setTemplateNodes(b, ns, name, map[string]int32{"zone-1": 2})
	waitNodes(b, ns, name, 4, 5*time.Minute)

	timeline := startDrainTimeline(g, simOf(b).WholeSets, peer, vols...)
	defer timeline.finish()
	start := time.Now()
	requestOnNode(b, ns, victim, "decommission")
	err := framework.WaitFor(ctx, 20*time.Minute, func(ctx context.Context) (bool, error) {
		gn, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, victim, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		left := gn.Status.State != "" && gn.Status.State != "Online" && gn.Status.State != "Draining"
		return left, fmt.Errorf("node %s is %s: %s", victim, gn.Status.State, gn.Status.Message)
	})
	if err != nil {
		dumpNamespace(b, ns)
		b.Fatalf("drain with maxParallelMoves %d: %v", parallel, err)
	}
	elapsed = time.Since(start)
	_, healed, zoneBreaks, _ := timeline.finish()
	for _, z := range zoneBreaks {
		b.Error(z)
	}
	noViolations(b)
	moved := 0
	for _, c := range simOf(b).DestructiveCalls() {
		if c.Op != "ReplaceBrick" || !c.OK {
			continue
		}
		moved++
		end, ok := healed[replaceBrickKey(c.Target)]
		if !ok {
			b.Fatalf("the replica set of %s never healed after its move", c.Target)
		}
		slowest = max(slowest, end.Sub(c.Time))
	}
	if moved != 12 || slowest <= 0 {
		b.Fatalf("%d bricks moved (want 12), slowest move + heal %s", moved, slowest)
	}
	return elapsed, slowest
}

// bricksOf are the bricks of vols on peer, "volume path".
func bricksOf(b testing.TB, g *gd2.Client, peer string, vols []string) []string {
	b.Helper()
	var out []string
	for _, name := range vols {
		v, err := g.GetVolume(context.Background(), name)
		if err != nil {
			b.Fatal(err)
		}
		for _, br := range v.Bricks() {
			if br.PeerID == peer {
				out = append(out, name+" "+br.Path)
			}
		}
	}
	return out
}
