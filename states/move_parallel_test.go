package states

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
)

func TestNextMoves(t *testing.T) {
	// Peer a drains; a2 shares its zone, e is a zone of its own.
	zones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "c": "z3", "e": "z5"}
	two := layout("v1", []string{"a", "b", "c"}, []string{"a", "c", "b"})
	other := layout("v2", []string{"a", "b", "c"})
	filling := func(v VolumeFacts, set int) VolumeFacts {
		v.Subvols = slices.Clone(v.Subvols)
		sv := &v.Subvols[set]
		sv.Bricks = slices.Clone(sv.Bricks)
		sv.Bricks[1].Pending = 4 // the source's copy and another lack entries
		return v
	}
	paths := func(ms []BrickMove) []string {
		var out []string
		for _, m := range ms {
			out = append(out, m.Brick.Path)
		}
		return out
	}
	cases := []struct {
		name     string
		vols     []VolumeFacts
		devices  []DeviceFacts
		inFlight int
		limit    int
		want     []string
	}{
		{name: "with one move allowed the plan is the sequential drain's next move",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), limit: 1,
			want: []string{"/b/v1/s0/b0"}},
		{name: "a limit below one counts as one",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), limit: 0,
			want: []string{"/b/v1/s0/b0"}},
		{name: "bricks of different replica sets and volumes move together up to the limit",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), limit: 2,
			want: []string{"/b/v1/s0/b0", "/b/v1/s1/b0"}},
		{name: "every brick of the node in its own set moves together when the limit allows",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), limit: 8,
			want: []string{"/b/v1/s0/b0", "/b/v1/s1/b0", "/b/v2/s0/b0"}},
		{name: "the moves in flight count against the limit",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), inFlight: 2, limit: 3,
			want: []string{"/b/v1/s0/b0"}},
		{name: "with as many moves in flight as the limit nothing more moves",
			vols: []VolumeFacts{two, other}, devices: roomOn(1000, "a2"), inFlight: 2, limit: 2},
		{name: "a set with something still to heal takes no move beside others",
			vols: []VolumeFacts{filling(two, 1), other}, devices: roomOn(1000, "a2"), limit: 8,
			want: []string{"/b/v1/s0/b0", "/b/v2/s0/b0"}},
		{name: "a set with something still to heal may take the first move when nothing is in flight, as the sequential drain",
			vols: []VolumeFacts{filling(two, 0)}, devices: roomOn(1000, "a2"), limit: 8,
			want: []string{"/b/v1/s0/b0", "/b/v1/s1/b0"}},
		{name: "a set with something still to heal takes no move while another is in flight",
			vols: []VolumeFacts{filling(two, 0)}, devices: roomOn(1000, "a2"), inFlight: 1, limit: 8,
			want: []string{"/b/v1/s1/b0"}},
		{name: "each move is charged to the devices before the next is planned",
			vols: []VolumeFacts{two, other}, devices: roomOn(250, "a2"), limit: 8,
			want: []string{"/b/v1/s0/b0", "/b/v1/s1/b0"}},
		{name: "a move with nowhere left to go after the earlier ones does not hold up the next set",
			vols: []VolumeFacts{two, other}, devices: append(roomOn(250, "a2"), roomOn(101, "e")...), limit: 8,
			want: []string{"/b/v1/s0/b0", "/b/v1/s1/b0", "/b/v2/s0/b0"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := DrainFacts{
				Source: "a", Movable: AnalyzePeer("a", tc.vols, nil).Movable, Volumes: tc.vols,
				Peers: zonePeers(zones), Devices: tc.devices, InFlight: tc.inFlight,
			}
			devices := slices.Clone(tc.devices)
			got := NextMoves(f, tc.limit)
			if !slices.Equal(paths(got), tc.want) {
				t.Fatalf("moves %v, want %v", paths(got), tc.want)
			}
			if !slices.Equal(f.Devices, devices) {
				t.Error("NextMoves modified the devices")
			}
		})
	}
}

// parallelWorld is a random drain: volumes of replica sets over peers in
// zones, some bricks down or filling, some replacements of the drain still
// healing, devices with or without room.
type parallelWorld struct {
	vols    []VolumeFacts
	moved   []BrickRef
	peers   []PeerFacts
	devices []DeviceFacts
	former  map[BrickRef][]string
	refused []string
}

const parallelSource = "p0"

func randomParallelWorld(r *rand.Rand) parallelWorld {
	var w parallelWorld
	nz := 2 + r.Intn(3)
	np := 4 + r.Intn(6)
	var ids []string
	for i := range np {
		id := fmt.Sprintf("p%d", i)
		ids = append(ids, id)
		w.peers = append(w.peers, PeerFacts{
			ID: id, Zone: fmt.Sprintf("z%d", r.Intn(nz)),
			Online: i == 0 || r.Intn(12) > 0, MayReceive: r.Intn(10) > 0,
		})
		for range 1 + r.Intn(2) {
			frees := []uint64{0, 100, 150, 250, 350, 1000}
			w.devices = append(w.devices, DeviceFacts{PeerID: id, Enabled: r.Intn(10) > 0, Free: frees[r.Intn(len(frees))]})
		}
	}
	w.former = map[BrickRef][]string{}
	for v := range 1 + r.Intn(4) {
		vol := VolumeFacts{Name: fmt.Sprintf("v%d", v), Started: r.Intn(10) > 0}
		for s := range 1 + r.Intn(3) {
			sv := SubvolFacts{Name: fmt.Sprintf("v%d-replicate-%d", v, s), Replica: true}
			n := 2 + r.Intn(2)
			holders := slices.Clone(ids[1:])
			r.Shuffle(len(holders), func(i, j int) { holders[i], holders[j] = holders[j], holders[i] })
			holders = holders[:n]
			if r.Intn(4) > 0 {
				holders[r.Intn(n)] = parallelSource
			}
			for j, p := range holders {
				sv.Bricks = append(sv.Bricks, BrickFacts{Path: fmt.Sprintf("/b/v%d/s%d/b%d", v, s, j), PeerID: p, Online: true, Size: 100})
			}
			switch r.Intn(6) {
			case 0: // a brick is down; the others carry its backlog
				k := r.Intn(n)
				for j := range sv.Bricks {
					sv.Bricks[j].Pending = 3
				}
				sv.Bricks[k].Online, sv.Bricks[k].Pending = false, -1
			case 1: // a brick is filling (perhaps a replacement of this drain)
				k := r.Intn(n)
				for j := range sv.Bricks {
					sv.Bricks[j].Pending = 5
				}
				sv.Bricks[k].Pending = 0
				if sv.Bricks[k].PeerID != parallelSource && r.Intn(2) == 0 {
					w.moved = append(w.moved, BrickRef{Volume: vol.Name, Path: sv.Bricks[k].Path})
				}
			case 2: // split-brain
				sv.Bricks[r.Intn(n)].SplitBrain = 1
			}
			if r.Intn(8) == 0 {
				ref := BrickRef{Volume: vol.Name, Path: sv.Bricks[r.Intn(n)].Path}
				w.former[ref] = append(w.former[ref], ids[1+r.Intn(np-1)])
			}
			vol.Subvols = append(vol.Subvols, sv)
		}
		w.vols = append(w.vols, vol)
	}
	if r.Intn(6) == 0 {
		w.refused = []string{ids[1+r.Intn(np-1)]}
	}
	return w
}

func (w parallelWorld) facts() DrainFacts {
	a := AnalyzePeer(parallelSource, w.vols, w.moved)
	return DrainFacts{
		Source: parallelSource, Movable: a.Movable, Volumes: w.vols, Peers: w.peers, Devices: w.devices,
		FormerHolders: w.former, Refused: w.refused, InFlight: a.Unhealed,
	}
}

// after is the world once move m is done: the brick sits on the first of
// its targets, online and filling (its siblings hold entries it lacks),
// and the drain tracks it as moved.
func (w parallelWorld) after(m BrickMove) parallelWorld {
	out := w
	out.vols = slices.Clone(w.vols)
	for i := range out.vols {
		if out.vols[i].Name != m.Brick.Volume {
			continue
		}
		out.vols[i].Subvols = slices.Clone(out.vols[i].Subvols)
		for s := range out.vols[i].Subvols {
			sv := &out.vols[i].Subvols[s]
			if sv.Name != m.Brick.Subvol {
				continue
			}
			sv.Bricks = slices.Clone(sv.Bricks)
			for j := range sv.Bricks {
				b := &sv.Bricks[j]
				if b.Path == m.Brick.Path && b.PeerID == parallelSource {
					b.PeerID, b.Online, b.Pending = m.Plan.Targets[0], true, 0
				} else if b.Online {
					b.Pending++
				}
			}
		}
	}
	out.moved = append(slices.Clone(w.moved), BrickRef{Volume: m.Brick.Volume, Path: m.Brick.Path})
	return out
}

func (w parallelWorld) set(b VolumeBrick) (SubvolFacts, int) {
	for _, v := range w.vols {
		for i, s := range v.Subvols {
			if v.Name == b.Volume && s.Name == b.Subvol {
				return s, i
			}
		}
	}
	panic("no set of " + b.Path)
}

func (w parallelWorld) volume(name string) VolumeFacts {
	for _, v := range w.vols {
		if v.Name == name {
			return v
		}
	}
	panic("no volume " + name)
}

// TestNextMovesKeepsTheSequentialRules: whatever the layout, every move
// the parallel plan picks is one the sequential drain's rules allow on the
// state the plan's earlier moves leave, and with one move allowed it is
// the sequential drain's own choice.
func TestNextMovesKeepsTheSequentialRules(t *testing.T) {
	seed := rand.Int63()
	r := rand.New(rand.NewSource(seed))
	zoneOf := func(w parallelWorld, id string) string {
		for _, p := range w.peers {
			if p.ID == id {
				return p.PhysicalZone()
			}
		}
		return id
	}
	for iter := range 20000 {
		w := randomParallelWorld(r)
		f := w.facts()
		limit := r.Intn(6)
		moves := NextMoves(f, limit)
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("seed %d, iteration %d, limit %d, in flight %d: %s\nworld: %+v\nmoves: %+v", seed, iter, limit, f.InFlight, fmt.Sprintf(format, args...), w, moves)
		}
		if len(moves) > max(max(limit, 1)-f.InFlight, 0) {
			fail("%d moves beside %d in flight", len(moves), f.InFlight)
		}
		if f.InFlight == 0 {
			next := NextMove(f)
			if next.Found != (len(moves) > 0) || (next.Found && (moves[0].Brick != next.Move.Brick || !slices.Equal(moves[0].Plan.Targets, next.Move.Plan.Targets))) {
				fail("the first move differs from the sequential drain's %+v", next)
			}
		}
		if limit <= 1 && len(moves) > 1 {
			fail("more than one move with one allowed")
		}
		sets := map[[2]string]bool{}
		names := map[string]bool{}
		state := w
		var earlier []BrickMove
		for k, m := range moves {
			key := [2]string{m.Brick.Volume, m.Brick.Subvol}
			if sets[key] {
				fail("two moves in replica set %v", key)
			}
			sets[key] = true
			sv, si := state.set(m.Brick)
			bi := slices.IndexFunc(sv.Bricks, func(b BrickFacts) bool { return b.Path == m.Brick.Path })
			// GD2 names a replacement after its volume and position.
			name := fmt.Sprintf("brick_%s_s%d_b%d", m.Brick.Volume, si, bi)
			if names[name] {
				fail("two moves make replacement %s", name)
			}
			names[name] = true
			a := AnalyzePeer(parallelSource, state.vols, state.moved)
			if !slices.ContainsFunc(a.Movable, func(b VolumeBrick) bool { return b.Volume == m.Brick.Volume && b.Path == m.Brick.Path }) {
				fail("move %d (%s) is not movable once the earlier moves are done", k, m.Brick.Path)
			}
			// A brick already down changes no quorum when it goes.
			if len(sv.healedCopies(parallelSource)) == 0 || (m.Brick.Online && !sv.quorumWithout(parallelSource)) {
				fail("move %d (%s) takes a set's only healed copy or its quorum", k, m.Brick.Path)
			}
			if (f.InFlight > 0 || k > 0) && !sv.Healthy() {
				fail("move %d (%s) goes beside others into a set that is not healed", k, m.Brick.Path)
			}
			if len(m.Plan.Targets) == 0 || m.Block != nil {
				fail("move %d (%s) has no target", k, m.Brick.Path)
			}
			clash := ClashPeers(w.volume(m.Brick.Volume), m.Brick.Path, w.former)
			room := ReplacementRoom(m.Brick.Size)
			for _, tgt := range m.Plan.Targets {
				p := w.peers[slices.IndexFunc(w.peers, func(p PeerFacts) bool { return p.ID == tgt })]
				if tgt == parallelSource || !p.Online || !p.MayReceive || clash[tgt] || slices.Contains(w.refused, tgt) {
					fail("move %d (%s) offers peer %s, which may not receive it", k, m.Brick.Path, tgt)
				}
				for _, o := range sv.Bricks {
					if o.Path != m.Brick.Path && zoneOf(w, o.PeerID) == p.PhysicalZone() {
						fail("move %d (%s) may put two copies of set %s in zone %s", k, m.Brick.Path, sv.Name, p.PhysicalZone())
					}
				}
				// Room after the earlier moves that may land on the
				// same peer, wherever GD2 put them.
				fits := false
				for _, d := range w.devices {
					if d.PeerID != tgt || !d.Enabled {
						continue
					}
					free := d.Free
					for _, e := range earlier {
						if slices.Contains(e.Plan.Targets, tgt) {
							free -= min(free, ReplacementRoom(e.Brick.Size))
						}
					}
					fits = fits || free >= room
				}
				if !fits {
					fail("move %d (%s) offers peer %s without room left by the earlier moves", k, m.Brick.Path, tgt)
				}
			}
			earlier = append(earlier, m)
			state = state.after(m)
		}
	}
}
