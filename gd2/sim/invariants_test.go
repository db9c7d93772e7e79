package sim

import (
	"testing"
)

func TestInvariantUnsafeReplaceDetected(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4, WriteRate: 1})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2, ExcludePeers: nil})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	a, b := v.Subvols[0].Bricks[0], v.Subvols[0].Bricks[1]
	// b misses writes while down; after it returns (shd off) it is still
	// stale, so a is the only good copy. Replacing a loses data.
	if err := h.sim.SetPeerAlive(b.PeerID, false); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.Write("v", 10); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.SetPeerAlive(b.PeerID, true); err != nil {
		t.Fatal(err)
	}
	h.mustAt(a.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: a.PeerID, SrcBrickPath: a.Path})
	vs := h.sim.Violations()
	if len(vs) != 1 || vs[0].Kind != ViolationUnsafeBrickReplace || vs[0].Rejected || vs[0].Volume != "v" {
		t.Fatalf("violations %+v", vs)
	}
	var got []Violation
	r := h.must(200, "GET", "/sim/violations", nil)
	r.decode(t, &got)
	if len(got) != 1 || got[0].Op != "POST /v1/volumes/v/replacebrick" {
		t.Errorf("GET /sim/violations %s", r.body)
	}
}

// A dead peer's brick cannot be replaced: the v1 liveness gate covers the
// source's own node. The attempt was safe (two healthy copies), so nothing
// is recorded either.
func TestInvariantReplaceOfDownBrickRefusedNotRecorded(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	dead := v.Subvols[0].Bricks[2]
	if err := h.sim.SetPeerAlive(dead.PeerID, false); err != nil {
		t.Fatal(err)
	}
	r := h.do("POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: dead.PeerID, SrcBrickPath: dead.Path})
	if r.status != 500 || r.errMsg(t) != "node "+dead.PeerID+" is probably down" {
		t.Fatalf("replace of a dead brick: %d %s", r.status, r.body)
	}
	if got := h.volume("v").Subvols[0].Bricks[2]; got.ID != dead.ID {
		t.Errorf("refused replace changed the volume: %+v", got)
	}
	if vs := h.sim.Violations(); len(vs) != 0 {
		t.Errorf("a safe attempt was recorded: %+v", vs)
	}
}

func TestInvariantRejectedUnsafeReplaceRecorded(t *testing.T) {
	// Three zones only: no zone is free for the new brick, so the replace
	// fails, but the replica set had no other good copy: recorded Rejected.
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	bs := v.Subvols[0].Bricks
	for _, b := range bs[1:] {
		if b.PeerID == h.do("GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id") {
			t.Skip("serving peer would go down")
		}
	}
	if err := h.sim.SetPeerAlive(bs[1].PeerID, false); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.SetPeerAlive(bs[2].PeerID, false); err != nil {
		t.Fatal(err)
	}
	r := h.do("POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: bs[0].PeerID, SrcBrickPath: bs[0].Path})
	if r.status != 500 {
		t.Fatalf("replace: %d %s", r.status, r.body)
	}
	vs := h.sim.Violations()
	if len(vs) != 1 || !vs[0].Rejected || vs[0].Kind != ViolationUnsafeBrickReplace {
		t.Errorf("violations %+v", vs)
	}
}
