package cluster

import (
	"context"
	"testing"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/resource"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/states"
)

// The cluster machine reads its capacity from the devices GD2 lists: three
// peers in three zones with one 100 GiB device each; a disabled device
// counts toward the total but has no free space to offer.
func TestClusterCapacityIsReadFromGD2Devices(t *testing.T) {
	pool := fixtures.NewGD2Pool(t, sim.Config{}, nil)
	pool.CreateVolume(t, "data", 3)
	ctx := context.Background()
	ops := &effects.GD2{Client: pool.Client}
	if err := ops.SetDeviceEnabled(ctx, pool.Peers[0].ID, "/dev/sdb", false); err != nil {
		t.Fatal(err)
	}
	s := &Syncer{GD2: &effects.GD2Clients{Secrets: kubefake.NewClientset(pool.AuthSecret()).CoreV1()}, Log: &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics()}}
	reading := s.capacity(ctx, pool.Cluster())
	if reading == nil {
		t.Fatal("no capacity read")
	}
	got := reading.status
	gib := func(n int64) resource.Quantity { return *resource.NewQuantity(n<<30, resource.BinarySI) }
	devices, err := pool.Client.ListAllDevices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var free int64
	for _, d := range devices {
		if d.State == gd2.DeviceEnabled {
			free += int64(d.FreeSize)
		}
	}
	if want := gib(300); got.Total.Cmp(want) != 0 {
		t.Errorf("total %s, want %s", got.Total, &want)
	}
	if got.Free.Value() != free || free == 0 || free >= 300<<30 {
		t.Errorf("free %s, want %d bytes (the enabled devices' free space)", got.Free, free)
	}
	if len(got.Zones) != 3 {
		t.Fatalf("zones %+v, want three", got.Zones)
	}
	var zoneFree int64
	for _, z := range got.Zones {
		zoneFree += z.Free.Value()
		if z.Total.Cmp(gib(100)) != 0 {
			t.Errorf("zone %s total %s, want 100Gi", z.Zone, &z.Total)
		}
	}
	if zoneFree != free {
		t.Errorf("zones' free adds up to %d, want %d", zoneFree, free)
	}
	// Per peer: the disabled device's peer offers no free space but all of
	// its size counts, and allocated is what GD2 does not list as free.
	for _, p := range pool.Peers {
		pc, ok := reading.byPeer[p.ID]
		if !ok || pc.Total != 100<<30 {
			t.Errorf("peer %s capacity %+v, want 100Gi total", p.ID, pc)
		}
		if (p.ID == pool.Peers[0].ID) != (pc.Free == 0) {
			t.Errorf("peer %s free %d: only the disabled device's peer offers none", p.ID, pc.Free)
		}
	}
	total, _ := states.Capacity(nil, nil)
	if c := capacityStatus(total, nil); !c.Total.IsZero() || len(c.Zones) != 0 {
		t.Errorf("capacity of nothing: %+v", c)
	}
}
