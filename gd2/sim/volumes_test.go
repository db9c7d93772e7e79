package sim

import (
	"strings"
	"testing"
)

func TestVolumeLifecycleSmartReplicate(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	r := h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "vol1", Size: 1 << 30, Replica: 3})
	if loc := r.header.Get("Location"); loc != "/v1/volumes/vol1" {
		t.Errorf("Location = %q", loc)
	}
	var v wireVolume
	r.decode(t, &v)
	if v.State != "Created" || v.Type != "Replicate" || v.Subvols[0].Name != "vol1-replicate-0" || len(v.Subvols[0].Bricks) != 3 {
		t.Fatalf("unexpected volume %+v", v)
	}
	if v.Options[optSelfHeal] != "off" || v.Metadata["_brick-provision-type"] != "auto" || v.Capacity != 1<<30 {
		t.Errorf("options/metadata/capacity wrong: %+v", v)
	}
	if !strings.Contains(string(r.body), `"snap-list":[]`) {
		t.Errorf("snap-list should be []: %s", r.body)
	}
	zones := map[string]bool{}
	for _, b := range v.Subvols[0].Bricks {
		zones[b.PeerID] = true
		if b.Path != "/var/run/glusterd2/bricks/vol1/subvol1/brick"+b.Path[len(b.Path)-7:len(b.Path)-6]+"/brick" {
			t.Errorf("brick path %q", b.Path)
		}
	}
	if len(zones) != 3 {
		t.Errorf("bricks not on 3 peers: %+v", v.Subvols[0].Bricks)
	}
	h.must(400, "POST", "/v1/volumes", wireVolCreateReq{Name: "vol1", Size: 1 << 30, Replica: 3})
	h.must(400, "POST", "/v1/volumes/vol1/stop", nil)
	h.must(400, "GET", "/v1/volumes/vol1/status", nil)
	h.must(200, "POST", "/v1/volumes/vol1/start", nil)
	if got := h.do("POST", "/v1/volumes/vol1/start", nil); got.status != 400 || got.errMsg(t) != msgVolAlreadyStarted {
		t.Errorf("second start: %d %s", got.status, got.body)
	}
	h.must(200, "POST", "/v1/volumes/vol1/start", wireVolStartReq{ForceStartBricks: true})
	var st wireVolumeStatus
	h.must(200, "GET", "/v1/volumes/vol1/status", nil).decode(t, &st)
	// statfs of the FUSE mount: the bricks' size less the XFS log, with a
	// fresh file system's few blocks already used.
	if !st.Online || st.Size.Capacity != 1<<30-10*mib || st.Size.Used == 0 || st.Size.Used > 64*mib || st.Size.Free != st.Size.Capacity-st.Size.Used {
		t.Errorf("status %+v", st)
	}
	var bs []wireBrickStatus
	h.must(200, "GET", "/v1/volumes/vol1/bricks", nil).decode(t, &bs)
	for _, b := range bs {
		if !b.Online || b.Port == 0 || b.PID == 0 {
			t.Errorf("brick status %+v", b)
		}
	}
	if got := h.do("DELETE", "/v1/volumes/vol1", nil); got.status != 400 || got.errMsg(t) != msgVolDeleteStarted {
		t.Errorf("delete started: %d %s", got.status, got.body)
	}
	h.must(200, "POST", "/v1/volumes/vol1/stop", nil)
	if got := h.do("POST", "/v1/volumes/vol1/stop", nil); got.errMsg(t) != msgVolAlreadyStopped {
		t.Errorf("second stop: %s", got.body)
	}
	r = h.must(204, "DELETE", "/v1/volumes/vol1", nil)
	if len(r.body) != 0 || r.header.Get("Content-Type") != "" {
		t.Errorf("204 must have no body: %q %q", r.body, r.header.Get("Content-Type"))
	}
	h.must(404, "GET", "/v1/volumes/vol1", nil)
	if got := h.must(200, "GET", "/v1/volumes", nil); strings.TrimSpace(string(got.body)) != "[]" {
		t.Errorf("empty volume list = %s", got.body)
	}
	var devs []wireDevice
	h.must(200, "GET", "/v1/devices", nil).decode(t, &devs)
	for _, d := range devs {
		if d.FreeSize != d.TotalSize {
			t.Errorf("device %s not fully returned: %+v", d.Device, d)
		}
	}
}

func TestVolumeCreateManualAndErrors(t *testing.T) {
	h := newHarness(t, Config{Peers: 2})
	ps := h.peers()
	req := wireVolCreateReq{Name: "m", Subvols: []wireSubvolReq{{Type: "replicate", Replica: 2, Bricks: []wireBrickReq{
		{PeerID: ps[0].ID, Path: "/b/1"}, {PeerID: ps[1].ID, Path: "b/1"},
	}}}}
	var v wireVolume
	h.must(201, "POST", "/v1/volumes", req).decode(t, &v)
	if v.Subvols[0].Bricks[1].Path != "/b/1" || v.Metadata["_brick-provision-type"] != "" || v.Capacity != 0 {
		t.Errorf("manual volume %+v", v)
	}
	cases := []struct {
		name   string
		req    wireVolCreateReq
		status int
		msg    string
	}{
		{"bad name", wireVolCreateReq{Name: "a b", Size: 1 << 30}, 400, msgInvalidVolName},
		{"duplicate brick", wireVolCreateReq{Name: "d", Subvols: []wireSubvolReq{{Type: "distribute", Bricks: []wireBrickReq{
			{PeerID: ps[0].ID, Path: "/x"}, {PeerID: ps[0].ID, Path: "/x/"}}}}}, 400, msgDupBrick},
		{"bad multiple", wireVolCreateReq{Name: "e", Subvols: []wireSubvolReq{{Type: "replicate", Replica: 2, Bricks: []wireBrickReq{
			{PeerID: ps[0].ID, Path: "/y"}}}}}, 500, msgCreateBrickCount},
		{"brick in use", wireVolCreateReq{Name: "f", Subvols: []wireSubvolReq{{Type: "distribute", Bricks: []wireBrickReq{
			{PeerID: ps[0].ID, Path: "/b/1"}}}}}, 500, msgBrickInUse},
		{"no devices", wireVolCreateReq{Name: "g", Size: 1 << 30}, 500, msgNoDevices},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/volumes", tc.req)
			if r.status != tc.status || !strings.HasPrefix(r.errMsg(t), tc.msg) {
				t.Errorf("got %d %s, want %d %q", r.status, r.body, tc.status, tc.msg)
			}
		})
	}
	if r := h.do("POST", "/v1/volumes", "{"); r.status != 400 || r.errMsg(t) != msgParse {
		t.Errorf("bad json: %d %s", r.status, r.body)
	}
}

// Volume status and bricks status agree with each other as statfs would
// (fact sheet §5): the volume's capacity is its sets' combined from the
// bricks' statfs, the used bytes set on the volume show on every copy,
// and a brick on an unreachable node carries only its info.
func TestVolumeAndBricksStatusSizesAgree(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Secret: "-"})
	ps := h.peers()
	req := wireVolCreateReq{Name: "dr", Subvols: []wireSubvolReq{
		{Type: "replicate", Replica: 2, Bricks: []wireBrickReq{{PeerID: ps[0].ID, Path: "/b/1"}, {PeerID: ps[1].ID, Path: "/b/1"}}},
		{Type: "replicate", Replica: 2, Bricks: []wireBrickReq{{PeerID: ps[2].ID, Path: "/b/1"}, {PeerID: ps[3].ID, Path: "/b/1"}}},
	}}
	h.must(201, "POST", "/v1/volumes", req)
	h.must(200, "POST", "/v1/volumes/dr/start", nil)
	const used = 3 << 30
	if err := h.sim.SetVolumeUsed("dr", used); err != nil {
		t.Fatal(err)
	}
	var st wireVolumeStatus
	h.must(200, "GET", "/v1/volumes/dr/status", nil).decode(t, &st)
	var bs []wireBrickStatus
	h.must(200, "GET", "/v1/volumes/dr/bricks", nil).decode(t, &bs)
	if len(bs) != 4 {
		t.Fatalf("%d bricks", len(bs))
	}
	brick := bs[0].Size.Capacity
	if brick == 0 || brick >= defaultManualBrickSize || st.Size.Capacity != 2*brick {
		t.Fatalf("volume capacity %d, brick capacity %d: want twice the brick's", st.Size.Capacity, brick)
	}
	if st.Size.Used != used || st.Size.Free != st.Size.Capacity-used {
		t.Fatalf("volume size %+v, want %d used", st.Size, used)
	}
	var sum uint64
	for _, b := range bs {
		if !b.Online || b.Size.Capacity != brick || b.Size.Used+b.Size.Free != b.Size.Capacity {
			t.Errorf("brick %+v", b)
		}
		sum += b.Size.Used
	}
	if sum != 2*used {
		t.Errorf("bricks hold %d bytes, want both copies of %d", sum, used)
	}

	if err := h.sim.SetPeerAlive(ps[3].ID, false); err != nil {
		t.Fatal(err)
	}
	h.must(200, "GET", "/v1/volumes/dr/bricks", nil).decode(t, &bs)
	for _, b := range bs {
		if b.Info.PeerID == ps[3].ID && (b.Online || b.Size != (wireSize{}) || b.Device != "") {
			t.Errorf("brick on the dead peer %+v, want only its info", b)
		}
	}
}
