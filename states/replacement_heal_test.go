package states

import (
	"slices"
	"testing"
	"time"
)

const mib = 1 << 20

// movedSet is a started replica-3 volume whose brick /b/a was moved from
// peer a to peer d: d holds the replacement, b and c the other copies,
// each with the used bytes and heal-info pending given.
func movedSet(used [3]uint64, pending [3]int64) VolumeFacts {
	s := SubvolFacts{Name: "vol-replicate-0", Replica: true}
	for i, p := range []string{"d", "b", "c"} {
		path := "/b/" + p
		if p == "d" {
			path = "/b/a"
		}
		s.Bricks = append(s.Bricks, BrickFacts{Path: path, PeerID: p, Online: true, Pending: pending[i], Size: 500 * mib, Used: used[i]})
	}
	return VolumeFacts{Name: "vol", Started: true, Subvols: []SubvolFacts{s}}
}

// TestAReplacementIsHealedOnlyOnTheEvidenceRealGD2Gives is the drain's
// "replacement healed" decision over what real GD2 reports right after a
// replace-brick and while the replacement fills: heal-info reads 0 on
// every brick throughout, so the decision rests on whether anthill's heal
// reached GD2 after the move and on the bytes each brick uses.
func TestAReplacementIsHealedOnlyOnTheEvidenceRealGD2Gives(t *testing.T) {
	moved := []BrickRef{{Volume: "vol", Path: "/b/a"}}
	movedBy := map[BrickRef]string{moved[0]: "a"}
	healed := []ReplacementHeal{{Brick: moved[0], At: time.Unix(100, 0)}}
	cases := []struct {
		name         string
		used         [3]uint64
		pending      [3]int64
		heals        []ReplacementHeal
		wantHealing  int
		wantFilling  int
		wantHealedAt []string // peers of the set's healed copies seen from peer a
	}{
		{"right after the replace heal-info reads 0 and the new brick is empty: healing",
			[3]uint64{30 * mib, 54 * mib, 54 * mib}, [3]int64{0, 0, 0}, nil, 1, 1, []string{"b", "c"}},
		{"the new brick as full as its siblings but anthill's heal never reached GD2: healing (a write since the move can fill it as much)",
			[3]uint64{54 * mib, 54 * mib, 54 * mib}, [3]int64{0, 0, 0}, nil, 1, 1, []string{"b", "c"}},
		{"heal delivered, the new brick still short of the fullest copy by more than the slack: healing",
			[3]uint64{52 * mib, 54 * mib, 54 * mib}, [3]int64{0, 0, 0}, healed, 1, 1, []string{"b", "c"}},
		{"heal delivered, the new brick short of one copy only, which is fuller than the other: healing (the fullest copy counts)",
			[3]uint64{50 * mib, 50 * mib, 54 * mib}, [3]int64{0, 0, 0}, healed, 1, 1, []string{"b", "c"}},
		{"heal delivered and the new brick as full as its siblings, entries still pending: healing, and no longer filling",
			[3]uint64{54 * mib, 54 * mib, 54 * mib}, [3]int64{0, 3, 3}, healed, 1, 0, []string{"b", "c"}},
		{"heal delivered, the new brick within the slack of its siblings, nothing pending, every brick reachable: healed",
			[3]uint64{54*mib - 300<<10, 54 * mib, 54 * mib}, [3]int64{0, 0, 0}, healed, 0, 0, []string{"b", "c", "d"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			vols := MarkReplacements([]VolumeFacts{movedSet(tc.used, tc.pending)}, movedBy, tc.heals)
			got := AnalyzePeer("a", vols, moved)
			if got.Unhealed != tc.wantHealing || got.Filling != tc.wantFilling {
				t.Fatalf("healing %d, filling %d; want %d, %d", got.Unhealed, got.Filling, tc.wantHealing, tc.wantFilling)
			}
			var copies []string
			for _, b := range vols[0].Subvols[0].healedCopies("a") {
				copies = append(copies, b.PeerID)
			}
			slices.Sort(copies)
			if !slices.Equal(copies, tc.wantHealedAt) {
				t.Fatalf("healed copies on %v, want %v", copies, tc.wantHealedAt)
			}
		})
	}
}

// TestAnEmptyReplacementIsNoHealedCopyForAnotherNode: a node whose brick
// shares the set with a replacement still filling sees one healed copy
// less; with the replacement the only other copy it may not move.
func TestAnEmptyReplacementIsNoHealedCopyForAnotherNode(t *testing.T) {
	v := movedSet([3]uint64{30 * mib, 54 * mib, 54 * mib}, [3]int64{0, 0, 0})
	v.Subvols[0].Bricks[2].Online, v.Subvols[0].Bricks[2].Pending = false, -1 // c down
	movedBy := map[BrickRef]string{{Volume: "vol", Path: "/b/a"}: "a"}
	got := AnalyzePeer("b", MarkReplacements([]VolumeFacts{v}, movedBy, nil), nil)
	if got.SoleHealedCopies != 1 || len(got.Movable) != 0 {
		t.Fatalf("sole healed copies %d, movable %d; want b's brick the sole healed copy, not movable", got.SoleHealedCopies, len(got.Movable))
	}
	if v.Subvols[0].Bricks[0].Replacement {
		t.Fatal("MarkReplacements changed the facts it was given")
	}
}

func TestMarkReplacementsLeavesABrickNotYetMoved(t *testing.T) {
	v := movedSet([3]uint64{54 * mib, 54 * mib, 54 * mib}, [3]int64{0, 0, 0})
	got := MarkReplacements([]VolumeFacts{v}, map[BrickRef]string{{Volume: "vol", Path: "/b/a"}: "d"}, nil)
	if got[0].Subvols[0].Bricks[0].Replacement {
		t.Fatal("a brick still on the peer that moves it was marked a replacement")
	}
}

func TestReplacementHoldsData(t *testing.T) {
	cases := []struct {
		name     string
		data     uint64
		siblings []uint64
		want     bool
	}{
		{"no other copy to compare with proves nothing", 50 * mib, nil, false},
		{"as full as the fullest copy", 50 * mib, []uint64{40 * mib, 50 * mib}, true},
		{"within the slack below the fullest copy", 64*mib - ReplacementSlack(64*mib), []uint64{64 * mib}, true},
		{"a byte beyond the slack below it", 64*mib - ReplacementSlack(64*mib) - 1, []uint64{64 * mib}, false},
		{"an empty replacement beside copies holding a little", 0, []uint64{2 * mib}, false},
		{"fuller than every copy (written since)", 60 * mib, []uint64{50 * mib}, true},
	}
	for _, tc := range cases {
		if got := ReplacementHoldsData(tc.data, tc.siblings); got != tc.want {
			t.Errorf("%s: got %t, want %t", tc.name, got, tc.want)
		}
	}
}

// TestDataUsedDiscountsWhatAnEmptyXFSUses: the readings of a real run
// (e2e/realgd2): an empty replacement of 384 MiB used 25.56 MiB; once
// healed, every file on it byte-identical, it used 48.33 MiB and its
// 448 MiB siblings 52.91 MiB; before the heal, holding only the files
// written since the move, 31.54 MiB.
func TestDataUsedDiscountsWhatAnEmptyXFSUses(t *testing.T) {
	empty := BrickFacts{Size: 384 * mib, Used: 25*mib + 573<<10}
	if d := empty.DataUsed(); d > 256<<10 {
		t.Fatalf("an empty 384 MiB XFS holds %d bytes of data", d)
	}
	sibling := BrickFacts{Size: 448 * mib, Used: 52*mib + 932<<10}
	healed := BrickFacts{Size: 384 * mib, Used: 48*mib + 338<<10}
	if !ReplacementHoldsData(healed.DataUsed(), []uint64{sibling.DataUsed()}) {
		t.Fatalf("the healed replacement (data %d) does not hold its sibling's (%d)", healed.DataUsed(), sibling.DataUsed())
	}
	if d, s := healed.DataUsed(), sibling.DataUsed(); s-d > 512<<10 {
		t.Fatalf("the healed replacement holds %d bytes of data, its sibling %d: more apart than the real files were", d, s)
	}
	since := BrickFacts{Size: 384 * mib, Used: 31*mib + 553<<10}
	if ReplacementHoldsData(since.DataUsed(), []uint64{sibling.DataUsed()}) {
		t.Fatal("a replacement holding only the files written since the move holds its sibling's data")
	}
	if XFSFreshUsed(60<<30) != 32*mib+(60<<30)/60 {
		t.Fatalf("the reserve of a 60 GiB XFS is not the 8192-block cap")
	}
}

func TestReplacementHealDue(t *testing.T) {
	ref := BrickRef{Volume: "vol", Path: "/b/a"}
	movedBy := map[BrickRef]string{ref: "a"}
	now := time.Unix(1000, 0)
	empty := [3]uint64{30 * mib, 54 * mib, 54 * mib}
	full := [3]uint64{54 * mib, 54 * mib, 54 * mib}
	cases := []struct {
		name    string
		used    [3]uint64
		pending [3]int64
		down    bool
		heals   []ReplacementHeal
		want    bool
	}{
		{"never healed since the move: due", empty, [3]int64{0, 0, 0}, false, nil, true},
		{"never healed, even as full as its siblings: due", full, [3]int64{0, 0, 0}, false, nil, true},
		{"healed just now, still empty: not yet again", empty, [3]int64{0, 0, 0}, false, []ReplacementHeal{{ref, now.Add(-2 * time.Second)}}, false},
		{"healed a retry ago, still empty, nothing pending: again", empty, [3]int64{0, 0, 0}, false, []ReplacementHeal{{ref, now.Add(-ReplacementHealRetry)}}, true},
		{"healed a retry ago, entries pending (a heal runs): not again", empty, [3]int64{0, 4, 4}, false, []ReplacementHeal{{ref, now.Add(-time.Minute)}}, false},
		{"healed and full: never again", full, [3]int64{0, 0, 0}, false, []ReplacementHeal{{ref, now.Add(-time.Hour)}}, false},
		{"a brick of the set unreachable: GD2 would refuse the trigger", empty, [3]int64{0, 0, -1}, true, nil, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := movedSet(tc.used, tc.pending)
			if tc.down {
				v.Subvols[0].Bricks[2].Online = false
			}
			vols := MarkReplacements([]VolumeFacts{v}, movedBy, tc.heals)
			got := ReplacementHealDue(vols, []BrickRef{ref}, tc.heals, now)
			if (len(got) == 1) != tc.want {
				t.Fatalf("due %v, want due %t", got, tc.want)
			}
		})
	}
}
