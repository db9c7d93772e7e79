//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// TestUpgradeKeepsNewBricksOffARestartingNode creates volumes through
// GD2's REST API, as a user would, while an upgrade restarts the nodes of
// a 6-node, 3-zone cluster one by one. Each time a node is back but still
// healing (HealWait, its peer alive, so only its disabled devices keep
// GD2's planner off it), a replica-3 create is placed on the other nodes,
// never on it; and a create that only it could complete (its zone's other
// node excluded) is refused as GD2 refuses a volume it cannot place. The
// operator is SIGKILLed while the first such node waits between disabling
// and enabling its devices. At the end every device is enabled again, the
// ledger shows each node's devices disabled before its restart and enabled
// after it, and the create that was refused now lands a brick on the node.
func TestUpgradeKeepsNewBricksOffARestartingNode(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "place"
	const to = "5.0.0"
	// Writes outpace the heal rate, so each restarted node spends seconds
	// in HealWait with its peer alive: the window the test creates in.
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 4, WriteRate: 100, HealRate: 20, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 6, 3*time.Minute)
	createReplicatedVolume(t, g, "placea")
	waitVolumesHealthy(t, ns, name, []string{"placea"}, 2*time.Minute)
	// sibling: the peer of the other node in each node's zone.
	sibling := map[string]string{}
	for _, a := range nodes {
		for _, b := range nodes {
			if a.Name != b.Name && a.Spec.Zone == b.Spec.Zone {
				sibling[a.Status.PeerID] = b.Status.PeerID
			}
		}
	}

	setGlusterVersion(t, ns, name, to)
	sampled := map[string]bool{}
	killed := false
	var lastPeer string
	ctx := context.Background()
	err := framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
		cur, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return false, err
		}
		done := 0
		for _, n := range cur {
			if n.Status.Version == to && n.Status.State == "Online" {
				done++
			}
		}
		if done == len(cur) {
			return true, nil
		}
		for _, n := range cur {
			if n.Status.State != "HealWait" || sampled[n.Name] || !devicesClosedForRestart(n) {
				continue
			}
			ok, err := createAroundRestart(ctx, t, g, ns, n.Name, n.Status.PeerID, sibling[n.Status.PeerID], len(sampled))
			if err != nil {
				return false, err
			}
			if !ok {
				// The node enabled its devices meanwhile: the reading
				// proves nothing either way; the next node is sampled.
				continue
			}
			sampled[n.Name], lastPeer = true, n.Status.PeerID
			if !killed {
				// Between disableDevices and enableDevices: a new operator
				// must still enable them once the node is Online.
				restartOperator(t)
				killed = true
				t.Logf("operator SIGKILLed while %s waited in HealWait with its devices disabled", n.Name)
			}
		}
		return false, fmt.Errorf("%d of %d nodes upgraded, %d sampled: %s", done, len(cur), len(sampled), desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("upgrading while creating volumes: %v", err)
	}
	if len(sampled) < 2 {
		t.Fatalf("only %d node(s) were seen healing with their devices disabled; want at least 2", len(sampled))
	}

	final, _, err := nodeStates(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range final {
		waitDevices(t, g, n.Status.PeerID, "enabled", time.Minute)
	}
	// Read again: the last nodes enable their devices from Online, after
	// the upgrade counted them done.
	final, _, err = nodeStates(ctx, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range final {
		checkDevicesAroundRestart(t, n)
	}
	// What was refused during the restart is placed once the node is back:
	// the node takes new bricks again.
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: "placeafter", Size: 1 << 30, Replica: 3, ExcludePeers: []string{sibling[lastPeer]}}); err != nil {
		t.Fatalf("create excluding %s's zone sibling after the upgrade: %v", lastPeer, err)
	}
	if got := bricksByPeer(t, g, "placeafter")[lastPeer]; got != 1 {
		t.Errorf("the volume created after the upgrade has %d brick(s) on %s, want 1", got, lastPeer)
	}
	noViolations(t)
}

// devicesClosedForRestart reports whether node n's latest device change on
// record is the disableDevices its restart began with: the enableDevices
// that follows (from Online) is recorded before it runs, so while this
// holds the devices are still disabled.
func devicesClosedForRestart(n operatorv1alpha1.GlusterNode) bool {
	for i := len(n.Status.Ledger) - 1; i >= 0; i-- {
		switch e := n.Status.Ledger[i]; e.Action {
		case operatorv1alpha1.LedgerActionEnableDevices:
			return false
		case operatorv1alpha1.LedgerActionDisableDevices:
			return e.State == "Restarting"
		}
	}
	return false
}

// createAroundRestart creates two replica-3 volumes while node (peer) is
// in HealWait with its devices disabled: one GD2 may place anywhere, which
// must get no brick on peer, and one that excludes sibling, peer's zone
// mate, which GD2 must refuse for want of a third zone. It reports false
// when node's devices were enabled before the check (nothing is asserted
// then). Both volumes are deleted again.
func createAroundRestart(ctx context.Context, t *testing.T, g *gd2.Client, ns, node, peer, sibling string, k int) (bool, error) {
	t.Helper()
	free, narrow := fmt.Sprintf("placefree%d", k), fmt.Sprintf("placenarrow%d", k)
	_, freeErr := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: free, Size: 1 << 30, Replica: 3})
	_, narrowErr := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: narrow, Size: 1 << 30, Replica: 3, ExcludePeers: []string{sibling}})
	var onPeer int
	if freeErr == nil {
		onPeer = bricksByPeer(t, g, free)[peer]
		if err := g.DeleteVolume(ctx, free); err != nil {
			return false, fmt.Errorf("delete %s: %w", free, err)
		}
	}
	if narrowErr == nil {
		if err := g.DeleteVolume(ctx, narrow); err != nil {
			return false, fmt.Errorf("delete %s: %w", narrow, err)
		}
	}
	after, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return false, err
	}
	if after.Status.State != "HealWait" || !devicesClosedForRestart(*after) {
		return false, nil
	}
	if freeErr != nil {
		t.Errorf("create %s while %s healed after its restart: %v (the other zone mates were free)", free, node, freeErr)
	} else if onPeer > 0 {
		t.Errorf("GD2 placed %d brick(s) of %s on %s while it was back from its restart but not healed", onPeer, free, node)
	}
	if !errors.Is(narrowErr, gd2.ErrNoCapacity) {
		t.Errorf("create %s, which only %s could complete, while it healed after its restart: got %v, want GD2's no-space refusal", narrow, node, narrowErr)
	}
	t.Logf("%s in HealWait with its devices disabled: %s placed elsewhere, %s refused (%v)", node, free, narrow, narrowErr)
	return true, nil
}

// checkDevicesAroundRestart checks n's ledger: every restart (rollWorkload)
// comes after the disableDevices of its restart transition and is
// followed by an enableDevices.
func checkDevicesAroundRestart(t *testing.T, n operatorv1alpha1.GlusterNode) {
	t.Helper()
	closed, rolled := false, false
	for _, e := range n.Status.Ledger {
		switch e.Action {
		case operatorv1alpha1.LedgerActionDisableDevices:
			closed = e.State == "Restarting"
		case operatorv1alpha1.LedgerActionRollWorkload:
			if !closed {
				t.Errorf("%s restarted with its devices enabled: %+v", n.Name, n.Status.Ledger)
			}
			rolled = true
		case operatorv1alpha1.LedgerActionEnableDevices:
			if rolled {
				closed, rolled = false, false
			}
		}
	}
	if rolled {
		t.Errorf("%s's devices were not enabled again after its restart: %+v", n.Name, n.Status.Ledger)
	}
}
