package sim

import (
	"strings"
	"testing"
)

func cands(zones ...string) []candidate {
	var out []candidate
	for i, z := range zones {
		out = append(out, candidate{PeerID: string(rune('a' + i)), Host: "h", Zone: z, Device: "/dev/sdb", Free: 100 * gib})
	}
	return out
}

func TestPlannerZones(t *testing.T) {
	cases := []struct {
		name    string
		req     planRequest
		zones   []string
		wantErr string
		subvols int
	}{
		{"replica 3 on 3 zones", planRequest{Volume: "v", Size: gib, Replica: 3, Factor: 1}, []string{"z1", "z2", "z3"}, "", 1},
		{"replica 3 on 2 zones fails", planRequest{Volume: "v", Size: gib, Replica: 3, Factor: 1}, []string{"z1", "z2", "z2"}, msgNoSpace, 0},
		{"2x3 needs 6 zones", planRequest{Volume: "v", Size: 2 * gib, Replica: 3, Distribute: 2, Factor: 1}, []string{"z1", "z2", "z3", "z4", "z5"}, msgNoSpace, 0},
		{"2x3 with overlap on 3 zones", planRequest{Volume: "v", Size: 2 * gib, Replica: 3, Distribute: 2, Factor: 1, SubvolZonesOverlap: true}, []string{"z1", "z2", "z3"}, "", 2},
		{"max brick size splits subvols", planRequest{Volume: "v", Size: 3 * gib, Replica: 1, MaxBrickSize: gib, Factor: 1}, []string{"z1", "z2", "z3"}, "", 3},
		{"replica 4 invalid", planRequest{Volume: "v", Size: gib, Replica: 4, Factor: 1}, []string{"z1"}, msgInvalidReplica, 0},
		{"tiny bricks", planRequest{Volume: "v", Size: 30 * mib, Replica: 1, Distribute: 2, Factor: 1}, []string{"z1", "z2"}, msgBrickTooSmall, 0},
		{"no candidates", planRequest{Volume: "v", Size: gib, Factor: 1}, nil, msgNoDevices, 0},
		{"arbiter", planRequest{Volume: "v", Size: gib, Replica: 2, Arbiter: 1, Factor: 1}, []string{"z1", "z2", "z3"}, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := plan(tc.req, cands(tc.zones...))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != tc.subvols {
				t.Fatalf("%d subvols, want %d", len(got), tc.subvols)
			}
			used := map[string]bool{}
			for _, sv := range got {
				if tc.req.SubvolZonesOverlap {
					used = map[string]bool{}
				}
				for _, b := range sv.Bricks {
					if used[b.Zone] {
						t.Errorf("zone %s reused", b.Zone)
					}
					used[b.Zone] = true
				}
			}
			if tc.req.Arbiter == 1 {
				last := got[0].Bricks[2]
				if last.Type != brickTypeArbiter || last.Size >= got[0].Bricks[0].Size {
					t.Errorf("arbiter brick %+v", last)
				}
			}
		})
	}
}

func TestBrickSizes(t *testing.T) {
	u, tot := brickSizes(gib+100, 1)
	if u != gib || tot != gib+5368320 { // meta = align512(0.5 % of 1 GiB)
		t.Errorf("usable %d total %d", u, tot)
	}
	_, tot2 := brickSizes(gib, 2)
	if tot2 <= 2*gib {
		t.Errorf("snapshot factor not applied: %d", tot2)
	}
}

func TestDeviceBookkeeping(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3, DevicesPerPeer: 1, DeviceSize: 10 * gib})
	ps := h.peers()
	r := h.must(201, "POST", "/v1/devices/"+ps[0].ID, wireDeviceAddReq{Device: "/dev/sdb"})
	if r.header.Get("Location") != "/v1/devices/"+ps[0].ID+"/dev/sdb" {
		t.Errorf("location %q", r.header.Get("Location"))
	}
	if r := h.do("POST", "/v1/devices/"+ps[0].ID, wireDeviceAddReq{Device: "/dev/sdb"}); r.status != 400 || r.errMsg(t) != msgDeviceExists {
		t.Errorf("dup device: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/devices/"+ps[0].ID, wireDeviceAddReq{Device: "/dev/sdz"}); r.status != 500 || r.errMsg(t) != msgDevicePrepare {
		t.Errorf("missing disk: %d %s", r.status, r.body)
	}
	h.must(404, "POST", "/v1/devices/00000000-0000-4000-8000-000000000000", wireDeviceAddReq{Device: "/dev/sdb"})
	h.must(400, "GET", "/v1/devices/nope", nil)
	if r := h.must(200, "GET", "/v1/devices/"+ps[1].ID, nil); strings.TrimSpace(string(r.body)) != "null" {
		t.Errorf("empty device list = %s", r.body)
	}
	if r := h.do("GET", "/v1/devices/"+ps[0].ID+"/dev/sdc", nil); r.status != 500 || r.errMsg(t) != msgDeviceNotExist {
		t.Errorf("missing device get: %d %s", r.status, r.body)
	}
	for _, p := range ps[1:] {
		h.must(201, "POST", "/v1/devices/"+p.ID, wireDeviceAddReq{Device: "/dev/sdb"})
	}
	var v wireVolume
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 2 * gib, Replica: 3}).decode(t, &v)
	_, total := brickSizes(2*gib, 1)
	var one []wireDevice
	h.must(200, "GET", "/v1/devices/"+ps[0].ID+"/dev/sdb", nil).decode(t, &one)
	if len(one) != 1 || one[0].TotalSize-one[0].FreeSize != total || one[0].UsedSize != total {
		t.Errorf("device after create %+v, want used %d", one, total)
	}
	// Disabled devices are skipped by the planner.
	r = h.must(200, "POST", "/v1/devices/"+ps[0].ID+"/dev/sdb", wireDeviceEditReq{State: "disabled"})
	if len(r.body) != 0 {
		t.Errorf("device edit body %q", r.body)
	}
	h.must(400, "POST", "/v1/devices/"+ps[0].ID+"/dev/sdb", wireDeviceEditReq{State: "gone"})
	if r := h.do("POST", "/v1/volumes", wireVolCreateReq{Name: "w", Size: gib, Replica: 3}); r.status != 500 {
		t.Errorf("create with a disabled device: %d %s", r.status, r.body)
	}
	// In-place expand takes more from each brick's device.
	h.must(200, "POST", "/v1/devices/"+ps[0].ID+"/dev/sdb", wireDeviceEditReq{State: "enabled"})
	h.must(200, "POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: gib, Distribute: 1})
	if got := h.volume("v").Capacity; got != 3*gib {
		t.Errorf("capacity after grow %d", got)
	}
	if r := h.do("POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: 100 * gib, Distribute: 1}); r.status != 400 || r.errMsg(t) != msgSpaceNotSufficient {
		t.Errorf("grow past device: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/volumes/none/expand", wireVolExpandReq{Size: gib, Distribute: 1}); r.status != 500 {
		t.Errorf("expand missing volume: %d", r.status)
	}
	h.must(204, "DELETE", "/v1/volumes/v", nil)
	var all []wireDevice
	h.must(200, "GET", "/v1/devices", nil).decode(t, &all)
	for _, d := range all {
		if d.FreeSize != d.TotalSize {
			t.Errorf("space not returned: %+v", d)
		}
	}
}

// GD2's planner (bricksplanner.getAvailableVgs) skips a disabled device,
// so a node whose devices anthill disabled (maintenance, a drain, an
// upgrade about to restart it) gets no brick of a new volume; a create
// that only such a node could complete is refused as any unplaceable
// create is, and succeeds again once the device is enabled.
func TestPlannerPlacesNothingOnDisabledDevices(t *testing.T) {
	h := newHarness(t, Config{Peers: 6, Zones: 3, DevicesPerPeer: 1, DeviceSize: 10 * gib})
	h.registerAll()
	ps := h.peers()
	closed := ps[0]
	var sibling string
	for _, p := range ps[1:] {
		if p.Metadata["_zone"] == closed.Metadata["_zone"] {
			sibling = p.ID
		}
	}
	if sibling == "" {
		t.Fatalf("no other peer in %s's zone: %+v", closed.Metadata["_zone"], ps)
	}
	dev := devicePaths(1)[0]
	h.must(200, "POST", "/v1/devices/"+closed.ID+dev, wireDeviceEditReq{State: "disabled"})

	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "free", Size: gib, Replica: 3})
	for _, b := range h.volume("free").Subvols[0].Bricks {
		if b.PeerID == closed.ID {
			t.Errorf("a brick of the new volume landed on the peer whose device is disabled: %+v", b)
		}
	}
	if r := h.do("POST", "/v1/volumes", wireVolCreateReq{Name: "narrow", Size: gib, Replica: 3, ExcludePeers: []string{sibling}}); r.status != 500 || r.errMsg(t) != msgNoSpace {
		t.Errorf("a create only the disabled device could complete: %d %s, want 500 %q", r.status, r.body, msgNoSpace)
	}
	for _, p := range ps {
		h.must(200, "POST", "/v1/devices/"+p.ID+dev, wireDeviceEditReq{State: "disabled"})
	}
	if r := h.do("POST", "/v1/volumes", wireVolCreateReq{Name: "none", Size: gib, Replica: 3}); r.status != 500 || r.errMsg(t) != msgNoDevices {
		t.Errorf("a create with every device disabled: %d %s, want 500 %q", r.status, r.body, msgNoDevices)
	}
	for _, p := range ps {
		h.must(200, "POST", "/v1/devices/"+p.ID+dev, wireDeviceEditReq{State: "enabled"})
	}
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "narrow", Size: gib, Replica: 3, ExcludePeers: []string{sibling}})
	on := false
	for _, b := range h.volume("narrow").Subvols[0].Bricks {
		on = on || b.PeerID == closed.ID
	}
	if !on {
		t.Errorf("the create refused while the device was disabled placed no brick on it once enabled: %+v", h.volume("narrow").Subvols)
	}
}
