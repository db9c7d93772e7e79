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
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// TestUpgradeStartsBricksGD2LeftOffline: every restarted GD2 starts its
// bricks before mounting them, so each node the upgrade restarts comes
// back with its bricks offline on a live peer. The heal machine starts
// them (forceStartBricks, force-start-bricks) after the offline grace,
// and the upgrade completes without reaching its heal timeout — never
// Blocked — with the operator SIGKILLed right after the first start. Each
// restarted node's start is in the ledger with its reason, and the
// simulator sees no violation.
func TestUpgradeStartsBricksGD2LeftOffline(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "unmnt"
	createClusterWithSim(t, ns, name, 1, framework.SimOptions{Seed: 11, UnmountedBrickStarts: 1})
	waitNodes(t, ns, name, 3, 2*time.Minute)
	g := gd2Client(t)
	createReplicatedVolume(t, g, "data")
	waitVolumeHealthy(t, ns, name, "data", 2*time.Minute)

	// A short grace; a heal timeout shorter than the test's wait, so a
	// node left waiting on its bricks would block the upgrade.
	patch := `{"spec":{"failurePolicy":{"offlineGrace":"3s"},"upgradePolicy":{"healTimeout":"2m"}}}`
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	fired, disarm := operatorOf(t).KillOnLine(func(line []byte) bool {
		l, ok := parseTransition(line)
		return ok && l.Namespace == ns && l.Machine == states.HealMachine && l.Event == string(states.HealForceStartBricks)
	})
	defer disarm()
	setGlusterVersion(t, ns, name, "4.1.1")

	restartWhenFired(t, ns, fired, 4*time.Minute, "the heal machine never started the bricks GD2 left offline")
	c := waitUpgradeState(t, ns, name, "Complete", 8*time.Minute)

	for _, h := range c.Status.Upgrade.History {
		if h.To == "Blocked" {
			t.Errorf("the upgrade was blocked on its way (%s: %s)", h.Reason, h.Message)
		}
	}
	started := map[string]bool{}
	for _, e := range c.Status.Ledger {
		if e.Action != operatorv1alpha1.LedgerActionForceStartBricks {
			continue
		}
		if e.Volume != "data" || e.Reason != states.ReasonBricksNotStarted || e.Node == "" || e.Peer == "" {
			t.Errorf("brick start entry lacks its volume, node, peer or reason: %+v", e)
		}
		started[e.Node] = true
	}
	nodes, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, n := range nodes {
		if !started[n.Name] {
			missing = append(missing, n.Name)
		}
		if n.Status.State != "Online" || n.Status.Version != "4.1.1" {
			t.Errorf("node %s is %s at %s after the upgrade", n.Name, n.Status.State, n.Status.Version)
		}
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		t.Errorf("the ledger records no brick start on %v: %s", missing, fmt.Sprint(c.Status.Ledger))
	}
	noViolations(t)
}
