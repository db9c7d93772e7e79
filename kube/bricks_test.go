package kube

import (
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

func TestPlacementPrefersOwnZoneAndRefusesUsedZones(t *testing.T) {
	v, st, hi := replica3([3]bool{true, true, true}, [3]int64{0, 0, 0})
	vv := buildVolumeView(v, st, hi)
	peer := func(id, zone string) gd2.Peer {
		return gd2.Peer{ID: id, Online: true, Metadata: map[string]string{"_zone": zone}}
	}
	peers := []gd2.Peer{peer("a", "z1"), peer("b", "z2"), peer("c", "z3"), peer("d", "z1"), peer("e", "z4")}
	dev := func(p string, free uint64) gd2.Device {
		return gd2.Device{PeerID: p, Device: "/dev/sdb", State: gd2.DeviceEnabled, FreeSize: free}
	}
	brick := vv.Subvols[0].Bricks[0]
	zones, reason := placement(brick, vv, "a", peers, []gd2.Device{dev("d", 1000), dev("e", 1000)}, "z1", nil)
	if reason != "" || len(zones) != 1 || zones[0] != "z1" {
		t.Fatalf("want own zone z1 first, got %v %q", zones, reason)
	}
	zones, _ = placement(brick, vv, "a", peers, []gd2.Device{dev("d", 10), dev("e", 1000)}, "z1", nil)
	if len(zones) != 1 || zones[0] != "z4" {
		t.Fatalf("a full own-zone device must fall back to another free zone, got %v", zones)
	}
	_, reason = placement(brick, vv, "a", peers, []gd2.Device{dev("b", 1000), dev("c", 1000)}, "z1", nil)
	if reason == "" {
		t.Fatal("devices only in zones the volume already uses must not be offered")
	}
}
