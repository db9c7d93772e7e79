package kube

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/gluster/anthill/gd2"
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

// placement says whether a brick of size could be placed off peer by
// replace-brick: an enabled device with room on another alive peer whose
// zone holds no other brick of the volume. It returns the zones to try
// (the node's own zone first when possible) or a reason it cannot.
func placement(b brickView, vol volumeView, peer string, peers []gd2.Peer, devices []gd2.Device, ownZone string, excludePeers map[string]bool) (zones []string, reason string) {
	used := map[string]bool{}
	zoneOf := map[string]string{}
	alive := map[string]bool{}
	for _, p := range peers {
		zoneOf[p.ID] = p.Zone()
		alive[p.ID] = p.Online
	}
	for _, s := range vol.Subvols {
		for _, o := range s.Bricks {
			if o.PeerID != peer {
				used[zoneOf[o.PeerID]] = true
			}
		}
	}
	candidates := map[string]bool{}
	for _, d := range devices {
		if d.PeerID == peer || excludePeers[d.PeerID] || !alive[d.PeerID] || d.State != gd2.DeviceEnabled {
			continue
		}
		if b.Size > 0 && d.FreeSize < b.Size {
			continue
		}
		z := zoneOf[d.PeerID]
		if !used[z] {
			candidates[z] = true
		}
	}
	if len(candidates) == 0 {
		zs := make([]string, 0, len(used))
		for z := range used {
			zs = append(zs, z)
		}
		sort.Strings(zs)
		return nil, fmt.Sprintf("no enabled device with %d bytes free on an alive peer outside zones %v used by volume %s", b.Size, zs, vol.Name)
	}
	if candidates[ownZone] {
		return []string{ownZone}, ""
	}
	for z := range candidates {
		zones = append(zones, z)
	}
	sort.Strings(zones)
	return zones, ""
}
