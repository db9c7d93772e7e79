package sim

import "testing"

func TestXFSLogFollowsMkfsDefaults(t *testing.T) {
	tests := []struct {
		name string
		size uint64
		log  uint64
	}{
		{"a brick under 1 GiB gets the minimum log", 512 * mib, xfsMinLogBlocks * xfsBlock},
		{"a brick of 1 to 16 GiB gets the 10 MiB log", 10 * gib, 10 * mib},
		{"a brick of 16 GiB and more gets 1/2048 of its size", 100 * gib, 50 * mib},
		{"a huge brick's log stops at 2 GiB", 8 << 40, 2 * gib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := xfsLogBytes(tt.size); got != tt.log {
				t.Fatalf("log of %d bytes: %d, want %d", tt.size, got, tt.log)
			}
			capacity, used := xfsFresh(tt.size)
			if capacity != tt.size-tt.log {
				t.Fatalf("capacity %d, want the size less the log %d", capacity, tt.size-tt.log)
			}
			if used == 0 || used > 40*mib {
				t.Fatalf("a fresh file system uses %d bytes, want a few MiB", used)
			}
		})
	}
}

// statusOfBrick returns bricks-status of the brick at peer:path.
func (h *harness) statusOfBrick(vol, peerID, path string) wireBrickStatus {
	h.t.Helper()
	var bs []wireBrickStatus
	h.must(200, "GET", "/v1/volumes/"+vol+"/bricks", nil).decode(h.t, &bs)
	for _, b := range bs {
		if b.Info.PeerID == peerID && b.Info.Path == path {
			return b
		}
	}
	h.t.Fatalf("no brick %s:%s in %s", peerID, path, vol)
	return wireBrickStatus{}
}

func TestXFSBrickLosesItsLogAndEachReplacementShrinksByOne(t *testing.T) {
	h := replSetup(t, Config{Peers: 5, Zones: 5})
	const size = 20 * gib
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: size, Replica: 2})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	src := h.volume("v").Subvols[0].Bricks[0]
	st := h.statusOfBrick("v", src.PeerID, src.Path)
	capacity := uint64(size - size/2048)
	if st.Size.Capacity != capacity || st.Size.Used == 0 || st.Size.Free != st.Size.Capacity-st.Size.Used {
		t.Fatalf("new brick %+v, want capacity %d (size less the log) with a little used", st.Size, capacity)
	}
	for hop := 1; hop <= 3; hop++ {
		h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
		src = h.volume("v").Subvols[0].Bricks[0]
		// GD2 makes the replacement as large as the source's statfs
		// capacity; its own log then comes off that.
		want := capacity - xfsLogBytes(capacity)
		if got := h.brickSize("v", 0, 0); got != capacity {
			t.Fatalf("hop %d: replacement made with %d bytes, want the source's capacity %d", hop, got, capacity)
		}
		if st := h.statusOfBrick("v", src.PeerID, src.Path); st.Size.Capacity != want {
			t.Fatalf("hop %d: capacity %d, want %d", hop, st.Size.Capacity, want)
		}
		capacity = want
	}
}
