package kube

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/transitions"
)

// The brick analysis turns GD2's volume, brick-status and heal-info answers
// into the counts a node decision needs. It is pure so that its data-safety
// rules are table-tested on their own.
//
// Heal-info reports, on each reachable brick, the entries its replica-set
// siblings still lack (AFR's pending index), and -1 for a brick that is down.
// It does not say which sibling lacks them. anthill therefore counts a brick
// as a healed copy only when it is online and reports the largest pending
// count of the online bricks in its set: a complete brick always reports at
// least as many pending entries as any sibling that lacks data, so a brick
// reporting fewer than a sibling is certainly missing entries. When every
// online brick reports zero, all of them are healed. The rule is conservative
// for the common cases (one brick down, or one new brick filling) and is
// documented with its limit in docs/design/heal-safety.md.

// BrickRef names a brick: a volume and the brick's path. Replace-brick keeps
// the path, so a ref follows a brick onto its new peer.
type BrickRef struct {
	Volume string
	Path   string
}

// brickView is one brick with what GD2 said about it.
type brickView struct {
	Volume, Subvol, Path, PeerID string
	Arbiter                      bool
	Online                       bool
	// Pending is heal-info's pending count; -1 when the brick is down or
	// heal-info did not list it.
	Pending    int64
	SplitBrain int64
	Size       uint64
}

// subvolView is one replica set (or distribute leg).
type subvolView struct {
	Volume   string
	Name     string
	Replica  bool // replicate or disperse: other bricks hold copies
	Disperse bool
	Data     int // disperse data count
	Bricks   []brickView
}

// volumeView is a volume with its brick runtime state merged in.
type volumeView struct {
	Name    string
	Started bool
	Subvols []subvolView
}

// buildVolumeView merges a volume with its bricks status and heal-info
// (either may be nil: a stopped volume has neither).
func buildVolumeView(v gd2.Volume, status []gd2.BrickStatus, heal []gd2.BrickHealInfo) volumeView {
	type key struct{ peer, path string }
	online := map[key]gd2.BrickStatus{}
	for _, s := range status {
		online[key{s.Info.PeerID, s.Info.Path}] = s
	}
	pending := map[key]gd2.BrickHealInfo{}
	for _, h := range heal {
		// name is host:/path; host-id is the peer (or "-" when unreachable).
		path := h.Name
		for i := 0; i < len(h.Name); i++ {
			if h.Name[i] == ':' {
				path = h.Name[i+1:]
				break
			}
		}
		pending[key{h.HostID, path}] = h
	}
	vv := volumeView{Name: v.Name, Started: v.State == gd2.VolumeStarted}
	for _, sv := range v.Subvols {
		s := subvolView{
			Volume: v.Name, Name: sv.Name,
			Replica:  sv.Type == gd2.SubvolReplicate || sv.Type == gd2.SubvolDisperse,
			Disperse: sv.Type == gd2.SubvolDisperse, Data: sv.DisperseDataCount,
		}
		for _, b := range sv.Bricks {
			k := key{b.PeerID, b.Path}
			st := online[k]
			bv := brickView{
				Volume: v.Name, Subvol: sv.Name, Path: b.Path, PeerID: b.PeerID,
				Arbiter: b.Type == gd2.BrickTypeArbiter, Online: vv.Started && st.Online,
				Pending: -1, Size: st.Size.Capacity,
			}
			if h, ok := pending[k]; ok && !h.BrickDown() {
				bv.Pending = counter(h.EntriesInHealPending, h.TotalEntries, h.Entries)
				bv.SplitBrain = max(counter(h.EntriesInSplitBrain), 0)
			} else if !s.Replica && bv.Online {
				bv.Pending = 0
			}
			s.Bricks = append(s.Bricks, bv)
		}
		vv.Subvols = append(vv.Subvols, s)
	}
	return vv
}

// counter returns the first present counter, or -1.
func counter(cs ...*int64) int64 {
	for _, c := range cs {
		if c != nil {
			return *c
		}
	}
	return -1
}

// healedCopies returns the bricks of s that hold a complete copy, excluding
// bricks on peer exclude.
func (s subvolView) healedCopies(exclude string) []brickView {
	if s.splitBrain() > 0 {
		return nil
	}
	var maxPending int64 = -1
	for _, b := range s.Bricks {
		if b.Online && b.Pending > maxPending {
			maxPending = b.Pending
		}
	}
	var out []brickView
	for _, b := range s.Bricks {
		if b.PeerID == exclude || !b.Online || b.Arbiter || b.Pending < 0 {
			continue
		}
		if b.Pending == maxPending {
			out = append(out, b)
		}
	}
	return out
}

func (s subvolView) pending() int64 {
	var n int64
	for _, b := range s.Bricks {
		n += max(b.Pending, 0)
	}
	return n
}

func (s subvolView) splitBrain() int64 {
	var n int64
	for _, b := range s.Bricks {
		n += b.SplitBrain
	}
	return n
}

// healthy: every brick online and nothing pending.
func (s subvolView) healthy() bool {
	for _, b := range s.Bricks {
		if !b.Online || b.Pending != 0 {
			return false
		}
	}
	return s.splitBrain() == 0
}

// quorumWithout reports whether s keeps client quorum when the bricks on
// peer stop: more than half up (or exactly half including the first brick)
// for replicate, the data count for disperse, every brick for distribute.
func (s subvolView) quorumWithout(peer string) bool {
	up := 0
	for _, b := range s.Bricks {
		if b.Online && b.PeerID != peer {
			up++
		}
	}
	n := len(s.Bricks)
	switch {
	case s.Disperse:
		return up >= max(s.Data, 1)
	case s.Replica:
		first := n > 0 && s.Bricks[0].Online && s.Bricks[0].PeerID != peer
		return 2*up > n || (2*up == n && first)
	}
	return up == n
}

// PeerBricks is the analysis of one peer's bricks across all volumes.
type PeerBricks struct {
	OnPeer, Offline, SoleHealedCopies, QuorumAtRisk int
	// PendingHealEntries and SplitBrainEntries sum over the replica sets
	// that include a brick of the peer.
	PendingHealEntries, SplitBrainEntries int64
	// Movable are the peer's bricks that may be moved now (another healed
	// copy exists), in a stable order.
	Movable []brickView
	// Unhealed counts the refs (moved bricks) whose replica set is not yet
	// healthy again.
	Unhealed int
}

// analyzePeer computes PeerBricks for peer over vols; moved are bricks this
// node's drain already moved, to be watched until healed.
func analyzePeer(peer string, vols []volumeView, moved []BrickRef) PeerBricks {
	var out PeerBricks
	movedSet := map[BrickRef]bool{}
	for _, m := range moved {
		movedSet[m] = true
	}
	for _, v := range vols {
		for _, s := range v.Subvols {
			mine := 0
			for _, b := range s.Bricks {
				if movedSet[BrickRef{v.Name, b.Path}] && b.PeerID != peer && !s.healthy() {
					out.Unhealed++
				}
				if b.PeerID != peer {
					continue
				}
				mine++
				out.OnPeer++
				if !b.Online {
					out.Offline++
				}
			}
			if mine == 0 {
				continue
			}
			out.PendingHealEntries += s.pending()
			out.SplitBrainEntries += s.splitBrain()
			if !v.Started {
				// A stopped volume serves no data; its bricks can move
				// only when it starts again (replace-brick needs it).
				continue
			}
			healedElsewhere := len(s.healedCopies(peer)) > 0
			quorum := s.quorumWithout(peer)
			for _, b := range s.Bricks {
				if b.PeerID != peer {
					continue
				}
				if s.Replica && !healedElsewhere {
					out.SoleHealedCopies++
				}
				if b.Online && !quorum {
					out.QuorumAtRisk++
				}
				if s.Replica && healedElsewhere {
					out.Movable = append(out.Movable, b)
				}
			}
		}
	}
	slices.SortFunc(out.Movable, func(a, b brickView) int {
		return cmp.Or(cmp.Compare(a.Volume, b.Volume), cmp.Compare(a.Path, b.Path))
	})
	return out
}

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
//     GD2Ops.ReplaceBrick); zones are compared by where a peer really is
//     (PeerMetaZone), never by that draining zone.
//   - GD2 names a replacement 0-based (brick_<vol>_s<i>_b<j>) while its
//     create planner names 1-based, and a replacement whose name exists in
//     the target's volume group truncates that live brick. Peers that may
//     hold an LV of that name are never offered (clash).

// movePlan is where one brick may go: the peers to offer GD2 (limit-peers),
// and whether they are in the source's own zone.
type movePlan struct {
	Targets  []string
	SameZone bool
}

// moveBlock says why a brick cannot move now. NodeDown: because a node of
// its volume is down (GD2's liveness gate), which ends when it is back.
type moveBlock struct {
	NodeDown bool
	Reason   string
}

// physicalZone is the zone a peer is really in: a peer a drain moved to its
// draining zone still sits in the zone recorded under PeerMetaZone.
func physicalZone(p gd2.Peer) string {
	if orig := p.Metadata[PeerMetaZone]; orig != "" && p.Zone() == transitions.DrainingZone(orig) {
		return orig
	}
	return p.Zone()
}

// peerLabel names a peer for a person: its GlusterNode, else its name.
func peerLabel(p gd2.Peer) string {
	if n := p.Metadata[transitions.MetaNode]; n != "" {
		return fmt.Sprintf("%s (peer %s)", n, p.ID)
	}
	if p.Name != "" {
		return fmt.Sprintf("%s (peer %s)", p.Name, p.ID)
	}
	return "peer " + p.ID
}

// replacementRoom is the free space a device needs for a replacement of a
// brick of size: GD2 sizes it from the source's capacity, plus the thin
// pool's metadata (about 0.5 %).
func replacementRoom(size uint64) uint64 { return size + size/100 }

// planMove plans the move of brick b of vol off peer src. clash are peers
// that may hold an LV with the replacement's name, refused are peers a
// replace-brick of this brick already failed on; neither is offered.
func planMove(b brickView, vol volumeView, src string, peers []gd2.Peer, devices []gd2.Device, exclude, clash, refused map[string]bool) (movePlan, *moveBlock) {
	byID := map[string]gd2.Peer{}
	for _, p := range peers {
		byID[p.ID] = p
	}
	// The v1 liveness gate: every node of the volume, the source included.
	var down []string
	seen := map[string]bool{}
	for _, sv := range vol.Subvols {
		for _, o := range sv.Bricks {
			if seen[o.PeerID] {
				continue
			}
			seen[o.PeerID] = true
			if p, ok := byID[o.PeerID]; !ok || !p.Online {
				label := "peer " + o.PeerID
				if ok {
					label = peerLabel(p)
				}
				down = append(down, label)
			}
		}
	}
	if len(down) > 0 {
		sort.Strings(down)
		return movePlan{}, &moveBlock{NodeDown: true, Reason: fmt.Sprintf(
			"GD2 moves no brick of volume %s while a node holding one of its bricks is down: %s", vol.Name, strings.Join(down, ", "))}
	}
	var set *subvolView
	for i := range vol.Subvols {
		if vol.Subvols[i].Name == b.Subvol {
			set = &vol.Subvols[i]
		}
	}
	if set == nil {
		return movePlan{}, &moveBlock{Reason: fmt.Sprintf("brick %s is in no subvolume of volume %s", b.Path, vol.Name)}
	}
	zoneOf := func(id string) string {
		if p, ok := byID[id]; ok {
			return physicalZone(p)
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
	room := replacementRoom(b.Size)
	fits := map[string]bool{}
	for _, d := range devices {
		if d.State == gd2.DeviceEnabled && d.FreeSize >= room {
			fits[d.PeerID] = true
		}
	}
	srcZone := zoneOf(src)
	var own, keepLayout, anySafe []string
	for _, p := range peers {
		if p.ID == src || !p.Online || exclude[p.ID] || clash[p.ID] || refused[p.ID] || !fits[p.ID] {
			continue
		}
		z := physicalZone(p)
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
		return movePlan{Targets: own, SameZone: true}, nil
	case len(keepLayout) > 0:
		return movePlan{Targets: keepLayout}, nil
	case len(own) > 0:
		return movePlan{Targets: own, SameZone: true}, nil
	case len(anySafe) > 0:
		return movePlan{Targets: anySafe}, nil
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
	return movePlan{}, &moveBlock{Reason: why + fmt.Sprintf(" for brick %s of volume %s", b.Path, vol.Name)}
}

// clashPeers are the peers whose volume groups may already hold an LV
// named like the replacement of brick path in vol: the peer holding the
// brick the create planner named so (1-based: subvolume i-1, brick j-1),
// and the peers that held either of the two positions before a move
// (formerHolders: GD2 leaves a replaced brick's LV on its old node).
func clashPeers(vol volumeView, path string, formerHolders map[BrickRef][]string) map[string]bool {
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
