package states

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// zonePeers builds peers in the given zones, labelled like the gatherer
// labels them, online unless listed in down.
func zonePeers(zones map[string]string, down ...string) []PeerFacts {
	var out []PeerFacts
	for id, z := range zones {
		out = append(out, PeerFacts{ID: id, Label: fmt.Sprintf("%s (peer %s)", id, id), Zone: z, Online: !slices.Contains(down, id), MayReceive: true})
	}
	slices.SortFunc(out, func(a, b PeerFacts) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func roomOn(free uint64, peers ...string) []DeviceFacts {
	var out []DeviceFacts
	for _, p := range peers {
		out = append(out, DeviceFacts{PeerID: p, Enabled: true, Free: free})
	}
	return out
}

// drained moves peer id of peers to its draining zone, as a drain of a
// brick within its own zone does (effects.GD2.ReplaceBrick in kube/effects).
func drained(peers []PeerFacts, id string) []PeerFacts {
	out := slices.Clone(peers)
	for i := range out {
		if out[i].ID == id {
			out[i].HomeZone, out[i].Zone = out[i].Zone, out[i].Zone+"-draining"
		}
	}
	return out
}

// planCase is one PlanMove scenario: a volume, the brick to move off src,
// the peers' zones and liveness (or the peers themselves), devices, the
// peers not to offer, and the plan or the block wanted.
type planCase struct {
	name         string
	vol          VolumeFacts
	b            VolumeBrick
	src          string
	zones        map[string]string
	down         []string
	peers        []PeerFacts
	devices      []DeviceFacts
	exclude      []string
	clash        []string
	refused      []string
	wantTargets  []string
	wantSameZone bool
	wantBlock    string // "nodeDown" or "placement"
	wantIn       string
}

func TestPlanMove(t *testing.T) {
	// Two peers per zone; a replica-3 volume on a, b, c.
	zones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "b2": "z2", "c": "z3", "c2": "z3", "e": "z4"}
	rep3 := layout("vol", []string{"a", "b", "c"})
	// A 2x3 volume created with subvolume-zones-overlap: both sets span
	// the three zones.
	dist := layout("dv", []string{"a", "b", "c"}, []string{"a2", "b2", "c2"})
	// A 2x3 volume whose sets keep to zones of their own (no overlap).
	apart := layout("av", []string{"a", "b", "c"}, []string{"e", "x", "y"})
	apartZones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "c": "z3", "e": "z4", "x": "z5", "y": "z6", "f": "z7"}

	cases := []planCase{
		{name: "a brick moves to a peer of its own zone first", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), wantTargets: []string{"a2"}, wantSameZone: true},
		{name: "a full own-zone device falls back to a free zone no copy of the set uses", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: append(roomOn(10, "a2"), roomOn(1000, "e")...), wantTargets: []string{"e"}},
		{name: "zones another copy of the set uses are never offered", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "b2", "c2"), wantBlock: "placement", wantIn: "replica set vol-replicate-0"},
		{name: "another node of the volume down blocks the move and is named", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"c"}, devices: roomOn(1000, "a2"), wantBlock: "nodeDown", wantIn: "c (peer c)"},
		{name: "the source's own node down blocks the move (GD2 gates on it too)", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"a"}, devices: roomOn(1000, "a2"), wantBlock: "nodeDown", wantIn: "a (peer a)"},
		{name: "a node of the volume GD2 does not list counts as down", vol: rep3, b: brickOf(rep3, 0, 0), src: "a",
			zones: map[string]string{"a": "z1", "a2": "z1", "b": "z2"}, devices: roomOn(1000, "a2"), wantBlock: "nodeDown", wantIn: "peer c"},
		{name: "a node down in another subvolume of the volume blocks the move", vol: dist, b: brickOf(dist, 0, 0), src: "a", zones: zones,
			down: []string{"c2"}, devices: roomOn(1000, "e"), wantBlock: "nodeDown", wantIn: "c2"},
		{name: "a down target is never offered", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"a2"}, devices: roomOn(1000, "a2"), wantBlock: "placement"},
		{name: "a peer whose mirrored node state this operator does not know is never offered, and is counted", vol: rep3, b: brickOf(rep3, 0, 0), src: "a",
			peers: func() []PeerFacts {
				ps := zonePeers(zones)
				for i := range ps {
					if ps[i].ID == "a2" {
						ps[i].MayReceive = NodeStateMayReceiveBricks("Evacuating")
					}
				}
				return ps
			}(), devices: roomOn(1000, "a2"), wantBlock: "placement", wantIn: "1 alive peer(s) take no bricks"},
		{name: "a disabled device is no room", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: []DeviceFacts{{PeerID: "a2", Free: 1000}}, wantBlock: "placement", wantIn: "101 bytes free"},
		{name: "a distributed-replicate brick may go where another subvolume already is (per replica set)", vol: dist, b: brickOf(dist, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2"), wantTargets: []string{"a2"}, wantSameZone: true},
		{name: "a volume whose sets keep to their own zones prefers a zone the volume does not use", vol: apart, b: brickOf(apart, 0, 0), src: "a", zones: apartZones,
			devices: roomOn(1000, "x", "f"), wantTargets: []string{"f"}},
		{name: "a volume whose sets keep apart still drains into a zone of another set when nothing else fits", vol: apart, b: brickOf(apart, 0, 0), src: "a", zones: apartZones,
			devices: roomOn(1000, "x"), wantTargets: []string{"x"}},
		{name: "excluded peers (leaving or in maintenance) are not offered", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), exclude: []string{"a2"}, wantTargets: []string{"e"}},
		{name: "peers that may hold an LV of the replacement's name are not offered", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), clash: []string{"a2"}, wantTargets: []string{"e"}},
		{name: "peers a replace-brick already failed on are not offered again", vol: rep3, b: brickOf(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2"), refused: []string{"a2"}, wantBlock: "placement", wantIn: "failed"},
		// Zones are compared by where a peer really is: a peer a drain
		// moved to <zone>-draining still sits in <zone>.
		{name: "a source moved to its draining zone still prefers peers of its physical zone", vol: rep3, b: brickOf(rep3, 0, 0), src: "a",
			peers: drained(zonePeers(zones), "a"), devices: roomOn(1000, "a2", "e"), wantTargets: []string{"a2"}, wantSameZone: true},
		{name: "a sibling moved to its draining zone still uses its physical zone", vol: rep3, b: brickOf(rep3, 0, 0), src: "a",
			peers: drained(zonePeers(zones), "b"), devices: roomOn(1000, "b2"), wantBlock: "placement", wantIn: "[z2 z3]"},
		{name: "a target moved to its draining zone is placed by its physical zone", vol: rep3, b: brickOf(rep3, 0, 0), src: "a",
			peers: drained(zonePeers(zones), "c2"), devices: roomOn(1000, "c2"), wantBlock: "placement"},
	}
	// Arbiter (replica 2 + arbiter) and disperse (4 + 2) sets: the same
	// rule, one brick of a set per zone.
	arb := layout("arb", []string{"a", "b", "c"})
	arb.Subvols[0].Bricks[2].Arbiter = true
	disp := layout("ec", []string{"a", "b", "c", "d", "e", "f"})
	disp.Subvols[0].Disperse, disp.Subvols[0].Data = true, 4
	dispZones := map[string]string{"a": "z1", "b": "z2", "c": "z3", "d": "z4", "e": "z5", "f": "z6", "a2": "z1", "g": "z7"}
	cases = append(cases, []planCase{
		{name: "an arbiter brick moves like any other, within its zone", vol: arb, b: brickOf(arb, 0, 2), src: "c", zones: zones,
			devices: roomOn(1000, "c2", "b2"), wantTargets: []string{"c2"}, wantSameZone: true},
		{name: "a data brick of an arbiter set never joins the arbiter's zone", vol: arb, b: brickOf(arb, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "c2"), wantBlock: "placement"},
		{name: "a disperse brick moves to a zone no other fragment uses", vol: disp, b: brickOf(disp, 0, 0), src: "a", zones: dispZones,
			devices: roomOn(1000, "g"), wantTargets: []string{"g"}},
		{name: "a disperse brick prefers its own zone", vol: disp, b: brickOf(disp, 0, 0), src: "a", zones: dispZones,
			devices: roomOn(1000, "g", "a2"), wantTargets: []string{"a2"}, wantSameZone: true},
	}...)
	set := func(ids []string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return m
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			peers := tc.peers
			if peers == nil {
				peers = zonePeers(tc.zones, tc.down...)
			}
			for i := range peers {
				if slices.Contains(tc.exclude, peers[i].ID) {
					peers[i].MayReceive = false
				}
			}
			plan, block := PlanMove(tc.b, tc.vol, tc.src, peers, tc.devices, set(tc.clash), set(tc.refused))
			if tc.wantBlock != "" {
				if block == nil || block.NodeDown != (tc.wantBlock == "nodeDown") || !strings.Contains(block.Reason, tc.wantIn) {
					t.Fatalf("block = %+v (plan %+v), want %s naming %q", block, plan, tc.wantBlock, tc.wantIn)
				}
				return
			}
			if block != nil {
				t.Fatalf("blocked: %+v", block)
			}
			if !slices.Equal(plan.Targets, tc.wantTargets) || plan.SameZone != tc.wantSameZone {
				t.Fatalf("plan = %+v, want targets %v same zone %t", plan, tc.wantTargets, tc.wantSameZone)
			}
		})
	}
}

func TestPlannedTargetsKeepEveryReplicaSetInDistinctZones(t *testing.T) {
	zones := map[string]string{"a": "z1", "a2": "z1", "b": "z2", "b2": "z2", "c": "z3", "c2": "z3"}
	dist := layout("dv", []string{"a", "b", "c"}, []string{"a2", "b2", "c2"})
	peers := zonePeers(zones)
	for i, sv := range dist.Subvols {
		for j, b := range sv.Bricks {
			plan, block := PlanMove(brickOf(dist, i, j), dist, b.PeerID, peers, roomOn(1000, "a", "a2", "b", "b2", "c", "c2"), nil, nil)
			if block != nil {
				t.Fatalf("brick %s blocked: %s", b.Path, block.Reason)
			}
			for _, target := range plan.Targets {
				for _, o := range sv.Bricks {
					if o.Path != b.Path && zones[o.PeerID] == zones[target] {
						t.Fatalf("brick %s offered to %s in zone %s, which %s of the same set uses", b.Path, target, zones[target], o.PeerID)
					}
				}
			}
		}
	}
}

// randomBricks returns arbitrary peers (some down, some not receiving,
// some moved to their draining zone), devices and one volume of one to
// three sets placed on them, with arbitrary brick states: the rules must
// hold whatever GD2 answers.
func randomBricks(r *rand.Rand) (VolumeFacts, []PeerFacts, []DeviceFacts) {
	n := 3 + r.IntN(7)
	var peers []PeerFacts
	for i := range n {
		p := PeerFacts{ID: fmt.Sprintf("p%d", i), Zone: fmt.Sprintf("z%d", r.IntN(5)), Online: r.IntN(6) > 0, MayReceive: r.IntN(5) > 0}
		if r.IntN(5) == 0 {
			p.HomeZone, p.Zone = p.Zone, p.Zone+"-draining"
		}
		peers = append(peers, p)
	}
	var devices []DeviceFacts
	for range r.IntN(2 * n) {
		devices = append(devices, DeviceFacts{PeerID: peers[r.IntN(n)].ID, Enabled: r.IntN(4) > 0, Free: uint64(r.IntN(300))})
	}
	vol := VolumeFacts{Name: "v", Started: r.IntN(6) > 0}
	for i := range 1 + r.IntN(3) {
		sv := SubvolFacts{Name: fmt.Sprintf("v-%d", i), Replica: r.IntN(6) > 0}
		if sv.Replica && r.IntN(4) == 0 {
			sv.Disperse, sv.Data = true, 2
		}
		for j := range 2 + r.IntN(3) {
			b := BrickFacts{Path: fmt.Sprintf("/b/s%d/b%d", i, j), PeerID: peers[r.IntN(n)].ID, Arbiter: r.IntN(6) == 0,
				Online: vol.Started && r.IntN(5) > 0, Pending: int64(r.IntN(3)), Size: uint64(r.IntN(200))}
			if r.IntN(10) == 0 {
				b.SplitBrain = 1
			}
			if !b.Online {
				b.Pending = -1
			}
			sv.Bricks = append(sv.Bricks, b)
		}
		vol.Subvols = append(vol.Subvols, sv)
	}
	if r.IntN(8) == 0 {
		// A brick on a peer GD2 no longer lists.
		vol.Subvols[0].Bricks[0].PeerID = "gone"
	}
	return vol, peers, devices
}

func TestBrickRulesNeverBreakTheSafetyRules(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	var planned, nodeDown, noRoom, movable int
	for range 20000 {
		vol, peers, devices := randomBricks(r)
		byID := map[string]PeerFacts{}
		for _, p := range peers {
			byID[p.ID] = p
		}
		zoneOf := func(id string) string {
			if p, ok := byID[id]; ok {
				return p.PhysicalZone()
			}
			return id
		}
		volumeDown := false
		for _, sv := range vol.Subvols {
			for _, b := range sv.Bricks {
				if p, ok := byID[b.PeerID]; !ok || !p.Online {
					volumeDown = true
				}
			}
		}
		clash, refused := map[string]bool{}, map[string]bool{}
		for _, p := range peers {
			if r.IntN(6) == 0 {
				clash[p.ID] = true
			}
			if r.IntN(6) == 0 {
				refused[p.ID] = true
			}
		}
		for i, sv := range vol.Subvols {
			for j, b := range sv.Bricks {
				vb := brickOf(vol, i, j)
				plan, block := PlanMove(vb, vol, b.PeerID, peers, devices, clash, refused)
				fail := func(rule string) {
					t.Fatalf("%s\nbrick %+v\nvolume %+v\npeers %+v\ndevices %+v\nclash %v refused %v\nplan %+v block %+v", rule, vb, vol, peers, devices, clash, refused, plan, block)
				}
				// eligible: every rule a target must pass, stated apart
				// from the planner.
				eligible := func(p PeerFacts) bool {
					if p.ID == b.PeerID || !p.Online || !p.MayReceive || clash[p.ID] || refused[p.ID] {
						return false
					}
					if !slices.ContainsFunc(devices, func(d DeviceFacts) bool {
						return d.PeerID == p.ID && d.Enabled && d.Free >= ReplacementRoom(b.Size)
					}) {
						return false
					}
					for k, o := range sv.Bricks {
						if k != j && zoneOf(o.PeerID) == p.PhysicalZone() {
							return false
						}
					}
					return true
				}
				if volumeDown {
					if block == nil || !block.NodeDown {
						fail("a volume with a node down was not blocked as node down")
					}
					nodeDown++
					continue
				}
				if block != nil {
					noRoom++
					if block.NodeDown {
						fail("a volume with every node up was blocked as node down")
					}
					if slices.ContainsFunc(peers, eligible) {
						fail("a move was blocked although a peer could take it")
					}
					continue
				}
				planned++
				if len(plan.Targets) == 0 {
					fail("a plan offered no peer")
				}
				for _, id := range plan.Targets {
					p, ok := byID[id]
					if !ok || !eligible(p) {
						fail("a plan offered the source, a down, excluded, clash or refused peer, one without room, or a zone the set uses: " + id)
					}
					if plan.SameZone != (p.PhysicalZone() == zoneOf(b.PeerID)) {
						fail("SameZone does not say whether the target is in the source's physical zone")
					}
				}
			}
		}
		for _, p := range peers {
			a := AnalyzePeer(p.ID, []VolumeFacts{vol}, nil)
			for _, m := range a.Movable {
				movable++
				if !vol.Started {
					t.Fatalf("a brick of a stopped volume is movable: %+v", m)
				}
				i := slices.IndexFunc(vol.Subvols, func(sv SubvolFacts) bool { return sv.Name == m.Subvol })
				if i < 0 || m.PeerID != p.ID || !otherHealedCopy(vol.Subvols[i], p.ID) {
					t.Fatalf("brick %+v of peer %s is movable without another online healed copy\nvolume %+v", m, p.ID, vol)
				}
			}
		}
	}
	// The generator must reach every outcome, or the rules above hold
	// vacuously.
	if planned == 0 || nodeDown == 0 || noRoom == 0 || movable == 0 {
		t.Fatalf("outcomes planned %d, node down %d, no room %d, movable %d: the generator misses one", planned, nodeDown, noRoom, movable)
	}
	t.Logf("planned %d, node down %d, no room %d, movable %d", planned, nodeDown, noRoom, movable)
}

// otherHealedCopy is the healed-copy rule of docs/design/heal-safety.md,
// stated apart from SubvolFacts.healedCopies: a set with copies, no
// split-brain, and a brick on another peer that is online, no arbiter, and
// reports no fewer pending entries than any online brick of the set.
func otherHealedCopy(s SubvolFacts, peer string) bool {
	if !s.Replica {
		return false
	}
	for _, b := range s.Bricks {
		if b.SplitBrain > 0 {
			return false
		}
	}
	for _, b := range s.Bricks {
		if b.PeerID == peer || !b.Online || b.Arbiter || b.Pending < 0 {
			continue
		}
		if !slices.ContainsFunc(s.Bricks, func(o BrickFacts) bool { return o.Online && o.Pending > b.Pending }) {
			return true
		}
	}
	return false
}

func TestPhysicalZone(t *testing.T) {
	if z := (PeerFacts{Zone: "z1"}).PhysicalZone(); z != "z1" {
		t.Fatalf("a peer in its zone: %q", z)
	}
	if z := (PeerFacts{Zone: "z1-draining", HomeZone: "z1"}).PhysicalZone(); z != "z1" {
		t.Fatalf("a peer moved to its draining zone still sits in its home zone: %q", z)
	}
}

func TestPoolNodesDownNamesEveryDownPeer(t *testing.T) {
	if got := PoolNodesDown([]PeerFacts{{ID: "a", Online: true}, {ID: "b", Online: true}}); got != "" {
		t.Errorf("every peer up: %q, want none", got)
	}
	got := PoolNodesDown([]PeerFacts{{ID: "a", Online: true}, {ID: "c", Label: "node-c (zone-3)"}, {ID: "b"}})
	if want := "GD2 sets no volume option while a peer of the pool is down: node-c (zone-3), peer b"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
