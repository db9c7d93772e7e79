package node

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// TestPreviewDrainPlansEveryBrickWithThePlacementPolicy: four Online
// peers in three zones, a replica-3 volume on three of them; the preview of
// draining one brick holder moves its brick to the one peer not in the
// replica set, in the same zone, and names that peer's GlusterNode.
func TestPreviewDrainPlansEveryBrickWithThePlacementPolicy(t *testing.T) {
	s, err := sim.New(sim.Config{Secret: fixtures.GD2Secret, Peers: 4, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 << 30})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtures.GD2Secret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil || len(peers) != 4 {
		t.Fatalf("peers %v, %v", peers, err)
	}
	ops := &effects.GD2{Client: g}
	nodeOf := map[string]string{}
	var nodes []*operatorv1alpha1.GlusterNode
	for i, p := range peers {
		if err := ops.RegisterDevice(ctx, p.ID, "/dev/sdb", ""); err != nil {
			t.Fatal(err)
		}
		name := "n" + string(rune('1'+i))
		nodeOf[p.ID] = "ns/" + name
		md := map[string]string{transitions.MetaNode: "ns/" + name, transitions.MetaState: string(states.NodeOnline)}
		if _, err := g.EditPeer(ctx, p.ID, gd2.PeerEditRequest{Metadata: md}); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &operatorv1alpha1.GlusterNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: p.Zone()},
			Status:     operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeOnline), PeerID: p.ID},
		})
	}
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: "data", Size: 1 << 30, Replica: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.StartVolume(ctx, "data", false); err != nil {
		t.Fatal(err)
	}
	vol, err := g.GetVolume(ctx, "data")
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, b := range vol.Bricks() {
		holders = append(holders, b.PeerID)
	}
	var spare, spareZone string
	for _, p := range peers {
		if !slices.Contains(holders, p.ID) {
			spare, spareZone = p.ID, p.Zone()
		}
	}
	// The replica set spans the three zones, so one holder shares the
	// spare's zone: that is the node to drain.
	var leaving *operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if n.Status.PeerID != spare && n.Spec.Zone == spareZone {
			leaving = n
		}
	}
	if spare == "" || leaving == nil {
		t.Fatalf("layout: holders %v of %d peers; want a spare peer sharing a zone with a holder", holders, len(peers))
	}

	got, err := PreviewDrain(ctx, g, leaving, nodes, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got.PeerID != leaving.Status.PeerID || len(got.Bricks) != 1 || got.Staying != 0 || got.MaxParallelMoves != 1 || got.InFlight != 0 {
		t.Fatalf("preview %+v; want one brick of peer %s to move, none staying", got, leaving.Status.PeerID)
	}
	for _, p := range peers {
		want := 1 // one replica-3 volume on three of the four peers
		if p.ID == spare {
			want = 0
		}
		if got.PeerBricks[p.ID] != want {
			t.Errorf("peer %s counted with %d bricks, want %d (the scale-down order goes by them)", p.ID, got.PeerBricks[p.ID], want)
		}
	}
	b := got.Bricks[0]
	if b.Volume != "data" || b.Blocked != "" || len(b.Targets) == 0 || b.Targets[0] != spare || b.TargetNodes[0] != nodeOf[spare] || !b.SameZone || !b.Now {
		t.Errorf("brick %+v; want data moved now to the spare peer %s (%s) in its zone", b, spare, nodeOf[spare])
	}

	// A node GD2 does not know has nothing to move; the other peers'
	// brick counts are still read.
	stranger := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "stranger"}}
	if got, err := PreviewDrain(ctx, g, stranger, nodes, 1); err != nil || got.PeerID != "" || len(got.Bricks) != 0 || got.PeerBricks[holders[0]] != 1 {
		t.Errorf("preview of an unknown node = %+v, %v; want no bricks to move, the peers' counts", got, err)
	}
}
