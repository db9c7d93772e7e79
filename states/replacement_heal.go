package states

import (
	"slices"
	"time"
)

// A replacement brick is not healed because heal-info reads zero.
//
// Real GD2 (the 2019 release anthill drives) answers a replace-brick with
// a new, empty brick and then reports nothing pending on any brick of the
// set: it never marks the new brick as a heal sink, it does not give the
// self-heal daemons a volfile naming the new brick, and the daemons'
// volfile leaves data, metadata and entry self-heal off
// (docs/design/heal-safety.md, "A replacement is healed only when its data
// is there"). Heal-info therefore cannot tell an empty replacement from a
// healed one, and the rules here do not ask it alone.
//
// What GD2 does show is each brick's file system usage (bricks-status,
// statfs of the brick: capacity less free blocks). Of it, an empty XFS
// already uses a share that grows with its size (XFSFreshUsed), and a
// replacement's file system is smaller than its siblings': GD2 makes it
// as large as the source's statfs capacity, which lacks the log (64 MiB
// with the xfsprogs 6.1 here). On real GD2 an empty replacement of 384 MiB
// used 25.6 MiB beside siblings of 448 MiB, and once it held every file
// byte for byte it used 4.6 MiB less than they did. The data a brick holds
// is therefore its used bytes less XFSFreshUsed of its capacity
// (DataUsed), and a replacement holds its set's data when it holds as
// much as the fullest copy it is compared with, less a slack
// (ReplacementSlack) for what two copies of the same files take apart (XFS
// keeps blocks past the end of a file written a moment ago and gives them
// back later: real siblings used up to 1.1 MiB more for a while). A
// replacement of a replica set counts as healed only when all of these
// hold:
//
//   - anthill's heal of it (the healReplacement step: the self-heal
//     daemon option set on again, data, metadata and entry self-heal on, a
//     full heal) was accepted by GD2 after the move (HealDelivered);
//   - it holds at least the fullest other online copy's data less
//     ReplacementSlack (ReplacementHoldsData);
//   - the set is healed by heal-info's rule (Healed): nothing pending,
//     nothing in split-brain, every brick reachable.
//
// Until then the replacement is a brick that is filling: it is no healed
// copy, and its set is not healthy. The size rule cannot see data missing
// in less than the slack; what stands behind it there is the full heal
// GD2 accepted and heal-info's rule.

// XFSFreshUsed is what an empty XFS whose statfs capacity is capacity
// already uses of it: the reserved block pool, 5 % of its blocks up to
// 8192 blocks of 4 KiB, and the per-allocation-group reservations of its
// btrees, about 1/60 of it (mkfs.xfs of xfsprogs 6.1 with GD2's options:
// an empty 384 MiB brick used 25.56 MiB). The estimate errs by a share of
// the difference between two bricks' capacities, not of their size: a
// replacement and its siblings differ by about a log.
func XFSFreshUsed(capacity uint64) uint64 {
	return min(capacity/20, 8192*4096) + capacity/60
}

// DataUsed is the bytes of data b holds: what it uses less XFSFreshUsed.
func (b BrickFacts) DataUsed() uint64 {
	return b.Used - min(b.Used, XFSFreshUsed(b.Size))
}

// ReplacementSlack is how much less data than the fullest copy of its set
// a healed replacement may hold: 1 MiB and 1/32 of that copy's data.
func ReplacementSlack(fullest uint64) uint64 {
	return 1<<20 + fullest/32
}

// ReplacementHealRetry is how long after anthill last made GD2 heal a
// replacement it does so again while the replacement is still short of
// data and nothing is pending: on real GD2 the first full heal after the
// options are set sometimes moves nothing (3 runs of 10), and one sent
// again a few seconds later does.
const ReplacementHealRetry = 10 * time.Second

// ReplacementHoldsData reports whether a replacement holding data bytes
// (DataUsed) holds what its set's other copies hold: at least the fullest
// of them (siblings, the DataUsed of the online data bricks of the set
// that are no replacement themselves) less ReplacementSlack. With no such
// copy there is nothing to compare with, and nothing proves the data is
// there.
func ReplacementHoldsData(data uint64, siblings []uint64) bool {
	if len(siblings) == 0 {
		return false
	}
	fullest := slices.Max(siblings)
	return data+ReplacementSlack(fullest) >= fullest
}

// Filling reports whether b, a brick of s, is a replacement whose data is
// not shown to be there (see the rules above). Only replica sets are
// judged by size: a disperse brick holds a fragment whose size GD2 was not
// measured to report alike, and keeps heal-info's rule alone.
func (s SubvolFacts) Filling(b BrickFacts) bool {
	if !b.Replacement || !s.Replica {
		return false
	}
	if !b.HealDelivered {
		return true
	}
	if b.Arbiter || s.Disperse {
		// An arbiter holds names and metadata only, a disperse brick a
		// fragment: no copy to compare sizes with.
		return false
	}
	return !ReplacementHoldsData(b.DataUsed(), s.copiesData(b))
}

// copiesData are the DataUsed of the online data bricks of s other than b
// that are no replacement themselves.
func (s SubvolFacts) copiesData(b BrickFacts) []uint64 {
	var out []uint64
	for _, o := range s.Bricks {
		if o.Path == b.Path && o.PeerID == b.PeerID {
			continue
		}
		if o.Online && !o.Arbiter && !o.Replacement {
			out = append(out, o.DataUsed())
		}
	}
	return out
}

// filling counts the bricks of s that are filling.
func (s SubvolFacts) filling() int {
	n := 0
	for _, b := range s.Bricks {
		if s.Filling(b) {
			n++
		}
	}
	return n
}

// ReplacementHeal is when anthill last made GD2 heal the replacement of a
// moved brick (status.replacementHeals).
type ReplacementHeal struct {
	Brick BrickRef
	At    time.Time
}

// MarkReplacements flags, in vols, the bricks that replaced moved ones
// (Replacement) and those whose heal GD2 accepted after the move
// (HealDelivered, from heals). A moved brick still on the node that
// moves it is no replacement yet.
func MarkReplacements(vols []VolumeFacts, movedBy map[BrickRef]string, heals []ReplacementHeal) []VolumeFacts {
	delivered := map[BrickRef]bool{}
	for _, h := range heals {
		delivered[h.Brick] = true
	}
	out := slices.Clone(vols)
	for i, v := range out {
		v.Subvols = slices.Clone(v.Subvols)
		for j, s := range v.Subvols {
			s.Bricks = slices.Clone(s.Bricks)
			for k, b := range s.Bricks {
				ref := BrickRef{Volume: v.Name, Path: b.Path}
				if from, ok := movedBy[ref]; ok && from != b.PeerID {
					s.Bricks[k].Replacement = true
					s.Bricks[k].HealDelivered = delivered[ref]
				}
			}
			v.Subvols[j] = s
		}
		out[i] = v
	}
	return out
}

// ReplacementHealDue returns the moved bricks whose replacement anthill
// should make GD2 heal now, in the order of moved: a filling replacement
// whose heal GD2 has not accepted since the move, or whose heal was
// accepted at least ReplacementHealRetry ago while its set shows nothing
// pending (no heal visibly running) and it is still short of data. A set
// with a brick unreachable or in split-brain is left alone: GD2's heal
// trigger is refused while a brick's node is down, and split-brain needs
// the admin first.
func ReplacementHealDue(vols []VolumeFacts, moved []BrickRef, heals []ReplacementHeal, now time.Time) []BrickRef {
	last := map[BrickRef]time.Time{}
	for _, h := range heals {
		if h.At.After(last[h.Brick]) {
			last[h.Brick] = h.At
		}
	}
	var out []BrickRef
	for _, ref := range moved {
		s, b, ok := findBrick(vols, ref)
		if !ok || !s.Filling(b) || s.unreachable() > 0 || s.splitBrain() > 0 {
			continue
		}
		at, delivered := last[ref]
		if !delivered || (s.pending() == 0 && now.Sub(at) >= ReplacementHealRetry) {
			out = append(out, ref)
		}
	}
	return out
}

// findBrick finds the brick ref names in vols and its replica set.
func findBrick(vols []VolumeFacts, ref BrickRef) (SubvolFacts, BrickFacts, bool) {
	for _, v := range vols {
		if v.Name != ref.Volume {
			continue
		}
		for _, s := range v.Subvols {
			for _, b := range s.Bricks {
				if b.Path == ref.Path {
					return s, b, true
				}
			}
		}
	}
	return SubvolFacts{}, BrickFacts{}, false
}
