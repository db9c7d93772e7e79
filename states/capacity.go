package states

import (
	"cmp"
	"slices"
)

// CapacityDevice is one GD2 device as the capacity count sees it.
type CapacityDevice struct {
	PeerID  string
	Enabled bool
	// Total and Free are GD2's total-size and free-size, in bytes.
	Total, Free uint64
}

// ZoneCapacity is the capacity of the devices of one zone's peers (Zone
// empty: of the whole cluster).
type ZoneCapacity struct {
	Zone string
	// Total is the size of every device registered on the zone's peers.
	Total uint64
	// Free is what can still take a new brick: the free space of enabled
	// devices on online peers. A disabled device (a node in maintenance or
	// draining) or a dead peer's device adds nothing, whatever GD2 lists
	// as free on it.
	Free uint64
}

// Capacity sums devices by the physical zone of their peer (a peer a
// drain moved to its draining zone counts in its home zone): the cluster's
// total, and one entry per zone sorted by name. Devices of peers not in
// peers are not the cluster's and are left out.
func Capacity(peers []PeerFacts, devices []CapacityDevice) (ZoneCapacity, []ZoneCapacity) {
	byID := make(map[string]PeerFacts, len(peers))
	zones := map[string]*ZoneCapacity{}
	for _, p := range peers {
		byID[p.ID] = p
		z := p.PhysicalZone()
		if zones[z] == nil {
			zones[z] = &ZoneCapacity{Zone: z}
		}
	}
	var total ZoneCapacity
	for _, d := range devices {
		p, ok := byID[d.PeerID]
		if !ok {
			continue
		}
		z := zones[p.PhysicalZone()]
		z.Total += d.Total
		total.Total += d.Total
		if d.Enabled && p.Online {
			z.Free += d.Free
			total.Free += d.Free
		}
	}
	out := make([]ZoneCapacity, 0, len(zones))
	for _, z := range zones {
		out = append(out, *z)
	}
	slices.SortFunc(out, func(a, b ZoneCapacity) int { return cmp.Compare(a.Zone, b.Zone) })
	return total, out
}

// PeerCapacity is the capacity of one peer's devices.
type PeerCapacity struct {
	// Total and Free are as in ZoneCapacity: Free counts only enabled
	// devices while the peer is online.
	Total, Free uint64
	// Allocated is what bricks take on the peer's devices, enabled or
	// not: total minus GD2's free-size, over every device.
	Allocated uint64
}

// CapacityByPeer sums devices per peer id, with the same rule as Capacity.
// Devices of peers not in peers are left out.
func CapacityByPeer(peers []PeerFacts, devices []CapacityDevice) map[string]PeerCapacity {
	online := make(map[string]bool, len(peers))
	out := make(map[string]PeerCapacity, len(peers))
	for _, p := range peers {
		online[p.ID] = p.Online
		out[p.ID] = PeerCapacity{}
	}
	for _, d := range devices {
		pc, ok := out[d.PeerID]
		if !ok {
			continue
		}
		pc.Total += d.Total
		pc.Allocated += d.Total - min(d.Free, d.Total)
		if d.Enabled && online[d.PeerID] {
			pc.Free += d.Free
		}
		out[d.PeerID] = pc
	}
	return out
}
