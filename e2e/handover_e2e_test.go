//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
)

// previousRelease builds the newest release CHANGELOG.md records from its
// commit and returns it with its binary.
func previousRelease(t *testing.T) (framework.Release, string) {
	t.Helper()
	root := repoRoot(t)
	rels, err := framework.Releases(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) == 0 {
		t.Fatal("CHANGELOG.md records no release (## vX.Y.Z — DATE, commit HASH)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	bin, err := framework.BuildRelease(ctx, root, rels[0], t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return rels[0], bin
}

// runOperator kills the running operator and starts bin in its place.
func runOperator(t *testing.T, bin string) {
	t.Helper()
	operator.Kill()
	operator.UseBinary(bin)
	if err := operator.Start(); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverFromThePreviousRelease: the previous release's operator,
// built from its commit, starts a decommission, an upgrade and a failure
// recovery of one cluster; it is SIGKILLed in the middle of each (a brick
// moved, a node being upgraded, a node Failed) and the current operator
// finishes all three, with no violation in the strict simulator. This is the path of an operator
// upgrade (n to n+1) that finds work in flight.
func TestHandoverFromThePreviousRelease(t *testing.T) {
	rel, old := previousRelease(t)
	current := operator.Binary()
	t.Cleanup(func() { runOperator(t, current) })
	t.Logf("previous release %s from commit %s", rel.Version, rel.Commit)

	ns := env.Namespace(t)
	const name = "handover"
	const to = "5.0.0"
	runOperator(t, old)
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 5, WriteRate: 40, HealRate: 40})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "hand", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	waitVolumeHealthy(t, ns, name, "hand", 2*time.Minute)

	// A drain the old operator started and the current one finishes.
	victim := nodeWithMostBricks(t, g, nodes, "hand")
	peer := nodes[victim].Status.PeerID
	requestOnNode(t, ns, victim, "decommission")
	waitMovedBrick(t, ns, victim, 2*time.Minute)
	runOperator(t, current)
	t.Logf("current operator took over %s mid-drain", victim)
	drained(t, g, ns, name, victim, peer, "hand")
	waitNodes(t, ns, name, 6, 3*time.Minute)

	// An upgrade the old operator started and the current one finishes.
	runOperator(t, old)
	setGlusterVersion(t, ns, name, to)
	var midway string
	waitChecked(context.Background(), t, ns, "a node being upgraded by the previous release", 5*time.Minute, func(ctx context.Context) error {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		nodes, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return err
		}
		if up := c.Status.Upgrade; up != nil && len(up.CurrentNodes) == 1 {
			if n := nodes[up.CurrentNodes[0]]; slices.Contains(upgradeStates, n.Status.State) {
				midway = n.Name + " in " + n.Status.State
				return nil
			}
		}
		return fmt.Errorf("no node being upgraded yet: %s", desc)
	})
	runOperator(t, current)
	t.Logf("current operator took over the upgrade with %s", midway)
	waitUpgradeState(t, ns, name, "Complete", 10*time.Minute)
	for _, n := range waitNodes(t, ns, name, 6, 3*time.Minute) {
		if n.Status.Version != to {
			t.Errorf("node %s runs %q after the upgrade, want %s", n.Name, n.Status.Version, to)
		}
	}

	// A node down past its deadline under the old operator, recovered
	// under the current one: it must come back as the same peer, nothing
	// moved (real GD2 cannot replace a dead peer's bricks).
	patch := fmt.Sprintf(`{"spec":{"failurePolicy":{"permissibleDowntime":%q,"offlineGrace":%q,"recoveryWindow":%q}}}`,
		testDowntime.String(), testOfflineGrace.String(), testRecoveryWindow.String())
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	runOperator(t, old)
	nodes = waitNodes(t, ns, name, 6, time.Minute)
	lost := nodeWithMostBricks(t, g, nodes, "hand")
	lostPeer := nodes[lost].Status.PeerID
	held := bricksByPeer(t, g, "hand")[lostPeer]
	partition(t, lostPeer, true)
	waitNodeState(t, ns, lost, "Failed", testDowntime+45*time.Second)
	runOperator(t, current)
	partition(t, lostPeer, false)
	n := waitNodeState(t, ns, lost, "Online", time.Minute)
	if n.Status.PeerID != lostPeer || bricksByPeer(t, g, "hand")[lostPeer] != held {
		t.Errorf("%s came back as peer %s with %d bricks, want peer %s with its %d", lost, n.Status.PeerID, bricksByPeer(t, g, "hand")[lostPeer], lostPeer, held)
	}
	waitVolumeHealthy(t, ns, name, "hand", 2*time.Minute)
	noViolations(t)
}
