//go:build e2e

package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/machines"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// TestNodeLifecycle walks one cluster through the node machine's main
// paths with the operator binary against the real control plane and the GD2
// simulator: come up, scale 3 -> 5 -> 3 with a replicated volume holding
// data, refuse an unsafe decommission, decommission a named node, and
// maintenance then resume. The simulator's data-safety checker must record
// nothing.
func TestNodeLifecycle(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "lifecycle"
	createCluster(t, ns, name, 1)
	g := gd2Client(t)

	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	if !t.Run("every Online node is a live GD2 peer carrying its state and zone", func(t *testing.T) {
		peers, err := g.ListPeers(context.Background(), gd2FilterAll)
		if err != nil {
			t.Fatal(err)
		}
		byNode := map[string]string{}
		for _, p := range peers {
			byNode[p.Metadata[transitions.MetaNode]] = p.Metadata[transitions.MetaState] + "/" + p.Zone()
		}
		for _, n := range nodes {
			want := "Online/" + n.Spec.Zone
			if got := byNode[ns+"/"+n.Name]; got != want {
				t.Errorf("peer of %s: state/zone %q, want %q", n.Name, got, want)
			}
			if n.Status.PeerID == "" {
				t.Errorf("node %s has no peer id in status", n.Name)
			}
		}
	}) {
		return // later steps build on this one
	}
	noViolations(t)

	t.Run("explain's live decision of the steady nodes and cluster is the one the operator persisted", func(t *testing.T) {
		// The admin's reads: a cluster admin's clients, GD2 through the
		// cluster's endpoint and auth Secret (machines.LiveReads).
		r := machines.LiveReads{Kube: env.Client, Anthill: anthill, GD2Timeout: 10 * time.Second}
		err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
			for n := range waitNodes(t, ns, name, 3, time.Minute) {
				live, err := machines.LiveNodeDecision(ctx, r, ns, n)
				if err != nil {
					return false, err
				}
				node, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, n, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if !live.Known() || live.GD2 != machines.LiveGD2Read || !live.Decision.Waiting() || live.Decision.Message != node.Status.Message {
					return false, fmt.Errorf("node %s: live %s/%s %q (GD2 %s, %v), persisted %q", n, live.Decision.Event, live.Decision.Reason, live.Decision.Message, live.GD2, live.GD2Error, node.Status.Message)
				}
			}
			live, err := machines.LiveClusterDecision(ctx, r, ns, name)
			if err != nil {
				return false, err
			}
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			ready := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionReady)
			if !live.Known() || live.GD2 != machines.LiveGD2Read || !live.Decision.Waiting() || ready == nil || live.Decision.Message != ready.Message || string(c.Status.Phase) != string(live.State) {
				return false, fmt.Errorf("cluster: live %s%s/%s %q in %s (GD2 %s, %v), persisted %+v in %s", live.Decision.Event, live.Decision.Step, live.Decision.Reason, live.Decision.Message, live.State, live.GD2, live.GD2Error, ready, c.Status.Phase)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	// A replica-3 volume: one brick in each zone.
	createReplicatedVolume(t, g, "data")
	if err := simOf(t).Write("data", 50); err != nil {
		t.Fatal(err)
	}

	t.Run("status.capacity is what GD2's devices hold and have free, per zone", func(t *testing.T) {
		err := framework.WaitFor(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
			want, zones, err := clusterCapacity(ctx, g, ns, name)
			if err != nil {
				return false, err
			}
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			cp := c.Status.Capacity
			switch {
			case cp == nil || cp.Total == nil || cp.Free == nil:
				return false, errors.New("status.capacity not written yet")
			case uint64(cp.Total.Value()) != want.Total || uint64(cp.Free.Value()) != want.Free:
				return false, fmt.Errorf("status.capacity %s free of %s, GD2 says %d free of %d", cp.Free, cp.Total, want.Free, want.Total)
			case len(cp.Zones) != zones:
				return false, fmt.Errorf("status.capacity has %d zones, want %d", len(cp.Zones), zones)
			}
			return true, nil
		})
		if err != nil {
			t.Fatal(err)
		}
	})

	t.Run("spec.clusterOptions reach GD2, and come back after a hand change there", func(t *testing.T) {
		const key = "cluster.localtime-logging"
		setClusterOptions(t, ns, name, map[string]string{key: "on"})
		waitClusterOption(t, g, key, "on", time.Minute)
		// An admin changes the option in GD2 behind anthill's back: the
		// cluster machine sees the drift on its next look and sets it again.
		if _, err := g.SetClusterOptions(context.Background(), map[string]string{key: "off"}); err != nil {
			t.Fatal(err)
		}
		waitClusterOption(t, g, key, "on", 2*time.Minute)
		// Leave the shared simulator as it was.
		setClusterOptions(t, ns, name, nil)
		if _, err := g.SetClusterOptions(context.Background(), map[string]string{key: "off"}); err != nil {
			t.Fatal(err)
		}
	})

	if !t.Run("scaling up to five nodes adds them Online", func(t *testing.T) {
		setTemplateNodes(t, ns, name, map[string]int32{"zone-1": 2, "zone-2": 2})
		waitNodes(t, ns, name, 5, 2*time.Minute)
	}) {
		return // later steps build on this one
	}

	var beforeScaleDown map[string]operatorv1alpha1.GlusterNode
	if !t.Run("scaling back to three drains the surplus nodes without losing a brick", func(t *testing.T) {
		beforeScaleDown = waitNodes(t, ns, name, 5, time.Minute)
		setTemplateNodes(t, ns, name, map[string]int32{"zone-1": 1, "zone-2": 1})
		nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
		peers := map[string]bool{}
		for _, n := range nodes {
			peers[n.Status.PeerID] = true
		}
		for peer, n := range bricksByPeer(t, g, "data") {
			if !peers[peer] {
				t.Errorf("%d brick(s) of volume data are on peer %s, which is not a remaining node", n, peer)
			}
		}
		noViolations(t)
	}) {
		return // later steps build on this one
	}

	t.Run("the ledger records the scaling and the options set, each before it was made", func(t *testing.T) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		remaining := waitNodes(t, ns, name, 3, time.Minute)
		created := map[string]int32{}
		var decommissioned []string
		options := false
		for _, e := range c.Status.Ledger {
			switch e.Action {
			case operatorv1alpha1.LedgerActionCreateNodes:
				created[e.Template] += e.Count
			case operatorv1alpha1.LedgerActionDecommissionNode:
				decommissioned = append(decommissioned, e.Node)
				if _, ok := beforeScaleDown[e.Node]; !ok {
					t.Errorf("the ledger names %s as decommissioned by scaling, not one of the five nodes", e.Node)
				}
				if _, ok := remaining[e.Node]; ok {
					t.Errorf("the ledger names %s as decommissioned by scaling, but it is one of the three left", e.Node)
				}
			case operatorv1alpha1.LedgerActionSetClusterOptions:
				options = options || slices.Contains(e.Options, "cluster.localtime-logging=on")
			}
		}
		// Three at provisioning, one more each in zone-1 and zone-2.
		if want := map[string]int32{"zone-1": 2, "zone-2": 2, "zone-3": 1}; !maps.Equal(created, want) {
			t.Errorf("the ledger records %v GlusterNodes created per template, want %v: %+v", created, want, c.Status.Ledger)
		}
		if len(decommissioned) != 2 {
			t.Errorf("the ledger records %v decommissioned by scaling down, want the 2 surplus nodes", decommissioned)
		}
		if !options {
			t.Errorf("the ledger does not record cluster.localtime-logging=on set in GD2: %+v", c.Status.Ledger)
		}
	})

	var victim string
	if !t.Run("a decommission that would put two copies in one zone is refused with a reason", func(t *testing.T) {
		nodes := waitNodes(t, ns, name, 3, time.Minute)
		for n, node := range nodes {
			if node.Spec.Zone == "zone-1" {
				victim = n
			}
		}
		requestOnNode(t, ns, victim, "decommission")
		waitNodeCondition(t, ns, victim, "DrainBlocked", time.Minute)
		if got := bricksByPeer(t, g, "data")[nodes[victim].Status.PeerID]; got != 1 {
			t.Fatalf("the blocked node must keep its brick, has %d", got)
		}
		noViolations(t)
	}) {
		return // later steps build on this one
	}

	if !t.Run("a named node drains once a node in its zone can take its brick, surviving an operator crash", func(t *testing.T) {
		setTemplateNodes(t, ns, name, map[string]int32{"zone-1": 2})
		n := waitNodeState(t, ns, victim, "Draining", 2*time.Minute)
		peer := n.Status.PeerID
		waitMovedBrick(t, ns, victim, 2*time.Minute)
		restartOperator(t)
		waitNodeState(t, ns, victim, "", 3*time.Minute)
		if got := bricksByPeer(t, g, "data")[peer]; got != 0 {
			t.Fatalf("the decommissioned peer still holds %d brick(s)", got)
		}
		// The spec still asks for two nodes in zone-1: a decommissioned
		// node is replaced by a fresh one, as for any declared count.
		nodes := waitNodes(t, ns, name, 4, 2*time.Minute)
		if _, ok := nodes[victim]; ok {
			t.Fatalf("the decommissioned node %s still exists", victim)
		}
		noViolations(t)
	}) {
		return // later steps build on this one
	}

	if !t.Run("maintenance disables a node's devices and resume enables them", func(t *testing.T) {
		nodes := waitNodes(t, ns, name, 4, time.Minute)
		var target string
		for n := range nodes {
			target = n
			break
		}
		requestOnNode(t, ns, target, "maintenance")
		n := waitNodeState(t, ns, target, "Maintenance", time.Minute)
		waitDevices(t, g, n.Status.PeerID, "disabled", time.Minute)
		requestOnNode(t, ns, target, "resume")
		waitNodeState(t, ns, target, "Online", time.Minute)
		waitDevices(t, g, n.Status.PeerID, "enabled", time.Minute)
		noViolations(t)
	}) {
		return // later steps build on this one
	}

	t.Run("desiredState disabled keeps a node Online with its devices disabled, and enabled restores them", func(t *testing.T) {
		nodes := waitNodes(t, ns, name, 4, time.Minute)
		var target string
		for n := range nodes {
			target = n
			break
		}
		setDesiredState(t, ns, target, operatorv1alpha1.NodeDisabled)
		peer := nodes[target].Status.PeerID
		waitDevices(t, g, peer, "disabled", time.Minute)
		if n := waitNodeState(t, ns, target, "Online", time.Minute); n.Status.Message == "" {
			t.Errorf("node %s says nothing about being disabled", target)
		}
		waitNodeCondition(t, ns, target, states.ReasonNodeDisabled, time.Minute)
		setDesiredState(t, ns, target, operatorv1alpha1.NodeEnabled)
		waitDevices(t, g, peer, "enabled", time.Minute)
		noViolations(t)
	})
}

// setDesiredState sets a node's spec.desiredState, as an admin's edit would.
func setDesiredState(t testing.TB, ns, name string, st operatorv1alpha1.NodeDesiredState) {
	t.Helper()
	editNode(t, ns, name, func(n *operatorv1alpha1.GlusterNode) { n.Spec.DesiredState = st })
}

// clusterCapacity sums, straight from GD2, the devices of the cluster's
// peers: the total, and the free space of enabled devices on online peers;
// and counts the zones those peers are in.
func clusterCapacity(ctx context.Context, g *gd2.Client, ns, cluster string) (states.ZoneCapacity, int, error) {
	peers, err := g.ListPeers(ctx, gd2FilterAll)
	if err != nil {
		return states.ZoneCapacity{}, 0, err
	}
	devices, err := g.ListAllDevices(ctx)
	if err != nil {
		return states.ZoneCapacity{}, 0, err
	}
	ours, zones := map[string]bool{}, map[string]bool{}
	online := map[string]bool{}
	for _, p := range peers {
		if p.Metadata[transitions.MetaCluster] == cluster && strings.HasPrefix(p.Metadata[transitions.MetaNode], ns+"/") {
			ours[p.ID], online[p.ID], zones[p.Zone()] = true, p.Online, true
		}
	}
	var sum states.ZoneCapacity
	for _, d := range devices {
		if !ours[d.PeerID] {
			continue
		}
		sum.Total += d.TotalSize
		if d.State == gd2.DeviceEnabled && online[d.PeerID] {
			sum.Free += d.FreeSize
		}
	}
	return sum, len(zones), nil
}

// setClusterOptions sets the cluster's spec.clusterOptions, as an admin's
// edit would (retrying on conflict with the operator's status writes).
func setClusterOptions(t testing.TB, ns, cluster string, opts map[string]string) {
	t.Helper()
	editCluster(t, ns, cluster, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.ClusterOptions = opts })
}

// waitClusterOption waits until GD2's cluster option key has value.
func waitClusterOption(t testing.TB, g *gd2.Client, key, value string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		opts, err := g.ClusterOptions(ctx)
		if err != nil {
			return false, err
		}
		for _, o := range opts {
			if o.Key == key {
				return o.Value == value, fmt.Errorf("GD2 has %s = %q, want %q", key, o.Value, value)
			}
		}
		return false, fmt.Errorf("GD2 lists no option %s", key)
	})
	if err != nil {
		t.Fatal(err)
	}
}
