package states

import (
	"cmp"
	"slices"
)

// The brick facts are what the node gatherer learns from GD2's volume,
// brick-status and heal-info answers, reduced to what the data-safety rules
// read. The rules themselves (which copy is healed, which brick may move,
// where it may go) are pure functions here and in brick_placement.go, so
// that each is table- and property-tested on its own; docs/design/
// heal-safety.md and docs/design/failure-recovery.md explain them.
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

// BrickFacts is one brick with what GD2 said about it.
type BrickFacts struct {
	Path, PeerID string
	Arbiter      bool
	// Online: the volume is started and the brick process is up.
	Online bool
	// Pending is heal-info's pending count; -1 when the brick is down or
	// heal-info did not list it (0 for an online brick of a set without
	// copies, which heal-info does not cover).
	Pending    int64
	SplitBrain int64
	// Size is the brick's capacity in bytes.
	Size uint64
	// Used is the bytes its file system uses (bricks-status: statfs
	// capacity less free), what shows whether a replacement holds the
	// set's data (ReplacementHoldsData).
	Used uint64
	// Replacement: a drain moved a brick here (a node's
	// status.movedBricks names it) and the brick is judged by
	// SubvolFacts.Filling until its data is shown to be there.
	Replacement bool
	// HealDelivered: GD2 accepted anthill's heal of this replacement
	// (the healReplacement step) after the move.
	HealDelivered bool
}

// SubvolFacts is one replica set (or distribute leg) of a volume.
type SubvolFacts struct {
	Name string
	// Replica: replicate or disperse, so other bricks hold copies.
	Replica  bool
	Disperse bool
	// Data is the disperse data count.
	Data   int
	Bricks []BrickFacts
}

// VolumeFacts is a volume with its brick runtime state merged in.
type VolumeFacts struct {
	Name    string
	Started bool
	Subvols []SubvolFacts
}

// VolumeBrick is a brick together with the volume and subvolume it
// belongs to: what AnalyzePeer offers to move and PlanMove places.
type VolumeBrick struct {
	Volume, Subvol string
	BrickFacts
}

// healedCopies returns the bricks of s that hold a complete copy, excluding
// bricks on peer exclude.
func (s SubvolFacts) healedCopies(exclude string) []BrickFacts {
	if s.splitBrain() > 0 {
		return nil
	}
	var maxPending int64 = -1
	for _, b := range s.Bricks {
		if b.Online && b.Pending > maxPending {
			maxPending = b.Pending
		}
	}
	var out []BrickFacts
	for _, b := range s.Bricks {
		if b.PeerID == exclude || !b.Online || b.Arbiter || b.Pending < 0 || s.Filling(b) {
			// A replacement still filling reports as little pending as
			// its siblings (GD2 never marks it a heal sink) and holds
			// nothing it was not written since the move.
			continue
		}
		if b.Pending == maxPending {
			out = append(out, b)
		}
	}
	return out
}

func (s SubvolFacts) pending() int64 {
	var n int64
	for _, b := range s.Bricks {
		n += max(b.Pending, 0)
	}
	return n
}

func (s SubvolFacts) splitBrain() int64 {
	var n int64
	for _, b := range s.Bricks {
		n += b.SplitBrain
	}
	return n
}

// Healed is the one rule behind every "healed" decision (the heal
// machine's, a node's HealWait, a drain's moved bricks): nothing pending,
// nothing in split-brain, and no brick of the replica set unreachable.
// The counts come only from reachable bricks, so a brick heal-info cannot
// reach (-1, as a restarted brick is until its clients reconnect) hides
// whatever it lacks: while one is unreachable the set is never healed,
// however clean the counts look.
func Healed(pending, splitBrain int64, unreachable int) bool {
	return unreachable == 0 && pending == 0 && splitBrain == 0
}

// unreachable counts the bricks of s that are offline or that heal-info
// did not reach.
func (s SubvolFacts) unreachable() int {
	n := 0
	for _, b := range s.Bricks {
		if !b.Online || b.Pending < 0 {
			n++
		}
	}
	return n
}

// Healthy reports whether the set is healed (Healed): every brick online
// and reachable with nothing pending and nothing in split-brain, and no
// replacement still filling (Filling): heal-info reads zero while one is
// empty.
func (s SubvolFacts) Healthy() bool {
	return Healed(s.pending(), s.splitBrain(), s.unreachable()) && s.filling() == 0
}

// Healthy reports whether the volume is started and every one of its
// subvolumes is healed (SubvolFacts.Healthy): what a live read must show
// before it may stand in for a heal machine's Healthy record.
func (v VolumeFacts) Healthy() bool {
	if !v.Started || len(v.Subvols) == 0 {
		return false
	}
	for _, sv := range v.Subvols {
		if !sv.Healthy() {
			return false
		}
	}
	return true
}

// quorumWithout reports whether s keeps client quorum when the bricks on
// peer stop: more than half up (or exactly half including the first brick)
// for replicate, the data count for disperse, every brick for distribute.
func (s SubvolFacts) quorumWithout(peer string) bool {
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
	// Unreachable counts the bricks of those replica sets (of started
	// volumes) that are offline or that heal-info could not reach, the
	// peer's own included: while any is, the sets are not healed (Healed).
	Unreachable int
	// Movable are the peer's bricks that may be moved now (another healed
	// copy exists, and stopping the brick keeps its replica set's quorum),
	// ordered by volume and path.
	Movable []VolumeBrick
	// Unhealed counts the refs (moved bricks) whose replica set is not yet
	// healthy again.
	Unhealed int
	// Filling counts the refs whose replacement is still filling
	// (SubvolFacts.Filling): part of Unhealed, whatever heal-info says.
	Filling int
}

// AnalyzePeer computes PeerBricks for peer over vols; moved are bricks this
// node's drain already moved, to be watched until healed.
//
// A brick is movable only when its volume is started, its set holds copies
// (replicate or disperse), and another peer holds a healed copy of the set;
// otherwise it counts as a sole healed copy. A brick whose stop would take
// its set below client quorum counts as at risk and is not movable; the
// count is node-wide (what stopping the whole node would do), the rule for
// moving is per replica set.
func AnalyzePeer(peer string, vols []VolumeFacts, moved []BrickRef) PeerBricks {
	var out PeerBricks
	movedSet := map[BrickRef]bool{}
	for _, m := range moved {
		movedSet[m] = true
	}
	for _, v := range vols {
		for _, s := range v.Subvols {
			mine := 0
			for _, b := range s.Bricks {
				if movedSet[BrickRef{v.Name, b.Path}] && b.PeerID != peer && !s.Healthy() {
					out.Unhealed++
					if s.Filling(b) {
						out.Filling++
					}
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
			if v.Started && s.Replica {
				out.Unreachable += s.unreachable()
			}
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
				atRisk := b.Online && !quorum
				if atRisk {
					out.QuorumAtRisk++
				}
				// Quorum is per replica set: a brick whose stop would drop
				// its own set below quorum stays, the node's other bricks
				// may still move.
				if s.Replica && healedElsewhere && !atRisk {
					out.Movable = append(out.Movable, VolumeBrick{Volume: v.Name, Subvol: s.Name, BrickFacts: b})
				}
			}
		}
	}
	slices.SortFunc(out.Movable, func(a, b VolumeBrick) int {
		return cmp.Or(cmp.Compare(a.Volume, b.Volume), cmp.Compare(a.Path, b.Path))
	})
	return out
}
