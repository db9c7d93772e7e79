package kube

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/gd2"
)

func i64(n int64) *int64 { return &n }

// replica3 builds a started replica-3 volume on peers a, b, c with the given
// online flags and heal-info pending counts (-1 = brick down).
func replica3(online [3]bool, pending [3]int64) (gd2.Volume, []gd2.BrickStatus, []gd2.BrickHealInfo) {
	peers := []string{"a", "b", "c"}
	v := gd2.Volume{Name: "vol", State: gd2.VolumeStarted, Subvols: []gd2.Subvol{{Name: "vol-replicate-0", Type: gd2.SubvolReplicate, ReplicaCount: 3}}}
	var st []gd2.BrickStatus
	var hi []gd2.BrickHealInfo
	for i, p := range peers {
		bi := gd2.BrickInfo{PeerID: p, Path: "/b/" + p, Host: "h" + p, VolumeName: "vol"}
		v.Subvols[0].Bricks = append(v.Subvols[0].Bricks, bi)
		st = append(st, gd2.BrickStatus{Info: bi, Online: online[i], Size: gd2.SizeInfo{Capacity: 100}})
		h := gd2.BrickHealInfo{HostID: p, Name: "h" + p + ":/b/" + p, Status: "Connected", EntriesInHealPending: i64(pending[i]), EntriesInSplitBrain: i64(0)}
		if pending[i] < 0 {
			h.HostID = "-"
		}
		hi = append(hi, h)
	}
	return v, st, hi
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
		{"stopping a brick while another is down loses quorum", "a", [3]bool{true, true, false}, [3]int64{0, 0, -1}, want{1, 0, 0, 1, 1}},
		{"a peer with no brick in the set has nothing to analyse", "z", [3]bool{true, true, true}, [3]int64{0, 0, 0}, want{0, 0, 0, 0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, st, hi := replica3(tc.online, tc.pending)
			got := analyzePeer(tc.peer, []volumeView{buildVolumeView(v, st, hi)}, nil)
			g := want{got.OnPeer, got.Offline, got.SoleHealedCopies, got.QuorumAtRisk, len(got.Movable)}
			if g != tc.want {
				t.Fatalf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}

func TestAnalyzePeerTracksMovedBricksUntilHealed(t *testing.T) {
	v, st, hi := replica3([3]bool{true, true, true}, [3]int64{4, 0, 4})
	moved := []BrickRef{{Volume: "vol", Path: "/b/b"}}
	if got := analyzePeer("old", []volumeView{buildVolumeView(v, st, hi)}, moved); got.Unhealed != 1 {
		t.Fatalf("a moved brick still filling must count as unhealed, got %d", got.Unhealed)
	}
	v, st, hi = replica3([3]bool{true, true, true}, [3]int64{0, 0, 0})
	if got := analyzePeer("old", []volumeView{buildVolumeView(v, st, hi)}, moved); got.Unhealed != 0 {
		t.Fatalf("a healed moved brick must not count, got %d", got.Unhealed)
	}
}

// layout builds a started volume whose subvolume i holds a brick on each
// peer of sets[i] (peer ids double as host names), every brick online and
// healed, with capacity 100.
func layout(name string, sets ...[]string) volumeView {
	v := gd2.Volume{Name: name, State: gd2.VolumeStarted}
	var st []gd2.BrickStatus
	var hi []gd2.BrickHealInfo
	for i, set := range sets {
		sv := gd2.Subvol{Name: fmt.Sprintf("%s-replicate-%d", name, i), Type: gd2.SubvolReplicate, ReplicaCount: len(set)}
		for j, p := range set {
			bi := gd2.BrickInfo{PeerID: p, Path: fmt.Sprintf("/b/%s/s%d/b%d", name, i, j), Host: p, VolumeName: name}
			sv.Bricks = append(sv.Bricks, bi)
			st = append(st, gd2.BrickStatus{Info: bi, Online: true, Size: gd2.SizeInfo{Capacity: 100}})
			hi = append(hi, gd2.BrickHealInfo{HostID: p, Name: p + ":" + bi.Path, Status: "Connected", EntriesInHealPending: i64(0), EntriesInSplitBrain: i64(0)})
		}
		v.Subvols = append(v.Subvols, sv)
	}
	return buildVolumeView(v, st, hi)
}

func zonePeers(zones map[string]string, down ...string) []gd2.Peer {
	var out []gd2.Peer
	for id, z := range zones {
		out = append(out, gd2.Peer{ID: id, Name: id, Online: !slices.Contains(down, id), Metadata: map[string]string{"_zone": z}})
	}
	slices.SortFunc(out, func(a, b gd2.Peer) int { return strings.Compare(a.ID, b.ID) })
	return out
}

func roomOn(free uint64, peers ...string) []gd2.Device {
	var out []gd2.Device
	for _, p := range peers {
		out = append(out, gd2.Device{PeerID: p, Device: "/dev/sdb", State: gd2.DeviceEnabled, FreeSize: free})
	}
	return out
}

// planCase is one planMove scenario: a volume, the brick to move off src,
// the peers' zones and liveness, devices, the peers not to offer, and the
// plan or the block wanted.
type planCase struct {
	name         string
	vol          volumeView
	b            brickView
	src          string
	zones        map[string]string
	down         []string
	devices      []gd2.Device
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
	brick := func(v volumeView, sv, b int) brickView { return v.Subvols[sv].Bricks[b] }

	cases := []planCase{
		{name: "a brick moves to a peer of its own zone first", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), wantTargets: []string{"a2"}, wantSameZone: true},
		{name: "a full own-zone device falls back to a free zone no copy of the set uses", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: append(roomOn(10, "a2"), roomOn(1000, "e")...), wantTargets: []string{"e"}},
		{name: "zones another copy of the set uses are never offered", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "b2", "c2"), wantBlock: "placement", wantIn: "replica set vol-replicate-0"},
		{name: "another node of the volume down blocks the move and is named", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"c"}, devices: roomOn(1000, "a2"), wantBlock: "nodeDown", wantIn: "c (peer c)"},
		{name: "the source's own node down blocks the move (GD2 gates on it too)", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"a"}, devices: roomOn(1000, "a2"), wantBlock: "nodeDown", wantIn: "a (peer a)"},
		{name: "a node down in another subvolume of the volume blocks the move", vol: dist, b: brick(dist, 0, 0), src: "a", zones: zones,
			down: []string{"c2"}, devices: roomOn(1000, "e"), wantBlock: "nodeDown", wantIn: "c2"},
		{name: "a down target is never offered", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			down: []string{"a2"}, devices: roomOn(1000, "a2"), wantBlock: "placement"},
		{name: "a distributed-replicate brick may go where another subvolume already is (per replica set)", vol: dist, b: brick(dist, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2"), wantTargets: []string{"a2"}, wantSameZone: true},
		{name: "a volume whose sets keep to their own zones prefers a zone the volume does not use", vol: apart, b: brick(apart, 0, 0), src: "a", zones: apartZones,
			devices: roomOn(1000, "x", "f"), wantTargets: []string{"f"}},
		{name: "a volume whose sets keep apart still drains into a zone of another set when nothing else fits", vol: apart, b: brick(apart, 0, 0), src: "a", zones: apartZones,
			devices: roomOn(1000, "x"), wantTargets: []string{"x"}},
		{name: "excluded peers (leaving or in maintenance) are not offered", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), exclude: []string{"a2"}, wantTargets: []string{"e"}},
		{name: "peers that may hold an LV of the replacement's name are not offered", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2", "e"), clash: []string{"a2"}, wantTargets: []string{"e"}},
		{name: "peers a replace-brick already failed on are not offered again", vol: rep3, b: brick(rep3, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "a2"), refused: []string{"a2"}, wantBlock: "placement", wantIn: "failed"},
	}
	// Arbiter (replica 2 + arbiter) and disperse (4 + 2) sets: the same
	// rule, one brick of a set per zone.
	arb := layout("arb", []string{"a", "b", "c"})
	arb.Subvols[0].Bricks[2].Arbiter = true
	disp := layout("ec", []string{"a", "b", "c", "d", "e", "f"})
	disp.Subvols[0].Disperse, disp.Subvols[0].Data = true, 4
	dispZones := map[string]string{"a": "z1", "b": "z2", "c": "z3", "d": "z4", "e": "z5", "f": "z6", "a2": "z1", "g": "z7"}
	cases = append(cases, []planCase{
		{name: "an arbiter brick moves like any other, within its zone", vol: arb, b: brick(arb, 0, 2), src: "c", zones: zones,
			devices: roomOn(1000, "c2", "b2"), wantTargets: []string{"c2"}, wantSameZone: true},
		{name: "a data brick of an arbiter set never joins the arbiter's zone", vol: arb, b: brick(arb, 0, 0), src: "a", zones: zones,
			devices: roomOn(1000, "c2"), wantBlock: "placement"},
		{name: "a disperse brick moves to a zone no other fragment uses", vol: disp, b: brick(disp, 0, 0), src: "a", zones: dispZones,
			devices: roomOn(1000, "g"), wantTargets: []string{"g"}},
		{name: "a disperse brick prefers its own zone", vol: disp, b: brick(disp, 0, 0), src: "a", zones: dispZones,
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
			plan, block := planMove(tc.b, tc.vol, tc.src, zonePeers(tc.zones, tc.down...), tc.devices, set(tc.exclude), set(tc.clash), set(tc.refused))
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
	for _, sv := range dist.Subvols {
		for _, b := range sv.Bricks {
			plan, block := planMove(b, dist, b.PeerID, peers, roomOn(1000, "a", "a2", "b", "b2", "c", "c2"), nil, nil, nil)
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

func TestClashPeers(t *testing.T) {
	dist := layout("dv", []string{"a", "b", "c"}, []string{"a2", "b2", "c2"})
	// The replacement of subvolume 1 brick 1 (b2) is named brick_dv_s1_b1:
	// the create planner's 1-based name of subvolume 0 brick 0 (on a).
	got := clashPeers(dist, dist.Subvols[1].Bricks[1].Path, nil)
	if !got["a"] || len(got) != 1 {
		t.Fatalf("clash peers %v, want only a", got)
	}
	// Subvolume 0 has no 1-based namesake; a former holder of the brick
	// still has its old LV.
	former := map[BrickRef][]string{{Volume: "dv", Path: dist.Subvols[0].Bricks[2].Path}: {"old"}}
	got = clashPeers(dist, dist.Subvols[0].Bricks[2].Path, former)
	if !got["old"] || len(got) != 1 {
		t.Fatalf("clash peers %v, want only the former holder", got)
	}
}
