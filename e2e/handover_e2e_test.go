//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// releaseAt returns the release CHANGELOG.md records at index which of
// its list, newest first (0 the previous release, -1 the first one), with
// its binary, which make test builds before the tests
// (framework.ReleaseBinary). The tests need two releases: the path from
// the previous one and the jump from the first.
func releaseAt(t *testing.T, which int) (framework.Release, string) {
	t.Helper()
	root := framework.RepoRoot()
	rels, err := framework.Releases(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(rels) < 2 {
		t.Fatalf("CHANGELOG.md records %d release(s) (## vX.Y.Z — DATE, commit HASH), want at least 2", len(rels))
	}
	if which < 0 {
		which += len(rels)
	}
	rel := rels[which]
	return rel, framework.ReleaseBinary(rel).For(t)
}

// runOperator kills the running operator and starts bin in its place:
// the operator under test with the test-sized timers, an older release
// (which knows none of their flags) without.
func runOperator(t *testing.T, bin string) {
	t.Helper()
	op := operatorOf(t)
	op.Kill()
	op.UseBinary(bin)
	args := slices.DeleteFunc(op.Args(), func(a string) bool { return slices.Contains(testTimers, a) })
	if bin == binPath {
		args = append(args, testTimers...)
	}
	op.SetArgs(args...)
	if err := op.Start(); err != nil {
		t.Fatal(err)
	}
}

// TestHandoverFromThePreviousRelease: the previous release's operator,
// built from its commit, starts a decommission, an upgrade and a failure
// recovery of one cluster; it is SIGKILLed in the middle of each (a brick
// moved, a node being upgraded, a node Failed) and the current operator
// finishes all three, with no violation in the strict simulator. This is
// the path of an operator upgrade (n to n+1) that finds work in flight.
func TestHandoverFromThePreviousRelease(t *testing.T) {
	aloneWithOlderRelease(t, "the older releases it runs watch every namespace")
	rel, old := releaseAt(t, 0)
	handover(t, rel, old)
}

// TestHandoverFromTheFirstRelease: the same from the first release, the
// jump an operator makes when it is upgraded straight from the oldest
// release to the current one (or when OLM steps through the releases
// faster than the old one's work finishes).
func TestHandoverFromTheFirstRelease(t *testing.T) {
	aloneWithOlderRelease(t, "the older releases it runs watch every namespace")
	rel, old := releaseAt(t, -1)
	handover(t, rel, old)
}

func handover(t *testing.T, rel framework.Release, old string) {
	current := binPath
	watchEveryNamespace(t)
	t.Logf("release %s from commit %s", rel.Version, rel.Commit)

	ns := newNamespace(t)
	const name = "handover"
	const to = "5.0.0"
	runOperator(t, old)
	createReleaseCluster(t, ns, name, 2, framework.SimOptions{Seed: 5, WriteRate: 40, HealRate: 40})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "hand", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	waitVolumeHealthy(t, ns, name, "hand", 2*time.Minute)

	// A drain the old operator started and the current one finishes.
	victim := nodeWithMostBricks(t, g, nodes, "hand")
	peer := nodes[victim].Status.PeerID
	requestOnNode(t, ns, victim, "decommission")
	waitMovedBrick(t, ns, victim, 2*time.Minute)
	captureReleaseFixture(t, rel, "mid-drain", ns, name, g)
	runOperator(t, current)
	t.Logf("current operator took over %s mid-drain", victim)
	drained(t, g, ns, name, victim, peer, "hand")
	waitNodes(t, ns, name, 6, 3*time.Minute)

	// An upgrade the old operator started and the current one finishes.
	runOperator(t, old)
	setGlusterVersion(t, ns, name, to)
	var midway string
	waitChecked(context.Background(), t, ns, "a node being upgraded by "+rel.Version, 5*time.Minute, func(ctx context.Context) error {
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
	captureReleaseFixture(t, rel, "mid-upgrade", ns, name, g)
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
	captureReleaseFixture(t, rel, "mid-recovery", ns, name, g)
	runOperator(t, current)
	partition(t, lostPeer, false)
	n := waitNodeState(t, ns, lost, "Online", time.Minute)
	if n.Status.PeerID != lostPeer || bricksByPeer(t, g, "hand")[lostPeer] != held {
		t.Errorf("%s came back as peer %s with %d bricks, want peer %s with its %d", lost, n.Status.PeerID, bricksByPeer(t, g, "hand")[lostPeer], lostPeer, held)
	}
	waitVolumeHealthy(t, ns, name, "hand", 2*time.Minute)
	noViolations(t)
}

// TestOlderOperatorRefusesNewerState: the previous release meets a node in
// a state it does not know (as a newer operator could leave it after a
// downgrade). It refuses to act on it and says so in the node's Degraded
// condition (reason UnknownState), and resets nothing: the state, the
// history, the peer and the pod stay as they were. Then the current
// operator meets a node whose status is one schema level above its own
// (status.statusSchema, as the next release could leave it after a
// rollback): it writes nothing to that node at all and says so in a
// Warning Event (reason NewerStatus). The previous release predates
// status levels; once a release has them, that part runs with it.
func TestOlderOperatorRefusesNewerState(t *testing.T) {
	aloneWithOlderRelease(t, "the older release it runs watches every namespace")
	_, old := releaseAt(t, 0)
	current := binPath
	watchEveryNamespace(t)

	ns := newNamespace(t)
	const name = "downgrade"
	createReleaseCluster(t, ns, name, 1, defaultSimOptions)
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	var node, newerNode operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if node.Name == "" {
			node = n
		} else {
			newerNode = n
		}
	}
	operatorOf(t).Kill()
	const newer = "Evacuating" // no release has this state
	live, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	live.Status.State = newer
	if _, err := anthill.OperatorV1alpha1().GlusterNodes(ns).UpdateStatus(context.Background(), live, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Put the state back before the namespace goes, so the cluster's
	// deletion is not held by a node no operator can act on.
	t.Cleanup(func() {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), node.Name, metav1.GetOptions{})
		if err == nil {
			n.Status.State = node.Status.State
			_, err = anthill.OperatorV1alpha1().GlusterNodes(ns).UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
		}
		if err != nil {
			t.Errorf("restore the node's state: %v", err)
		}
	})
	runOperator(t, old)
	waitNodeCondition(t, ns, node.Name, states.ReasonUnknownState, time.Minute)
	time.Sleep(10 * time.Second) // the old operator keeps syncing; nothing may change
	n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), node.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.State != newer || len(n.Status.History) != len(live.Status.History) || n.Status.PeerID != node.Status.PeerID {
		t.Errorf("the older operator changed the node: state %s (want %s), %d history entries (want %d), peer %s (want %s)",
			n.Status.State, newer, len(n.Status.History), len(live.Status.History), n.Status.PeerID, node.Status.PeerID)
	}
	if _, err := gd2Client(t).GetPeer(context.Background(), node.Status.PeerID); err != nil {
		t.Errorf("the node's GD2 peer: %v", err)
	}
	if _, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), node.Name+"-0", metav1.GetOptions{}); err != nil {
		t.Errorf("the node's pod: %v", err)
	}

	operatorOf(t).Kill()
	written := setStatusSchema(t, ns, newerNode.Name, operatorv1alpha1.StatusSchemaLevel+1)
	t.Cleanup(func() { setStatusSchema(t, ns, newerNode.Name, operatorv1alpha1.StatusSchemaLevel) })
	runOperator(t, current)
	waitChecked(context.Background(), t, ns, "the NewerStatus Warning", time.Minute, func(context.Context) error {
		if !hasEvent(t, ns, newerNode.Name, states.ReasonNewerStatus) {
			return fmt.Errorf("no %s Warning Event on %s, whose status is a level above the operator's", states.ReasonNewerStatus, newerNode.Name)
		}
		return nil
	})
	waitMoreSyncs(t, operatorOf(t), states.NodeMachine, 3, time.Minute) // the operator keeps looking; nothing may be written
	if n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), newerNode.Name, metav1.GetOptions{}); err != nil {
		t.Error(err)
	} else if n.ResourceVersion != written.ResourceVersion {
		t.Errorf("the operator wrote %s, whose status is a level above its own (resourceVersion %s -> %s, status %+v)",
			n.Name, written.ResourceVersion, n.ResourceVersion, n.Status)
	}
	noViolations(t)
}

// setStatusSchema sets status.statusSchema of GlusterNode name, as an
// operator of that schema level would, and returns the node written.
func setStatusSchema(t *testing.T, ns, name string, level int32) *operatorv1alpha1.GlusterNode {
	t.Helper()
	var out *operatorv1alpha1.GlusterNode
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		n.Status.StatusSchema = level
		out, err = anthill.OperatorV1alpha1().GlusterNodes(ns).UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("set status.statusSchema of %s to %d: %v", name, level, err)
	}
	return out
}

// captureReleaseFixture writes what release rel has persisted for cluster
// ns/name at point into $ANTHILL_RELEASE_FIXTURES/<version>/<point>.json,
// when that is set (see releaseFixture). The release is still running, so
// the capture is a moment of a live run, as an operator upgrade finds it.
func captureReleaseFixture(t *testing.T, rel framework.Release, point, ns, name string, g *gd2.Client) {
	t.Helper()
	dir := os.Getenv(releaseFixturesEnv)
	if dir == "" {
		return
	}
	ctx := context.Background()
	f := releaseFixture{Release: rel.Version, Point: point, PeerMetadata: map[string]map[string]string{}, VolumeMetadata: map[string]map[string]string{}}
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Cluster = *c
	nodes, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.Nodes = nodes.Items
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range peers {
		f.PeerMetadata[p.ID] = p.Metadata
	}
	vols, err := g.ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vols {
		f.VolumeMetadata[v.Name] = v.Metadata
	}
	out, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, rel.Version, point+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, append(out, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("release fixture written: %s", path)
}

// TestTwoOperatorsNeverActAtOnce: during a rolling update of the operator
// Deployment the old and the new pod run side by side. With the previous
// release holding the leader-election Lease, the current operator started
// beside it (another identity) acts on nothing: a maintenance request is
// carried out by the release alone. Once the release is SIGKILLed, the
// current operator takes the Lease over when it expires and carries out
// the resume.
func TestTwoOperatorsNeverActAtOnce(t *testing.T) {
	aloneWithOlderRelease(t, "the older release it runs watches every namespace")
	_, old := releaseAt(t, 0)
	current := binPath
	watchEveryNamespace(t)

	ns := newNamespace(t)
	const name = "twoops"
	runOperator(t, old)
	createReleaseCluster(t, ns, name, 1, defaultSimOptions)
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	var node string
	for n := range nodes {
		node = n
		break
	}
	second, err := env.StartOperatorAs(context.Background(), current, operatorIdentity(t.Name())+"-second", operatorOf(t).Args()...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(second.Stop)

	requestOnNode(t, ns, node, "maintenance")
	waitNodeState(t, ns, node, "Maintenance", time.Minute)
	time.Sleep(5 * time.Second) // the second operator keeps running beside the leader
	to := func(state string) func(transitionLine) bool {
		return func(l transitionLine) bool { return l.Name == node && l.To == state }
	}
	if !slices.ContainsFunc(transitionsIn(operatorOf(t).Logs(), ns), to("Maintenance")) {
		t.Error("the leader's log has no transition of the node to Maintenance")
	}
	if l := transitionsIn(second.Logs(), ns); len(l) > 0 {
		t.Fatalf("the operator without the Lease made %d transition(s) while the leader ran, e.g. %s", len(l), l[0])
	}

	operatorOf(t).Kill()
	killed := time.Now()
	requestOnNode(t, ns, node, "resume")
	waitNodeState(t, ns, node, "Online", time.Minute)
	t.Logf("the current operator resumed %s %s after the release was killed", node, time.Since(killed).Round(time.Second))
	// A transition is logged once its status is written, so the line may
	// follow the status the test just read.
	err = framework.WaitFor(context.Background(), 30*time.Second, func(context.Context) (bool, error) {
		return slices.ContainsFunc(transitionsIn(second.Logs(), ns), to("Online")), fmt.Errorf("no transition of %s to Online in the current operator's log", node)
	})
	if err != nil {
		t.Errorf("the resume was not carried out by the current operator: %v", err)
	}
	noViolations(t)
	// The test's operator (the killed release) comes back as the current
	// one, which deletes the cluster when the test ends; the second
	// releases the Lease to it.
	second.Stop()
	runOperator(t, current)
}
