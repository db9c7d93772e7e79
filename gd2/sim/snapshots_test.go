package sim

import (
	"strings"
	"testing"
)

// smartStarted creates and starts a replica-3 smart LVM volume.
func smartStarted(h *harness, name string) wireVolume {
	h.t.Helper()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: name, Size: 1 << 30, Replica: 3, Metadata: map[string]string{"VolumeOwner": "org.gluster.glusterfs"}})
	h.must(200, "POST", "/v1/volumes/"+name+"/start", nil)
	return h.volume(name)
}

func wantErr(t *testing.T, r response, status int, msg string) {
	t.Helper()
	if r.status != status || r.errMsg(t) != msg {
		t.Fatalf("got %d %s, want %d %q", r.status, r.body, status, msg)
	}
}

func TestSnapshotRefusalsComeBeforeAnyChange(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "cold", Size: 1 << 30, Replica: 3})
	smartStarted(h, "v")

	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{SnapName: "s"}), 400, msgEmptyVolName)
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v"}), 400, msgEmptySnapName)
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v", SnapName: "a/b"}), 400, msgInvalidSnapName)
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "nope", SnapName: "s"}), 422, msgVolumeNotFound)
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "cold", SnapName: "s"}), 422, msgVolNotStarted)

	h.sim.HoldLock("v", true)
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v", SnapName: "s"}), 409, msgLock)
	h.sim.HoldLock("v", false)

	ps := h.peers()
	if err := h.sim.SetPeerAlive(ps[1].ID, false); err != nil {
		t.Fatal(err)
	}
	r := h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v", SnapName: "s"})
	if r.status != 500 || !strings.Contains(r.errMsg(t), "is probably down") {
		t.Fatalf("node down: %d %s", r.status, r.body)
	}
	if err := h.sim.SetPeerAlive(ps[1].ID, true); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/v1/volumes/v/start", wireVolStartReq{ForceStartBricks: true})

	var none []wireSnapList
	h.must(200, "GET", "/v1/snapshots", nil).decode(t, &none)
	if len(none) != 0 || len(h.volume("v").SnapList) != 0 {
		t.Fatalf("a refused create left a snapshot: %+v", none)
	}
	h.must(201, "POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v", SnapName: "s"})
	wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "v", SnapName: "s"}), 422, msgSnapExists)
}

func TestSnapshotsNeedThinLVBricks(t *testing.T) {
	t.Run("loop-provisioned volumes are refused before any step", func(t *testing.T) {
		h := loopSetup(t, 3, 0)
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "lv", Size: 1 << 30, Replica: 3, Provisioner: provLoop})
		h.must(200, "POST", "/v1/volumes/lv/start", nil)
		wantErr(t, h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "lv", SnapName: "s"}), 500, msgSnapNotSupported)
	})
	t.Run("bricks given explicitly fail the Validate step on their nodes", func(t *testing.T) {
		h := newHarness(t, Config{Peers: 3, Zones: 3})
		ps := h.peers()
		h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "m", Subvols: []wireSubvolReq{{Type: "replicate", Replica: 2, Bricks: []wireBrickReq{
			{PeerID: ps[0].ID, Path: "/b1"}, {PeerID: ps[1].ID, Path: "/b2"}}}}})
		h.must(200, "POST", "/v1/volumes/m/start", nil)
		r := h.do("POST", "/v1/snapshots", wireSnapCreateReq{VolName: "m", SnapName: "s"})
		var e wireErrorResp
		r.decode(t, &e)
		if r.status != 500 || len(e.Errors) != 2 {
			t.Fatalf("manual bricks: %d %s", r.status, r.body)
		}
		for _, it := range e.Errors {
			if it.Code != 2 || it.Fields["step"] != stepSnapValidate || it.Fields["error"] != msgLvsNotAnLV {
				t.Errorf("item %+v", it)
			}
		}
	})
}

func TestSnapshotLifecycleAsTheCSIDriverDrivesIt(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	parent := smartStarted(h, "pvc-1")
	if err := h.sim.SetVolumeUsed("pvc-1", 300<<20); err != nil {
		t.Fatal(err)
	}

	r := h.must(201, "POST", "/v1/snapshots", wireSnapCreateReq{VolName: "pvc-1", SnapName: "snap-1", Force: true})
	if loc := r.header.Get("Location"); loc != "/v1/snapshots/snap-1" {
		t.Errorf("Location %q", loc)
	}
	var sn wireSnapInfo
	r.decode(t, &sn)
	if sn.Parent != "pvc-1" || sn.VolInfo.Name != "snap-1" || sn.VolInfo.State != volCreated || sn.VolInfo.Capacity != parent.Capacity ||
		sn.VolInfo.Metadata["_brick-provision-type"] != "snapshot" || sn.VolInfo.Options["features/read-only"] != "on" || sn.CreatedAt.IsZero() {
		t.Fatalf("snapshot %+v", sn)
	}
	if b := sn.VolInfo.Subvols[0].Bricks[0]; b.Path != "/var/run/glusterd2/snaps/snap-1/pvc-1/subvol1/brick1/brick" || b.PeerID != parent.Subvols[0].Bricks[0].PeerID {
		t.Errorf("snapshot brick %+v", b)
	}
	if got := h.volume("pvc-1").SnapList; len(got) != 1 || got[0] != "snap-1" {
		t.Fatalf("parent snap-list %v", got)
	}

	wantErr(t, h.do("POST", "/v1/snapshots/snap-1/clone", wireSnapCloneReq{CloneName: "pvc-2"}), 400, msgCloneSnapNotActive)
	h.must(200, "POST", "/v1/snapshots/snap-1/activate", wireSnapActivateReq{Force: true})
	wantErr(t, h.do("POST", "/v1/snapshots/snap-1/activate", nil), 400, msgSnapActivated)
	h.must(200, "POST", "/v1/snapshots/snap-1/activate", wireSnapActivateReq{Force: true})

	var all, one []wireSnapList
	h.must(200, "GET", "/v1/snapshots", nil).decode(t, &all)
	h.must(200, "GET", "/v1/snapshots?volume=pvc-1", nil).decode(t, &one)
	if len(all) != 1 || len(one) != 1 || one[0].Parent != "pvc-1" || len(one[0].Snaps) != 1 || one[0].Snaps[0].VolInfo.State != volStarted {
		t.Fatalf("lists %+v / %+v", all, one)
	}
	wantErr(t, h.do("GET", "/v1/snapshots?volume=nope", nil), 404, msgVolumeNotFound)
	wantErr(t, h.do("GET", "/v1/snapshots/nope", nil), 404, msgSnapNotFound)

	// Restore: clone the active snapshot into a new volume.
	wantErr(t, h.do("POST", "/v1/snapshots/snap-1/clone", wireSnapCloneReq{CloneName: "pvc-1"}), 400, msgCloneNameExists)
	wantErr(t, h.do("POST", "/v1/snapshots/nope/clone", wireSnapCloneReq{CloneName: "pvc-9"}), 500, msgSnapNotFound)
	r = h.must(201, "POST", "/v1/snapshots/snap-1/clone", wireSnapCloneReq{CloneName: "pvc-2"})
	if loc := r.header.Get("Location"); loc != "/v1/snapshots/snap-1/clone/pvc-2" {
		t.Errorf("clone Location %q", loc)
	}
	var clone wireVolume
	r.decode(t, &clone)
	if clone.State != volCreated || clone.Capacity != parent.Capacity || clone.Metadata["VolumeOwner"] != "org.gluster.glusterfs" ||
		clone.Metadata["_brick-provision-type"] != "snapshot" || clone.Options["features/read-only"] != "" ||
		clone.Subvols[0].Bricks[0].Path != "/var/run/glusterd2/clones/pvc-2/subvol1/brick1/brick" {
		t.Fatalf("clone %+v", clone)
	}
	h.must(200, "POST", "/v1/volumes/pvc-2/start", wireVolStartReq{ForceStartBricks: true})
	var st wireVolumeStatus
	h.must(200, "GET", "/v1/volumes/pvc-2/status", nil).decode(t, &st)
	if st.Size.Used < 300<<20 {
		t.Errorf("the clone lost the snapshot's data: %+v", st.Size)
	}

	// A volume with snapshots cannot be deleted; the snapshot can.
	h.must(200, "POST", "/v1/volumes/pvc-1/stop", nil)
	wantErr(t, h.do("DELETE", "/v1/volumes/pvc-1", nil), 424, "cannot delete Volume pvc-1 ,as it has 1 snapshots")
	h.must(200, "POST", "/v1/snapshots/snap-1/deactivate", nil)
	wantErr(t, h.do("POST", "/v1/snapshots/snap-1/deactivate", nil), 400, msgSnapDeactivated)
	h.must(204, "DELETE", "/v1/snapshots/snap-1", nil)
	wantErr(t, h.do("POST", "/v1/snapshots/snap-1/deactivate", nil), 500, msgSnapNotFound)
	wantErr(t, h.do("DELETE", "/v1/snapshots/snap-1", nil), 500, msgSnapNotFound)
	if got := h.volume("pvc-1").SnapList; len(got) != 0 {
		t.Fatalf("snap-list after delete %v", got)
	}
	h.must(204, "DELETE", "/v1/volumes/pvc-1", nil)
	// The clone lives on in the parent's thin pools.
	if h.volume("pvc-2").State != volStarted {
		t.Fatal("clone gone with its parent")
	}
}
