//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/states"
)

// TestDrainOnGD2AsItIs drains nodes the way real GD2 lets them be drained
// (replace-brick served by the source's own GD2, refused while any node of
// the volume is down, zones compared per replica set), on one cluster with
// two nodes per zone holding a replica-3 volume and a distributed-replicate
// 2x3 volume created with subvolume-zones-overlap. The operator is
// SIGKILLed in the middle of each case.
func TestDrainOnGD2AsItIs(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "drains"
	createCluster(t, ns, name, 2)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	g := gd2Client(t)
	createReplicatedVolume(t, g, "rep")
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "dist", Size: 2 << 30, Distribute: 2, Replica: 3, SubvolZonesOverlap: true})
	for _, v := range []string{"rep", "dist"} {
		if err := simOf(t).Write(v, 40); err != nil {
			t.Fatal(err)
		}
		waitVolumeHealthy(t, ns, name, v, 2*time.Minute)
	}

	if !t.Run("a distributed-replicate drain completes with every replica set in distinct zones", func(t *testing.T) {
		nodes := waitNodes(t, ns, name, 6, time.Minute)
		victim := nodeWithMostBricks(t, g, nodes, "dist")
		peer := nodes[victim].Status.PeerID
		requestOnNode(t, ns, victim, "decommission")
		waitMovedBrick(t, ns, victim, 2*time.Minute)
		restartOperator(t)
		drained(t, g, ns, name, victim, peer, "rep", "dist")
		waitNodes(t, ns, name, 6, 2*time.Minute) // the template asks for two per zone
		noViolations(t)
	}) {
		return
	}

	if !t.Run("a drain waits while another node of the volume is down, then completes when it returns", func(t *testing.T) {
		nodes := waitNodes(t, ns, name, 6, 2*time.Minute)
		victim, other := twoBrickNodes(t, g, nodes, "rep")
		peer, otherPeer := nodes[victim].Status.PeerID, nodes[other].Status.PeerID
		before := bricksByPeer(t, g, "rep")[peer]
		partition(t, otherPeer, true)
		requestOnNode(t, ns, victim, "decommission")
		waitNodeCondition(t, ns, victim, "VolumeNodeDown", time.Minute)
		err := framework.WaitFor(context.Background(), 30*time.Second, func(context.Context) (bool, error) {
			return hasEvent(t, ns, victim, "VolumeNodeDown"), fmt.Errorf("no VolumeNodeDown Warning on %s", victim)
		})
		if err != nil {
			t.Fatal(err)
		}
		restartOperator(t)
		waitMoreSyncs(t, operatorOf(t), states.NodeMachine, 3, time.Minute)
		if got := bricksByPeer(t, g, "rep")[peer]; got != before {
			t.Fatalf("bricks of rep moved off %s while %s was down: %d left of %d", victim, other, got, before)
		}
		partition(t, otherPeer, false)
		drained(t, g, ns, name, victim, peer, "rep", "dist")
		noViolations(t)
	}) {
		return
	}
}

// drained waits until the decommissioned node is gone, then checks that its
// peer holds no brick of vols, each volume is healthy again and every
// replica set is in distinct zones.
func drained(t *testing.T, g *gd2.Client, ns, cluster, node, peer string, vols ...string) {
	t.Helper()
	waitNodeState(t, ns, node, "", 4*time.Minute)
	for _, v := range vols {
		if got := bricksByPeer(t, g, v)[peer]; got != 0 {
			t.Errorf("the decommissioned peer still holds %d brick(s) of %s", got, v)
		}
		waitVolumeHealthy(t, ns, cluster, v, 2*time.Minute)
		replicaSetsInDistinctZones(t, g, v)
	}
}

// createVolume creates and starts a volume and turns self-heal on.
func createVolume(t testing.TB, g *gd2.Client, req gd2.VolumeCreateRequest) {
	t.Helper()
	ctx := context.Background()
	if _, err := g.CreateVolume(ctx, req); err != nil {
		t.Fatalf("create volume %s: %v", req.Name, err)
	}
	if _, err := g.StartVolume(ctx, req.Name, false); err != nil {
		t.Fatalf("start volume %s: %v", req.Name, err)
	}
	if _, err := g.SetVolumeOptions(ctx, req.Name, gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true,
	}); err != nil {
		t.Fatalf("enable self-heal on %s: %v", req.Name, err)
	}
}

// nodeWithMostBricks is the node holding the most bricks of vol, preferring
// one with bricks in several of its replica sets, and the first by name
// among equals.
func nodeWithMostBricks(t testing.TB, g *gd2.Client, nodes map[string]operatorv1alpha1.GlusterNode, vol string) string {
	t.Helper()
	v, err := g.GetVolume(context.Background(), vol)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string]map[string]bool{}
	for _, sv := range v.Subvols {
		for _, b := range sv.Bricks {
			if sets[b.PeerID] == nil {
				sets[b.PeerID] = map[string]bool{}
			}
			sets[b.PeerID][sv.Name] = true
		}
	}
	// In name order, so that among equals every run picks the same node.
	best, bestN := "", 0
	for _, n := range slices.Sorted(maps.Keys(nodes)) {
		if c := len(sets[nodes[n].Status.PeerID]); c > bestN {
			best, bestN = n, c
		}
	}
	if best == "" {
		t.Fatalf("no node holds a brick of %s", vol)
	}
	return best
}

// replicaSetsInDistinctZones fails when two bricks of one replica set of
// vol are in the same zone (a peer a drain moved to its draining zone is
// counted in the zone it really is in).
func replicaSetsInDistinctZones(t testing.TB, g *gd2.Client, vol string) {
	t.Helper()
	ctx := context.Background()
	v, err := g.GetVolume(ctx, vol)
	if err != nil {
		t.Fatal(err)
	}
	peers, err := g.ListPeers(ctx, gd2FilterAll)
	if err != nil {
		t.Fatal(err)
	}
	zone := map[string]string{}
	for _, p := range peers {
		zone[p.ID] = p.Zone()
		if orig := p.Metadata[effects.PeerMetaZone]; orig != "" {
			zone[p.ID] = orig
		}
	}
	for _, sv := range v.Subvols {
		seen := map[string]string{}
		for _, b := range sv.Bricks {
			if prev, ok := seen[zone[b.PeerID]]; ok {
				t.Errorf("replica set %s of %s has bricks on %s and %s, both in zone %s", sv.Name, vol, prev, b.PeerID, zone[b.PeerID])
			}
			seen[zone[b.PeerID]] = b.PeerID
		}
	}
}
