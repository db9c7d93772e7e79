//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// loopDir is the directory each GD2 host offers for loop bricks.
const loopDir = "/srv/gluster-loop"

// TestDrainAfterAFailedLoopPrepare drains a node whose loop brick an admin
// already tried to move by hand (issue 39, item 3). anthill itself
// registers only its brick claims, with the LVM provisioner, and creates no
// volume: loop bricks exist only where an admin registered a directory
// with the loop provisioner and made a volume on it (GD2's CLI or REST, or a
// StorageClass of their own with brickType: loop). And anthill's own
// replace-brick cannot fail at the prepare step the way the issue names:
// it is always served by the source's own GD2, which sizes the new brick
// right (kube/effects ReplaceBrick). What leaves a failed prepare behind is
// the admin's replace-brick through the management Service, served by
// another node: sized 0, it fails at PrepareBricks and leaves an empty
// image on the target's loop directory under the name anthill's move will
// use. On LVM that name would refuse every later move onto that device
// (the planner then offers that peer no more); on loop GD2 reopens the
// image, so anthill's drain onto that peer completes: here the drain of a
// node whose template goes to zero, so that no new node of its zone joins
// and draws the move (anthill's planner prefers the source's zone and does
// not look at a device's provisioner). The operator is SIGKILLed
// mid-drain; nothing may be lost.
func TestDrainAfterAFailedLoopPrepare(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "loopdrain"
	createCluster(t, ns, name, 1)
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	g := gd2Client(t)
	sim := simOf(t)
	ctx := context.Background()

	// One node per zone: a replica-2 volume on the nodes of zone-1 and
	// zone-2, so the move goes to zone-3's node, the only one outside the
	// replica set's zones.
	byZone := map[string]operatorv1alpha1.GlusterNode{}
	for _, n := range nodes {
		byZone[n.Spec.Zone] = n
	}
	first, second, target := byZone["zone-1"], byZone["zone-2"], byZone["zone-3"]
	hostOf := map[string]string{}
	for _, h := range sim.Hosts() {
		hostOf[h.PeerID] = h.Name
	}
	for _, n := range []operatorv1alpha1.GlusterNode{first, second, target} {
		host := hostOf[n.Status.PeerID]
		if host == "" {
			t.Fatalf("no simulated host runs peer %s of %s", n.Status.PeerID, n.Name)
		}
		if err := sim.SetDeviceSizes(host, map[string]uint64{loopDir: 100 << 30}); err != nil {
			t.Fatal(err)
		}
		if _, err := g.AddDevice(ctx, n.Status.PeerID, gd2.DeviceAddRequest{Device: loopDir, Provisioner: gd2.ProvisionerLoop}); err != nil {
			t.Fatalf("register the loop directory on %s: %v", n.Name, err)
		}
	}
	createVolume(t, g, gd2.VolumeCreateRequest{Name: "loopvol", Size: 1 << 30, Replica: 2,
		Provisioner: gd2.ProvisionerLoop, LimitPeers: []string{first.Status.PeerID, second.Status.PeerID}})
	if err := sim.Write("loopvol", 40); err != nil {
		t.Fatal(err)
	}
	waitVolumeHealthy(t, ns, name, "loopvol", 2*time.Minute)

	// The victim holds the set's second brick: without the first, a
	// replica-2 set loses client quorum, and anthill moves no such brick.
	v, err := g.GetVolume(ctx, "loopvol")
	if err != nil {
		t.Fatal(err)
	}
	bricks := v.Subvols[0].Bricks
	if len(bricks) != 2 {
		t.Fatalf("loopvol's replica set: %+v, want two bricks", bricks)
	}
	var victim, partner operatorv1alpha1.GlusterNode
	for _, n := range []operatorv1alpha1.GlusterNode{first, second} {
		switch n.Status.PeerID {
		case bricks[1].PeerID:
			victim = n
		case bricks[0].PeerID:
			partner = n
		}
	}
	if victim.Name == "" || partner.Name == "" {
		t.Fatalf("loopvol's bricks %+v are not on %s and %s", bricks, first.Name, second.Name)
	}
	src := bricks[1].Path

	// The admin's move, served by the partner's GD2.
	_, err = nodeClient(t, hostOf[partner.Status.PeerID]).ReplaceBrick(ctx, "loopvol", gd2.ReplaceBrickRequest{SrcPeerID: victim.Status.PeerID, SrcBrickPath: src})
	// GD2 places a loop brick only on a loop directory outside the zones
	// the volume uses: the target's, where the empty image now is.
	if err == nil || !strings.Contains(err.Error(), "PrepareBricks") || !strings.Contains(err.Error(), target.Status.PeerID) {
		t.Fatalf("the admin's replace-brick served by another node: %v, want a failed PrepareBricks on %s's peer %s", err, target.Name, target.Status.PeerID)
	}
	t.Logf("the admin's replace-brick: %v", err)

	// The victim's template goes to no node: the cluster decommissions it,
	// and no new node of that zone joins to draw the move.
	tmpl := -1
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, nt := range c.Spec.NodeTemplates {
		if nt.Name == victim.Spec.Template {
			tmpl = i
		}
	}
	if tmpl < 0 {
		t.Fatalf("no template %q in %s", victim.Spec.Template, name)
	}
	patch := fmt.Sprintf(`[{"op":"replace","path":"/spec/nodeTemplates/%d/nodes","value":0}]`, tmpl)
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	waitMovedBrick(t, ns, victim.Name, 2*time.Minute)
	restartOperator(t)
	waitNodeState(t, ns, victim.Name, "", 4*time.Minute)
	byPeer := bricksByPeer(t, g, "loopvol")
	if byPeer[victim.Status.PeerID] != 0 || byPeer[target.Status.PeerID] != 1 {
		t.Fatalf("loopvol's bricks by peer %v: want none on %s and one on %s, the loop directory with the leftover image", byPeer, victim.Name, target.Name)
	}
	waitVolumeHealthy(t, ns, name, "loopvol", 2*time.Minute)
	noViolations(t)
}

// nodeClient is a GD2 client whose requests the simulated host serves: the
// host's name in the URL (the simulator picks the serving GD2 by the Host
// header's first label), dialling the simulator.
func nodeClient(t testing.TB, host string) *gd2.Client {
	t.Helper()
	u, err := url.Parse(simOf(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gd2.New(gd2.Options{Endpoint: u.Scheme + "://" + host + ":24007", DialAddress: u.Host, Secret: simOf(t).Secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
