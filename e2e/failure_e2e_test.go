//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// Failure handling with test-sized windows. Production defaults are 30m,
// 30s and 2m (docs/failures.md); the tests shrink them through the same
// spec fields an admin would set. A peer is taken down by partitioning it
// in the simulator: its pod stays Ready, so the pod link does not revive
// it, exactly like a GD2 that hangs or loses its network while Kubernetes
// sees nothing wrong.
//
// The recovery window stays well above the flapping test's 3 s up time
// plus the loop's own API calls, which grow when the machine is busy
// (tests run side by side): an up time that crosses the window is a real
// recovery, and the node would rightly go Online in between.
const (
	testDowntime       = 40 * time.Second
	testOfflineGrace   = 2 * time.Second
	testRecoveryWindow = 10 * time.Second
)

// failureCluster creates a three-zone cluster with one node per zone, the
// test failure policy and a replica-3 volume holding data, and waits until
// it is Ready.
func failureCluster(t *testing.T, ns, name string) {
	t.Helper()
	ctx := context.Background()
	startSim(t, ns, defaultSimOptions)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, simOf(t), 1)
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.FailurePolicy = &operatorv1alpha1.FailurePolicy{
		PermissibleDowntime: &metav1.Duration{Duration: testDowntime},
		OfflineGrace:        &metav1.Duration{Duration: testOfflineGrace},
		RecoveryWindow:      &metav1.Duration{Duration: testRecoveryWindow},
	}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitNodes(t, ns, name, 3, 3*time.Minute)
	g := gd2Client(t)
	createReplicatedVolume(t, g, "data")
	if err := simOf(t).Write("data", 50); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)
}

// victimOf picks the cluster's node in zone. Each case takes a node of
// another zone, so each node's history holds one case's transitions.
func victimOf(t *testing.T, nodes map[string]operatorv1alpha1.GlusterNode, zone string) operatorv1alpha1.GlusterNode {
	t.Helper()
	for _, n := range nodes {
		if n.Spec.Zone == zone {
			return n
		}
	}
	t.Fatalf("no %s node", zone)
	return operatorv1alpha1.GlusterNode{}
}

func partition(t *testing.T, peer string, down bool) {
	t.Helper()
	if err := simOf(t).PartitionPeer(peer, down); err != nil {
		t.Fatal(err)
	}
}

// events counts the node's transitions by event name.
func events(n *operatorv1alpha1.GlusterNode) map[string]int {
	out := map[string]int{}
	for _, h := range n.Status.History {
		out[h.Event]++
	}
	return out
}

func nodeNames(nodes map[string]operatorv1alpha1.GlusterNode) string {
	var names []string
	for n := range nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// TestFailure runs the three failure cases on one cluster (each case
// leaves it Ready with three nodes, and the local disks of the shared
// control plane are a budget): a short outage, a flapping peer, and a peer
// down past the deadline. The operator is SIGKILLed in the middle of each.
func TestFailure(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "failure"
	failureCluster(t, ns, name)
	for _, c := range []struct {
		name string
		run  func(t *testing.T, ns, name string)
	}{
		{"a peer down for less than the deadline just heals", shortOutageHeals},
		{"a peer that flaps does not trigger replacement", flappingPeerNotReplaced},
		{"a peer down past the deadline is Failed, nothing moves, and it returns as the same peer", pastDeadlineWaitsForTheSamePeer},
	} {
		if !t.Run(c.name, func(t *testing.T) { c.run(t, ns, name) }) {
			return // each case starts from the cluster the previous one left
		}
	}
}

// shortOutageHeals: a peer down for less than the deadline goes Offline
// and comes back Online on its own; nothing is rebuilt or replaced, and its
// volume heals. The operator is SIGKILLed while the peer is down.
func shortOutageHeals(t *testing.T, ns, name string) {
	nodes := waitNodes(t, ns, name, 3, time.Minute)
	g := gd2Client(t)
	before := nodeNames(nodes)
	victim := victimOf(t, nodes, "zone-2")
	peer := victim.Status.PeerID
	if bricksByPeer(t, g, "data")[peer] != 1 {
		t.Fatalf("the victim's peer must hold one brick of data")
	}

	start := time.Now()
	partition(t, peer, true)
	if err := simOf(t).Write("data", 50); err != nil { // writes pending heal on the survivors
		t.Fatal(err)
	}
	waitNodeState(t, ns, victim.Name, "Offline", 30*time.Second)
	restartOperator(t)
	// Stay down a while under the new operator, well inside the deadline.
	time.Sleep(max(0, 12*time.Second-time.Since(start)))
	partition(t, peer, false)
	n := waitNodeState(t, ns, victim.Name, "Online", 45*time.Second)
	if down := time.Since(start); down >= testDowntime {
		t.Fatalf("the outage lasted %s, not shorter than the %s deadline: the test proves nothing", down, testDowntime)
	}
	if ev := events(n); ev["markFailed"] != 0 || ev["drain"] != 0 || ev["peerLost"] != 1 || ev["peerRecovered"] != 1 {
		t.Errorf("node transitions %v: want one peerLost and one peerRecovered, no markFailed or drain", ev)
	}
	if n.Status.DownSince != nil || n.Status.AliveSince != nil {
		t.Errorf("an Online node keeps outage clocks: downSince %v aliveSince %v", n.Status.DownSince, n.Status.AliveSince)
	}
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)
	after := waitNodes(t, ns, name, 3, time.Minute)
	if got := nodeNames(after); got != before {
		t.Errorf("nodes %s after the outage, want the same %s", got, before)
	}
	if got := bricksByPeer(t, g, "data")[peer]; got != 1 || after[victim.Name].Status.PeerID != peer {
		t.Errorf("the victim keeps its peer and brick: peer %s, bricks %d", after[victim.Name].Status.PeerID, got)
	}
	noViolations(t)
}

// pastDeadlineWaitsForTheSamePeer: a peer down past the deadline is
// Failed. Real GD2 replaces no brick of a volume while a node holding one of
// its bricks is down, so nothing is moved and nothing replaces the node: it
// raises the alert (a Warning Event, Degraded with BricksUnmovable) and
// waits. When the server is back it is the same peer, the node returns to
// Online and self-heal brings the volume back to full redundancy. The
// operator is SIGKILLed while the node is Failed. The time from the peer's
// death to full redundancy is logged against permissibleDowntime + the
// recovery window.
func pastDeadlineWaitsForTheSamePeer(t *testing.T, ns, name string) {
	nodes := waitNodes(t, ns, name, 3, time.Minute)
	g := gd2Client(t)
	before := nodeNames(nodes)
	victim := victimOf(t, nodes, "zone-1")
	peer := victim.Status.PeerID

	died := time.Now()
	partition(t, peer, true)
	if err := simOf(t).Write("data", 50); err != nil {
		t.Fatal(err)
	}
	n := waitNodeState(t, ns, victim.Name, "Failed", testDowntime+45*time.Second)
	if n.Status.DownSince == nil {
		t.Fatal("a Failed node must show when its outage began")
	}
	waitNodeCondition(t, ns, victim.Name, "BricksUnmovable", 30*time.Second)
	err := framework.WaitFor(context.Background(), 30*time.Second, func(ctx context.Context) (bool, error) {
		return hasEvent(t, ns, victim.Name, "BricksUnmovable"), fmt.Errorf("no BricksUnmovable Warning on %s yet", victim.Name)
	})
	if err != nil {
		t.Fatal(err)
	}
	restartOperator(t)
	// The new operator keeps the node where it is: no drain, no brick
	// moved, no replacement node, however long the peer stays dead.
	waitMoreSyncs(t, operatorOf(t), states.NodeMachine, 3, time.Minute)
	n, err = anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), victim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status.State != "Failed" || events(n)["drain"] != 0 {
		t.Fatalf("the failed node is %s (transitions %v); it must stay Failed", n.Status.State, events(n))
	}
	during, _, err := nodeStates(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	if got := nodeNames(during); got != before {
		t.Errorf("nodes %s while one is Failed, want the same %s: a replacement cannot take a dead peer's bricks", got, before)
	}
	if got := bricksByPeer(t, g, "data")[peer]; got != 1 {
		t.Errorf("the dead peer holds %d brick(s) of data, want its one: nothing may be moved", got)
	}

	partition(t, peer, false)
	back := time.Since(died)
	n = waitNodeState(t, ns, victim.Name, "Online", time.Minute)
	if ev := events(n); ev["peerRecovered"] < 1 || ev["drain"] != 0 {
		t.Errorf("node transitions %v: want Failed -> Online by peerRecovered, no drain", ev)
	}
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)
	t.Logf("peer death to full redundancy: %s (the peer came back after %s; permissibleDowntime %s, recoveryWindow %s, then the heal)",
		time.Since(died).Round(time.Second), back.Round(time.Second), testDowntime, testRecoveryWindow)
	after := waitNodes(t, ns, name, 3, time.Minute)
	if got := nodeNames(after); got != before {
		t.Errorf("nodes %s after recovery, want the same %s", got, before)
	}
	if after[victim.Name].Status.PeerID != peer || bricksByPeer(t, g, "data")[peer] != 1 {
		t.Errorf("the node came back as peer %s, want the same peer %s with its brick", after[victim.Name].Status.PeerID, peer)
	}
	noViolations(t)
}

// flappingPeerNotReplaced: a peer that goes down and comes back
// again and again, never up for the recovery window, is down longer than
// the deadline in total but never continuously: its node goes Offline once,
// is never Failed, nothing is replaced, and it is Online again once the
// peer stays up. The operator is SIGKILLed halfway through.
func flappingPeerNotReplaced(t *testing.T, ns, name string) {
	nodes := waitNodes(t, ns, name, 3, time.Minute)
	g := gd2Client(t)
	before := nodeNames(nodes)
	victim := victimOf(t, nodes, "zone-3")
	peer := victim.Status.PeerID

	const (
		cycles = 10
		down   = 5 * time.Second
		up     = 3 * time.Second // shorter than the recovery window
	)
	var totalDown time.Duration
	start := time.Now()
	for i := range cycles {
		partition(t, peer, true)
		time.Sleep(down)
		totalDown += down
		partition(t, peer, false)
		if i == cycles/2 {
			restartOperator(t)
		}
		time.Sleep(up)
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(context.Background(), victim.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		switch n.Status.State {
		case "Online", "Offline":
		default:
			dumpNamespace(t, ns)
			t.Fatalf("cycle %d: the flapping node is %s: %s", i, n.Status.State, n.Status.Message)
		}
	}
	if totalDown <= testDowntime || time.Since(start) <= 2*testDowntime {
		t.Fatalf("the peer was down %s over %s: not enough to prove anything against a %s deadline", totalDown, time.Since(start), testDowntime)
	}
	n := waitNodeState(t, ns, victim.Name, "Online", time.Minute)
	ev := events(n)
	if ev["markFailed"] != 0 || ev["drain"] != 0 {
		t.Errorf("the flapping node was failed or drained: transitions %v", ev)
	}
	if ev["peerLost"] < 1 || ev["peerLost"] > 2 {
		t.Errorf("the node went Offline %d times in %d flaps, want once (twice at most): transitions %v", ev["peerLost"], cycles, ev)
	}
	after := waitNodes(t, ns, name, 3, time.Minute)
	if got := nodeNames(after); got != before {
		t.Errorf("nodes %s after flapping, want the same %s", got, before)
	}
	if got := bricksByPeer(t, g, "data")[peer]; got != 1 {
		t.Errorf("the flapping peer holds %d brick(s) of data, want its one", got)
	}
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)
	noViolations(t)
}
