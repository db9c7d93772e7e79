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
// statfs of the brick: capacity less free blocks). A replacement holds the
// set's data when it uses as much as the fullest copy it replaces data
// from, less a small slack for what two XFS file systems of nearly the
// same size use of their own. A replacement of a replica set counts as
// healed only when all of these hold:
//
//   - anthill's heal of it (the healReplacement step: the self-heal
//     daemon option set on again, data, metadata and entry self-heal on, a
//     full heal) was accepted by GD2 after the move (HealDelivered);
//   - it uses at least the fullest other online copy's bytes less
//     ReplacementSlack (ReplacementHoldsData);
//   - the set is healed by heal-info's rule (Healed): nothing pending,
//     nothing in split-brain, every brick reachable.
//
// Until then the replacement is a brick that is filling: it is no healed
// copy, and its set is not healthy.

// ReplacementSlack is how many bytes a healed replacement may use less
// than the fullest copy of its set. GD2 makes a replacement from the
// source's statfs capacity, which lacks the XFS log, so the new file
// system is a log smaller and reserves a little less (5 % of its blocks
// up to 8192): an empty one uses some hundred KiB less than an empty
// source did. Measured on real GD2 (e2e/realgd2), healed replacements
// differed from their siblings by at most a few hundred KiB either way.
const ReplacementSlack = 1 << 20

// ReplacementHealRetry is how long after anthill last made GD2 heal a
// replacement it does so again while the replacement is still short of
// data and nothing is pending: on real GD2 the first full heal after the
// options are set sometimes moves nothing (3 runs of 10), and one sent
// again a few seconds later does.
const ReplacementHealRetry = 10 * time.Second

// ReplacementHoldsData reports whether a replacement using used bytes
// holds what its set's other copies hold: it uses at least the fullest of
// them (siblings, the online data bricks of the set that are no
// replacement themselves) less ReplacementSlack. With no such copy there
// is nothing to compare with, and nothing proves the data is there.
func ReplacementHoldsData(used uint64, siblings []uint64) bool {
	if len(siblings) == 0 {
		return false
	}
	return used+ReplacementSlack >= slices.Max(siblings)
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
	return !ReplacementHoldsData(b.Used, s.copiesUsed(b))
}

// copiesUsed are the bytes used by the online data bricks of s other than
// b that are no replacement still to be proven.
func (s SubvolFacts) copiesUsed(b BrickFacts) []uint64 {
	var out []uint64
	for _, o := range s.Bricks {
		if o.Path == b.Path && o.PeerID == b.PeerID {
			continue
		}
		if o.Online && !o.Arbiter && !o.Replacement {
			out = append(out, o.Used)
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
