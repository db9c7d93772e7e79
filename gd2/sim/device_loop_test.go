package sim

import (
	"testing"
)

const loopDir = "/srv/gluster-loop"

// loopSetup gives every member one directory on a 100 GiB file system and
// registers it with the loop provisioner.
func loopSetup(t *testing.T, peers int, otherFiles uint64) *harness {
	t.Helper()
	h := newHarness(t, Config{Peers: peers, Zones: peers})
	for _, hi := range h.sim.Hosts() {
		if err := h.sim.SetDeviceSizes(hi.Name, map[string]uint64{loopDir: 100 * gib}); err != nil {
			t.Fatal(err)
		}
		if err := h.sim.SetHostFSUsed(hi.Name, loopDir, otherFiles); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range h.peers() {
		h.must(201, "POST", "/v1/devices/"+p.ID, wireDeviceAddReq{Device: loopDir, Provisioner: provLoop})
	}
	return h
}

func (h *harness) loopDevice(peerID string) wireDevice {
	h.t.Helper()
	var ds []wireDevice
	h.must(200, "GET", "/v1/devices/"+peerID+loopDir, nil).decode(h.t, &ds)
	return ds[0]
}

func TestLoopDeviceSizesComeFromStatfsCrosswise(t *testing.T) {
	const otherFiles = 10 * gib
	h := loopSetup(t, 3, otherFiles)
	fsTotal, fsUsed := xfsFresh(100 * gib)
	fsFree := fsTotal - fsUsed - otherFiles
	p := h.peers()[0]
	d := h.loopDevice(p.ID)
	// GD2 stores the file system's total as free-size and its free as
	// total-size.
	if d.FreeSize != fsTotal || d.TotalSize != fsFree || d.UsedSize != fsTotal-fsFree || d.ExtentSize != 0 {
		t.Fatalf("loop device %+v, want free-size %d (statfs total), total-size %d (statfs free), used-size %d, no extent",
			d, fsTotal, fsFree, fsTotal-fsFree)
	}
	// A brick deducts its total size from free-size; used-size is then
	// total-size less free-size, wrapping around as unsigned numbers do.
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "lv", Size: 1 << 30, Replica: 3, Provisioner: provLoop})
	var bricks uint64
	{
		h.sim.mu.Lock()
		for _, b := range h.sim.m.Volumes["lv"].bricks() {
			if b.PeerID == p.ID {
				bricks += b.TotalSize
			}
		}
		h.sim.mu.Unlock()
	}
	after := h.loopDevice(p.ID)
	if after.FreeSize != fsTotal-bricks || after.TotalSize != fsFree || after.UsedSize != fsFree-(fsTotal-bricks) {
		t.Fatalf("after a brick of %d: %+v, want free-size %d and used-size %d (wrapped)", bricks, after, fsTotal-bricks, fsFree-(fsTotal-bricks))
	}
	// Deleting the volume gives it back, unclamped.
	h.must(204, "DELETE", "/v1/volumes/lv", nil)
	if back := h.loopDevice(p.ID); back.FreeSize != fsTotal || back.UsedSize != fsFree-fsTotal {
		t.Fatalf("after delete: %+v", back)
	}
}

func TestLoopReplaceBrickRetriedAfterAFailedPrepareReusesTheImage(t *testing.T) {
	h := loopSetup(t, 4, 0)
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3, Provisioner: provLoop})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	src := v.Subvols[0].Bricks[0]
	other := v.Subvols[0].Bricks[1].Host
	req := wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path}
	// Served by a node without the source brick: sized 0, mkfs fails and
	// the empty image stays behind.
	wantCode2(t, h.doAt(other, "POST", "/v1/volumes/v/replacebrick", req), stepPrepareBricks, msgBrickSizeZero)
	// Served by the source's own node the retry reopens that image and
	// succeeds (on LVM the leftover name would refuse it forever).
	h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", req)
	if nb := h.volume("v").Subvols[0].Bricks[0]; nb.PeerID == src.PeerID {
		t.Fatalf("brick did not move: %+v", nb)
	}
	if vs := h.sim.Violations(); len(vs) != 0 {
		t.Fatalf("violations %+v", vs)
	}
}

func TestLoopReplaceBrickOntoALiveBrickFailsAtMkfs(t *testing.T) {
	h := loopSetup(t, 4, 0)
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 2 << 30, Replica: 2, Distribute: 2, SubvolZonesOverlap: true, Provisioner: provLoop})
	v := h.volume("v")
	a := v.Subvols[0].Bricks[0] // image brick_v_s1_b1
	if v.Subvols[1].Bricks[0].PeerID != a.PeerID {
		t.Fatalf("overlap placed the subvols differently: %+v", v.Subvols)
	}
	s10 := v.Subvols[1].Bricks[0]
	h.mustAt(s10.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: s10.PeerID, SrcBrickPath: s10.Path, SubvolZonesOverlap: true})
	s11 := h.volume("v").Subvols[1].Bricks[1]
	r := h.doAt(s11.Host, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{
		SrcPeerID: s11.PeerID, SrcBrickPath: s11.Path, SubvolZonesOverlap: true, LimitPeers: []string{a.PeerID}})
	wantCode2(t, r, stepPrepareBricks, "mkfs.xfs: "+loopDir+"/tp_v_s1_b1/brick_v_s1_b1.img contains a mounted filesystem")
	damaged := 0
	for _, vi := range h.sim.Violations() {
		if vi.Kind == ViolationBrickDamaged && vi.Brick == a.Host+":"+a.Path {
			damaged++
		}
	}
	if damaged != 1 {
		t.Fatalf("violations %+v, want the live brick %s:%s damaged once", h.sim.Violations(), a.Host, a.Path)
	}
}
