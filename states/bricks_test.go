package states

import (
	"fmt"
	"testing"
)

// replica3 builds a started replica-3 volume on peers a, b, c with the given
// online flags and heal-info pending counts (-1 = brick down), each brick
// of capacity 100.
func replica3(online [3]bool, pending [3]int64) VolumeFacts {
	s := SubvolFacts{Name: "vol-replicate-0", Replica: true}
	for i, p := range []string{"a", "b", "c"} {
		s.Bricks = append(s.Bricks, BrickFacts{Path: "/b/" + p, PeerID: p, Online: online[i], Pending: pending[i], Size: 100})
	}
	return VolumeFacts{Name: "vol", Started: true, Subvols: []SubvolFacts{s}}
}

func TestAnalyzePeer(t *testing.T) {
	type want struct{ on, offline, sole, quorum, movable int }
	cases := []struct {
		name    string
		peer    string
		online  [3]bool
		pending [3]int64
		want    want
	}{
		{"a healthy set lets any brick move", "a", [3]bool{true, true, true}, [3]int64{0, 0, 0}, want{1, 0, 0, 0, 1}},
		{"a down brick whose siblings carry the same backlog can be rebuilt from them", "a", [3]bool{false, true, true}, [3]int64{-1, 7, 7}, want{1, 1, 0, 0, 1}},
		{"a brick is the sole healed copy when the only other online sibling is still filling", "a", [3]bool{true, true, false}, [3]int64{9, 0, -1}, want{1, 0, 1, 1, 0}},
		{"a filling new brick is never counted as a healed copy", "b", [3]bool{true, true, true}, [3]int64{5, 0, 5}, want{1, 0, 0, 0, 1}},
		{"stopping a brick while another is down loses quorum, so it does not move", "a", [3]bool{true, true, false}, [3]int64{0, 0, -1}, want{1, 0, 0, 1, 0}},
		{"a peer with no brick in the set has nothing to analyse", "z", [3]bool{true, true, true}, [3]int64{0, 0, 0}, want{0, 0, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := AnalyzePeer(tc.peer, []VolumeFacts{replica3(tc.online, tc.pending)}, nil)
			g := want{got.OnPeer, got.Offline, got.SoleHealedCopies, got.QuorumAtRisk, len(got.Movable)}
			if g != tc.want {
				t.Fatalf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}

func TestAnalyzePeerKeepsQuorumPerReplicaSet(t *testing.T) {
	// Peer a holds a brick in two sets; the first set's c is down, so
	// stopping a's brick there would leave one of three up.
	v := layout("v", []string{"a", "b", "c"}, []string{"a", "d", "e"})
	v.Subvols[0].Bricks[2].Online, v.Subvols[0].Bricks[2].Pending = false, -1
	got := AnalyzePeer("a", []VolumeFacts{v}, nil)
	if got.QuorumAtRisk != 1 {
		t.Fatalf("quorum at risk %d, want the one brick of the set with a brick down", got.QuorumAtRisk)
	}
	if len(got.Movable) != 1 || got.Movable[0].Subvol != v.Subvols[1].Name {
		t.Fatalf("movable %+v, want only the brick of the set that keeps quorum", got.Movable)
	}
}

func TestAnalyzePeerTracksMovedBricksUntilHealed(t *testing.T) {
	moved := []BrickRef{{Volume: "vol", Path: "/b/b"}}
	vol := replica3([3]bool{true, true, true}, [3]int64{4, 0, 4})
	if got := AnalyzePeer("old", []VolumeFacts{vol}, moved); got.Unhealed != 1 {
		t.Fatalf("a moved brick still filling must count as unhealed, got %d", got.Unhealed)
	}
	vol = replica3([3]bool{true, true, true}, [3]int64{0, 0, 0})
	if got := AnalyzePeer("old", []VolumeFacts{vol}, moved); got.Unhealed != 0 {
		t.Fatalf("a healed moved brick must not count, got %d", got.Unhealed)
	}
}

func TestAnalyzePeerNeverMovesWhatHasNoOtherCopy(t *testing.T) {
	cases := []struct {
		name string
		vol  VolumeFacts
	}{
		{"a stopped volume's bricks wait until it starts", func() VolumeFacts {
			v := replica3([3]bool{false, false, false}, [3]int64{-1, -1, -1})
			v.Started = false
			return v
		}()},
		{"a distribute brick has no other copy", VolumeFacts{Name: "d", Started: true, Subvols: []SubvolFacts{{Name: "d-distribute-0",
			Bricks: []BrickFacts{{Path: "/b/a", PeerID: "a", Online: true}}}}}},
		{"a set in split-brain has no healed copy", func() VolumeFacts {
			v := replica3([3]bool{true, true, true}, [3]int64{0, 0, 0})
			v.Subvols[0].Bricks[1].SplitBrain = 2
			return v
		}()},
		{"an arbiter is never a healed copy", func() VolumeFacts {
			v := replica3([3]bool{true, false, true}, [3]int64{0, -1, 0})
			v.Subvols[0].Bricks[2].Arbiter = true
			return v
		}()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := AnalyzePeer("a", []VolumeFacts{tc.vol}, nil); len(got.Movable) != 0 {
				t.Fatalf("movable %+v", got.Movable)
			}
		})
	}
}

// layout builds a started volume whose subvolume i holds a brick on each
// peer of sets[i], every brick online and healed, with capacity 100.
func layout(name string, sets ...[]string) VolumeFacts {
	v := VolumeFacts{Name: name, Started: true}
	for i, set := range sets {
		sv := SubvolFacts{Name: fmt.Sprintf("%s-replicate-%d", name, i), Replica: true}
		for j, p := range set {
			sv.Bricks = append(sv.Bricks, BrickFacts{Path: fmt.Sprintf("/b/%s/s%d/b%d", name, i, j), PeerID: p, Online: true, Size: 100})
		}
		v.Subvols = append(v.Subvols, sv)
	}
	return v
}

// brickOf is brick j of subvolume i of v.
func brickOf(v VolumeFacts, i, j int) VolumeBrick {
	return VolumeBrick{Volume: v.Name, Subvol: v.Subvols[i].Name, BrickFacts: v.Subvols[i].Bricks[j]}
}

func TestClashPeers(t *testing.T) {
	dist := layout("dv", []string{"a", "b", "c"}, []string{"a2", "b2", "c2"})
	// The replacement of subvolume 1 brick 1 (b2) is named brick_dv_s1_b1:
	// the create planner's 1-based name of subvolume 0 brick 0 (on a).
	got := ClashPeers(dist, dist.Subvols[1].Bricks[1].Path, nil)
	if !got["a"] || len(got) != 1 {
		t.Fatalf("clash peers %v, want only a", got)
	}
	// Subvolume 0 has no 1-based namesake; a former holder of the brick
	// still has its old LV.
	former := map[BrickRef][]string{{Volume: "dv", Path: dist.Subvols[0].Bricks[2].Path}: {"old"}}
	got = ClashPeers(dist, dist.Subvols[0].Bricks[2].Path, former)
	if !got["old"] || len(got) != 1 {
		t.Fatalf("clash peers %v, want only the former holder", got)
	}
}

// TestHealed is the one rule behind every "healed" decision: no brick of
// the replica set unreachable, nothing pending, nothing in split-brain.
func TestHealed(t *testing.T) {
	cases := []struct {
		name                string
		pending, splitBrain int64
		unreachable         int
		want                bool
	}{
		{"a set with every brick reachable and nothing pending is healed", 0, 0, 0, true},
		{"a set with entries pending is not healed", 3, 0, 0, false},
		{"a set with entries in split-brain is not healed", 0, 1, 0, false},
		{"a set with a brick heal-info cannot reach is not healed, however clean the counts look", 0, 0, 1, false},
		{"a set whose every reachable count is zero but two bricks are unreachable is not healed", 0, 0, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := Healed(tc.pending, tc.splitBrain, tc.unreachable); got != tc.want {
				t.Fatalf("Healed(%d, %d, %d) = %v, want %v", tc.pending, tc.splitBrain, tc.unreachable, got, tc.want)
			}
		})
	}
}

// TestAnalyzePeerCountsUnreachableBricksOfItsSets: a brick bricks-status
// shows online but heal-info reports -1 (a restarted brick before its
// clients reconnect) counts as unreachable, as does an offline one; the
// set is then neither healthy nor a finished replacement.
func TestAnalyzePeerCountsUnreachableBricksOfItsSets(t *testing.T) {
	cases := []struct {
		name    string
		online  [3]bool
		pending [3]int64
		want    int
		healthy bool
	}{
		{"a set with every brick reachable has none unreachable", [3]bool{true, true, true}, [3]int64{0, 0, 0}, 0, true},
		{"an online brick heal-info cannot reach is unreachable although every count is zero", [3]bool{true, true, true}, [3]int64{-1, 0, 0}, 1, false},
		{"an offline sibling is unreachable", [3]bool{true, true, false}, [3]int64{0, 0, -1}, 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v := replica3(tc.online, tc.pending)
			if got := AnalyzePeer("a", []VolumeFacts{v}, nil).Unreachable; got != tc.want {
				t.Fatalf("Unreachable = %d, want %d", got, tc.want)
			}
			if got := v.Subvols[0].Healthy(); got != tc.healthy {
				t.Fatalf("Healthy = %v, want %v", got, tc.healthy)
			}
			moved := AnalyzePeer("z", []VolumeFacts{v}, []BrickRef{{Volume: "vol", Path: "/b/b"}})
			if unhealed := moved.Unhealed == 1; unhealed == tc.healthy {
				t.Fatalf("a replacement in the set counts as unhealed: %v, want %v", unhealed, !tc.healthy)
			}
		})
	}
	stopped := replica3([3]bool{false, false, false}, [3]int64{-1, -1, -1})
	stopped.Started = false
	if got := AnalyzePeer("a", []VolumeFacts{stopped}, nil).Unreachable; got != 0 {
		t.Fatalf("a stopped volume's bricks count %d unreachable, want 0: nothing heals there", got)
	}
}

// A replica-2 set, which is also how a thin-arbiter volume looks to anthill
// (GD2 lists its two data bricks; the thin arbiter is only in the client
// graph): client quorum needs the first brick, so the peer holding it may
// not stop it, while the peer of the second may (docs/csi.md, "Classes per
// volume type").
func TestAnalyzePeerOfAReplica2SetHoldsTheFirstBrick(t *testing.T) {
	s := SubvolFacts{Name: "vol-replicate-0", Replica: true, Bricks: []BrickFacts{
		{Path: "/b/a", PeerID: "a", Online: true, Size: 100},
		{Path: "/b/b", PeerID: "b", Online: true, Size: 100},
	}}
	vols := []VolumeFacts{{Name: "vol", Started: true, Subvols: []SubvolFacts{s}}}
	if got := AnalyzePeer("a", vols, nil); got.QuorumAtRisk != 1 || len(got.Movable) != 0 {
		t.Errorf("peer of the first brick: quorum at risk %d, movable %d; want 1, 0", got.QuorumAtRisk, len(got.Movable))
	}
	if got := AnalyzePeer("b", vols, nil); got.QuorumAtRisk != 0 || len(got.Movable) != 1 {
		t.Errorf("peer of the second brick: quorum at risk %d, movable %d; want 0, 1", got.QuorumAtRisk, len(got.Movable))
	}
}
