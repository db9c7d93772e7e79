package gather

import (
	"slices"
	"testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The rules themselves are tested over facts in package states
// (states/bricks_test.go, states/brick_placement_test.go); these tests
// check the conversion of GD2's answers into those facts.

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

func TestVolumeFactsFromGD2Answers(t *testing.T) {
	v, st, hi := replica3([3]bool{true, true, false}, [3]int64{9, 0, -1})
	v.Subvols[0].Bricks[1].Type = gd2.BrickTypeArbiter
	hi[0].EntriesInSplitBrain = i64(2)
	got := VolumeFacts(v, st, hi)
	want := states.VolumeFacts{Name: "vol", Started: true, Subvols: []states.SubvolFacts{{Name: "vol-replicate-0", Replica: true, Bricks: []states.BrickFacts{
		{Path: "/b/a", PeerID: "a", Online: true, Pending: 9, SplitBrain: 2, Size: 100},
		{Path: "/b/b", PeerID: "b", Arbiter: true, Online: true, Pending: 0, Size: 100},
		// Heal-info answers "-" for the host of a down brick: no count.
		{Path: "/b/c", PeerID: "c", Pending: -1, Size: 100},
	}}}}
	if !equalVolumeFacts(got, want) {
		t.Fatalf("facts\n%+v\nwant\n%+v", got, want)
	}

	// A stopped volume has no status or heal-info: every brick is offline
	// with no count.
	v.State = gd2.VolumeStopped
	for _, b := range VolumeFacts(v, nil, nil).Subvols[0].Bricks {
		if b.Online || b.Pending != -1 {
			t.Fatalf("brick of a stopped volume: %+v", b)
		}
	}

	// Distribute bricks have no heal-info: an online one has nothing
	// pending. Disperse sets carry their data count.
	d := gd2.Volume{Name: "mix", State: gd2.VolumeStarted, Subvols: []gd2.Subvol{
		{Name: "mix-distribute-0", Type: gd2.SubvolDistribute, Bricks: []gd2.BrickInfo{{PeerID: "a", Path: "/b/d"}}},
		{Name: "mix-disperse-1", Type: gd2.SubvolDisperse, DisperseDataCount: 4, Bricks: []gd2.BrickInfo{{PeerID: "a", Path: "/b/e"}}},
	}}
	dst := []gd2.BrickStatus{{Info: d.Subvols[0].Bricks[0], Online: true}, {Info: d.Subvols[1].Bricks[0], Online: true}}
	df := VolumeFacts(d, dst, nil)
	if s := df.Subvols[0]; s.Replica || s.Bricks[0].Pending != 0 || !s.Bricks[0].Online {
		t.Fatalf("distribute facts %+v", s)
	}
	if s := df.Subvols[1]; !s.Replica || !s.Disperse || s.Data != 4 || s.Bricks[0].Pending != -1 {
		t.Fatalf("disperse facts %+v", s)
	}
}

func equalVolumeFacts(a, b states.VolumeFacts) bool {
	return a.Name == b.Name && a.Started == b.Started && slices.EqualFunc(a.Subvols, b.Subvols, func(x, y states.SubvolFacts) bool {
		return x.Name == y.Name && x.Replica == y.Replica && x.Disperse == y.Disperse && x.Data == y.Data && slices.Equal(x.Bricks, y.Bricks)
	})
}

// TestAnalysisOfGD2Answers runs the cases the analysis had when it read
// GD2 types directly through the conversion: the answers are the same.
func TestAnalysisOfGD2Answers(t *testing.T) {
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
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			v, st, hi := replica3(tc.online, tc.pending)
			got := states.AnalyzePeer(tc.peer, []states.VolumeFacts{VolumeFacts(v, st, hi)}, nil)
			g := want{got.OnPeer, got.Offline, got.SoleHealedCopies, got.QuorumAtRisk, len(got.Movable)}
			if g != tc.want {
				t.Fatalf("got %+v, want %+v", g, tc.want)
			}
		})
	}
}

func TestPeerAndDeviceFactsFromGD2Answers(t *testing.T) {
	peers := []gd2.Peer{
		{ID: "1", Name: "h1", Online: true, Metadata: map[string]string{gd2.ZoneKey: "z1", transitions.MetaNode: "ns/n1", transitions.MetaState: "Online"}},
		// Moved to its draining zone by a drain: it still sits in z2.
		{ID: "2", Name: "h2", Online: true, Metadata: map[string]string{gd2.ZoneKey: transitions.DrainingZone("z2"), effects.PeerMetaZone: "z2", transitions.MetaState: "Draining"}},
		// A recorded zone that is not the draining zone of the current
		// one is stale: GD2's zone wins.
		{ID: "3", Metadata: map[string]string{gd2.ZoneKey: "z4", effects.PeerMetaZone: "z3", transitions.MetaState: "Maintenance"}},
	}
	got := PeerFacts(peers)
	want := []states.PeerFacts{
		{ID: "1", Label: "ns/n1 (peer 1)", Zone: "z1", Online: true, MayReceive: true},
		{ID: "2", Label: "h2 (peer 2)", Zone: "z2-draining", HomeZone: "z2", Online: true, MayReceive: false},
		{ID: "3", Label: "peer 3", Zone: "z4", MayReceive: false},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("peer facts\n%+v\nwant\n%+v", got, want)
	}
	if z := got[1].PhysicalZone(); z != "z2" {
		t.Fatalf("physical zone of a drained peer %q, want z2", z)
	}
	dev := DeviceFacts([]gd2.Device{{PeerID: "1", State: gd2.DeviceEnabled, FreeSize: 7}, {PeerID: "2", State: gd2.DeviceDisabled, FreeSize: 9}})
	if !slices.Equal(dev, []states.DeviceFacts{{PeerID: "1", Enabled: true, Free: 7}, {PeerID: "2", Free: 9}}) {
		t.Fatalf("device facts %+v", dev)
	}
}
