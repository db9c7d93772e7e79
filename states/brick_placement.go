package states

import (
	"fmt"
	"sort"
	"strings"
)

// The move planner decides where one brick may go and whether GD2 would
// accept the move now. Its rules come from what GD2 does (fact sheet §3,
// §7), not from what a simulator lets through:
//
//   - GD2's v1 transaction engine refuses a replace-brick while any node
//     holding a brick of the volume is down, the source's own node
//     included, or the new brick's node is down: the drain waits, naming
//     the node, until it is back.
//   - Zone safety is a property of a replica set: no two bricks of one
//     set in one zone. Where the volume keeps its subvolumes in zones of
//     their own (created without subvolume-zones-overlap), a target that
//     keeps it so is preferred; a placement that only keeps each set in
//     distinct zones is still taken, so a drain never sticks on a rule
//     stricter than the volume's own layout.
//   - GD2 always counts the source brick's zone as used. A move within the
//     source's zone therefore first moves the source peer out of it (see
//     effects.GD2.ReplaceBrick in kube/effects); zones are compared by
//     where a peer really is (PeerFacts.PhysicalZone), never by that
//     draining zone.
//   - GD2 names a replacement 0-based (brick_<vol>_s<i>_b<j>) while its
//     create planner names 1-based, and a replacement whose name exists in
//     the target's volume group truncates that live brick. Peers that may
//     hold an LV of that name are never offered (ClashPeers).
//   - A peer whose node is leaving or held (NodeStateMayReceiveBricks) is
//     never offered, even while its devices are still enabled.

// PeerFacts is one GD2 peer as the planner sees it.
type PeerFacts struct {
	ID string
	// Label names the peer for a person (its GlusterNode, else its name).
	Label string
	// Zone is the zone GD2 reports for the peer.
	Zone string
	// HomeZone is set when anthill moved the peer out of its zone to drain
	// it (Zone is then that zone's draining zone): the zone it really sits
	// in. Empty otherwise.
	HomeZone string
	Online   bool
	// MayReceive: the peer's node may receive a moved brick (see
	// NodeStateMayReceiveBricks).
	MayReceive bool
}

// PhysicalZone is the zone a peer really is in: a peer a drain moved to its
// draining zone still sits in its home zone. Every zone comparison of the
// planner uses it.
func (p PeerFacts) PhysicalZone() string {
	if p.HomeZone != "" {
		return p.HomeZone
	}
	return p.Zone
}

func (p PeerFacts) label() string {
	if p.Label != "" {
		return p.Label
	}
	return "peer " + p.ID
}

// DeviceFacts is one GD2 device: its peer, whether bricks may be created on
// it, and its free bytes.
type DeviceFacts struct {
	PeerID  string
	Enabled bool
	Free    uint64
}

// MovePlan is where one brick may go: the peers to offer GD2 (limit-peers),
// and whether they are in the source's own zone.
type MovePlan struct {
	Targets  []string
	SameZone bool
}

// MoveBlock says why a brick cannot move now. NodeDown: because a node of
// its volume is down (GD2's liveness gate), which ends when it is back.
type MoveBlock struct {
	NodeDown bool
	Reason   string
}

// ReplacementRoom is the free space a device needs for a replacement of a
// brick of size: GD2 sizes it from the source's capacity, plus the thin
// pool's metadata (about 0.5 %).
func ReplacementRoom(size uint64) uint64 { return size + size/100 }

// VolumeNodesDown is GD2's v1 liveness gate for a volume: it names the
// nodes holding a brick of vol that are down (peers GD2 does not list count
// as down), "" when every one is up. While it names one, GD2 replaces no
// brick of the volume, the down node's own included.
func VolumeNodesDown(vol VolumeFacts, peers map[string]PeerFacts) string {
	var down []string
	seen := map[string]bool{}
	for _, sv := range vol.Subvols {
		for _, o := range sv.Bricks {
			if seen[o.PeerID] {
				continue
			}
			seen[o.PeerID] = true
			if p, ok := peers[o.PeerID]; !ok || !p.Online {
				label := "peer " + o.PeerID
				if ok {
					label = p.label()
				}
				down = append(down, label)
			}
		}
	}
	if len(down) == 0 {
		return ""
	}
	sort.Strings(down)
	return fmt.Sprintf("GD2 moves no brick of volume %s while a node holding one of its bricks is down: %s", vol.Name, strings.Join(down, ", "))
}

// PoolNodesDown is GD2's v1 liveness gate for a volume option: it names
// the peers of the pool that are down, "" when every one is up. While it
// names one, GD2 sets no option of any volume (the transaction runs on
// every peer), so anthill cannot make GD2 heal a replacement.
func PoolNodesDown(peers []PeerFacts) string {
	var down []string
	for _, p := range peers {
		if !p.Online {
			down = append(down, p.label())
		}
	}
	if len(down) == 0 {
		return ""
	}
	sort.Strings(down)
	return "GD2 sets no volume option while a peer of the pool is down: " + strings.Join(down, ", ")
}

// PlanMove plans the move of brick b of vol off peer src. clash are peers
// that may hold an LV with the replacement's name (ClashPeers), refused are
// peers a brick move off this node already failed on (DrainFacts.Refused);
// neither is offered, nor is a peer that is down, may not receive, or has
// no enabled device with ReplacementRoom free.
func PlanMove(b VolumeBrick, vol VolumeFacts, src string, peers []PeerFacts, devices []DeviceFacts, clash, refused map[string]bool) (MovePlan, *MoveBlock) {
	byID := map[string]PeerFacts{}
	for _, p := range peers {
		byID[p.ID] = p
	}
	if reason := VolumeNodesDown(vol, byID); reason != "" {
		return MovePlan{}, &MoveBlock{NodeDown: true, Reason: reason}
	}
	var set *SubvolFacts
	for i := range vol.Subvols {
		if vol.Subvols[i].Name == b.Subvol {
			set = &vol.Subvols[i]
		}
	}
	if set == nil {
		return MovePlan{}, &MoveBlock{Reason: fmt.Sprintf("brick %s is in no subvolume of volume %s", b.Path, vol.Name)}
	}
	zoneOf := func(id string) string {
		if p, ok := byID[id]; ok {
			return p.PhysicalZone()
		}
		return id
	}
	setZones := map[string]bool{}
	for _, o := range set.Bricks {
		if !(o.PeerID == src && o.Path == b.Path) {
			setZones[zoneOf(o.PeerID)] = true
		}
	}
	// otherZones: zones of the other subvolumes. The volume keeps its
	// subvolumes apart if no zone is in two of them.
	otherZones := map[string]bool{}
	apart := true
	subvolOfZone := map[string]string{}
	for _, sv := range vol.Subvols {
		for _, o := range sv.Bricks {
			if o.PeerID == src && o.Path == b.Path {
				continue
			}
			z := zoneOf(o.PeerID)
			if sv.Name != set.Name {
				otherZones[z] = true
			}
			if prev, ok := subvolOfZone[z]; ok && prev != sv.Name {
				apart = false
			}
			subvolOfZone[z] = sv.Name
		}
	}
	room := ReplacementRoom(b.Size)
	fits := map[string]bool{}
	for _, d := range devices {
		if d.Enabled && d.Free >= room {
			fits[d.PeerID] = true
		}
	}
	srcZone := zoneOf(src)
	var own, keepLayout, anySafe []string
	held := 0
	for _, p := range peers {
		if p.ID != src && p.Online && !p.MayReceive {
			held++
		}
		if p.ID == src || !p.Online || !p.MayReceive || clash[p.ID] || refused[p.ID] || !fits[p.ID] {
			continue
		}
		z := p.PhysicalZone()
		if setZones[z] {
			continue
		}
		switch {
		case z == srcZone:
			own = append(own, p.ID)
		case apart && !otherZones[z]:
			keepLayout = append(keepLayout, p.ID)
		default:
			anySafe = append(anySafe, p.ID)
		}
	}
	for _, l := range [][]string{own, keepLayout, anySafe} {
		sort.Strings(l)
	}
	switch {
	case len(own) > 0 && (!apart || !otherZones[srcZone]):
		return MovePlan{Targets: own, SameZone: true}, nil
	case len(keepLayout) > 0:
		return MovePlan{Targets: keepLayout}, nil
	case len(own) > 0:
		return MovePlan{Targets: own, SameZone: true}, nil
	case len(anySafe) > 0:
		return MovePlan{Targets: anySafe}, nil
	}
	used := make([]string, 0, len(setZones))
	for z := range setZones {
		used = append(used, z)
	}
	sort.Strings(used)
	why := fmt.Sprintf("no alive peer outside zones %v (used by the other bricks of replica set %s) has an enabled device with %d bytes free", used, set.Name, room)
	if len(refused) > 0 {
		why += fmt.Sprintf("; %d peer(s) are not offered again because a replace-brick onto them failed", len(refused))
	}
	if held > 0 {
		why += fmt.Sprintf("; %d alive peer(s) take no bricks in their node's state (leaving, held, or a state this operator does not know)", held)
	}
	return MovePlan{}, &MoveBlock{Reason: why + fmt.Sprintf(" for brick %s of volume %s", b.Path, vol.Name)}
}

// ClashPeers are the peers whose volume groups may already hold an LV
// named like the replacement of brick path in vol: the peer holding the
// brick the create planner named so (1-based: subvolume i-1, brick j-1),
// and the peers that held either of the two positions before a move
// (formerHolders: GD2 leaves a replaced brick's LV on its old node).
func ClashPeers(vol VolumeFacts, path string, formerHolders map[BrickRef][]string) map[string]bool {
	out := map[string]bool{}
	for i, sv := range vol.Subvols {
		for j, b := range sv.Bricks {
			if b.Path != path {
				continue
			}
			for _, id := range formerHolders[BrickRef{vol.Name, path}] {
				out[id] = true
			}
			if i == 0 || j == 0 || j-1 >= len(vol.Subvols[i-1].Bricks) {
				continue
			}
			prev := vol.Subvols[i-1].Bricks[j-1]
			out[prev.PeerID] = true
			for _, id := range formerHolders[BrickRef{vol.Name, prev.Path}] {
				out[id] = true
			}
		}
	}
	return out
}
