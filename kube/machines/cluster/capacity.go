package cluster

import (
	"context"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/states"
)

// capacityReading is one read of the cluster's GD2 peers and devices.
type capacityReading struct {
	// status is the API form of the count (status.capacity).
	status *operatorv1alpha1.CapacityStatus
	// zones is the count per physical zone; byPeer per peer id.
	zones  []states.ZoneCapacity
	byPeer map[string]states.PeerCapacity
}

// capacity reads the cluster's peers and devices from GD2 and sums them
// (states.Capacity) into status.capacity. It is nil when GD2 does not
// answer: the last reading stays. The lists are the cluster's shared view
// (effects.PoolViews), the devices at most effects.ConfigListFactor
// intervals old: the count is a reading for people and for the
// autoscaler, whose scale-down goes through a drain that re-reads GD2 live
// before it moves anything.
func (s *Syncer) capacity(ctx context.Context, c *operatorv1alpha1.GlusterCluster) *capacityReading {
	client, err := s.GD2.For(ctx, c)
	if err != nil {
		return nil
	}
	gc := s.GD2.Shared(c, client)
	peers, err := gc.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		return nil
	}
	devices, err := gc.ListAllDevices(ctx)
	if err != nil {
		s.Log.Log.Debug("reading GD2 devices failed; capacity left as it was",
			zap.String(engine.LogNamespace, c.Namespace), zap.String(engine.LogName, c.Name), zap.Error(err))
		return nil
	}
	pf, df := gather.PeerFacts(gather.OwnPeers(c, peers)), capacityDevices(devices)
	total, zones := states.Capacity(pf, df)
	return &capacityReading{status: capacityStatus(total, zones), zones: zones, byPeer: states.CapacityByPeer(pf, df)}
}

// capacityDevices is what the capacity count knows of GD2's devices.
func capacityDevices(devices []gd2.Device) []states.CapacityDevice {
	out := make([]states.CapacityDevice, 0, len(devices))
	for _, d := range devices {
		out = append(out, states.CapacityDevice{PeerID: d.PeerID, Enabled: d.State == gd2.DeviceEnabled, Total: d.TotalSize, Free: d.FreeSize})
	}
	return out
}

// capacityStatus is the API form of a capacity count.
func capacityStatus(total states.ZoneCapacity, zones []states.ZoneCapacity) *operatorv1alpha1.CapacityStatus {
	bytes := func(n uint64) resource.Quantity { return *resource.NewQuantity(int64(n), resource.BinarySI) }
	t, f := bytes(total.Total), bytes(total.Free)
	out := &operatorv1alpha1.CapacityStatus{Total: &t, Free: &f}
	for _, z := range zones {
		out.Zones = append(out.Zones, operatorv1alpha1.ZoneCapacityStatus{Zone: z.Zone, Total: bytes(z.Total), Free: bytes(z.Free)})
	}
	return out
}
