package objects

import (
	"testing"

	"github.com/gluster/anthill/gd2"
)

// TestCountBricksCountsEachPeersBricksOverEveryVolume: a peer's count is
// its bricks in every subvolume of every volume; a peer with none is
// absent (0).
func TestCountBricksCountsEachPeersBricksOverEveryVolume(t *testing.T) {
	brick := func(peer string) gd2.BrickInfo { return gd2.BrickInfo{PeerID: peer, Path: "/b"} }
	vols := []gd2.Volume{
		{Name: "v1", Subvols: []gd2.Subvol{{Bricks: []gd2.BrickInfo{brick("p1"), brick("p2"), brick("p3")}}, {Bricks: []gd2.BrickInfo{brick("p1"), brick("p2"), brick("p4")}}}},
		{Name: "v2", Subvols: []gd2.Subvol{{Bricks: []gd2.BrickInfo{brick("p1")}}}},
	}
	got := CountBricks(vols)
	for peer, want := range map[string]int{"p1": 3, "p2": 2, "p3": 1, "p4": 1, "p5": 0} {
		if got[peer] != want {
			t.Errorf("peer %s holds %d bricks, want %d", peer, got[peer], want)
		}
	}
}
