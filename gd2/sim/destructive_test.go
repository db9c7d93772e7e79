package sim

import (
	"testing"
)

// A replace-brick sent twice for one source brick, and a peer delete sent
// twice for one peer, are each one success followed by a repeat: the log
// records both attempts under one target, whatever GD2 answered the second
// time.
func TestDestructiveCallsRecordRepeatsByTarget(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4, InitialFiles: 10})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	src := h.volume("v").Subvols[0].Bricks[0]
	req := wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path}
	h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", req)
	if r := h.doAt(src.Host, "POST", "/v1/volumes/v/replacebrick", req); r.status == 200 {
		t.Fatalf("a replace-brick of a brick that has moved succeeded: %s", r.body)
	}
	var extra wirePeer
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"extra"}}).decode(t, &extra)
	h.must(204, "DELETE", "/v1/peers/"+extra.ID, nil)
	if r := h.do("DELETE", "/v1/peers/"+extra.ID, nil); r.status != 404 {
		t.Fatalf("second peer delete: %d %s", r.status, r.body)
	}

	log := h.sim.DestructiveCalls()
	brick := "v " + src.PeerID + ":" + src.Path
	want := []struct {
		op, target string
		ok         bool
	}{{"ReplaceBrick", brick, true}, {"ReplaceBrick", brick, false}, {"DeletePeer", extra.ID, true}, {"DeletePeer", extra.ID, false}}
	if len(log) != len(want) {
		t.Fatalf("log %+v, want %d entries", log, len(want))
	}
	for i, w := range want {
		if log[i].Op != w.op || log[i].Target != w.target || log[i].OK != w.ok {
			t.Errorf("entry %d = %+v, want %s %q ok=%v", i, log[i], w.op, w.target, w.ok)
		}
	}
	rep := RepeatedDestructiveCalls(log)
	if len(rep) != 2 || rep[0].Again.Op != "ReplaceBrick" || rep[1].Again.Op != "DeletePeer" {
		t.Errorf("repeats %+v", rep)
	}
	if got := SucceededDestructiveCalls(log); got["ReplaceBrick"] != 1 || got["DeletePeer"] != 1 {
		t.Errorf("succeeded %v", got)
	}
	var served []DestructiveCall
	h.must(200, "GET", "/sim/destructive", nil).decode(t, &served)
	if len(served) != len(log) {
		t.Errorf("GET /sim/destructive has %d entries, want %d", len(served), len(log))
	}
}

// A call that failed and is retried is not a repeat; only a call after a
// success is.
func TestRepeatedDestructiveCallsIgnoresRetriesOfFailures(t *testing.T) {
	log := []DestructiveCall{
		{Op: "DeletePeer", Target: "p1", OK: false},
		{Op: "DeletePeer", Target: "p1", OK: true},
		{Op: "DeletePeer", Target: "p2", OK: true},
		{Op: "ReplaceBrick", Target: "p1", OK: true},
	}
	if rep := RepeatedDestructiveCalls(log); len(rep) != 0 {
		t.Errorf("repeats %+v", rep)
	}
	log = append(log, DestructiveCall{Op: "DeletePeer", Target: "p2", OK: false})
	if rep := RepeatedDestructiveCalls(log); len(rep) != 1 || rep[0].Again.Target != "p2" {
		t.Errorf("repeats %+v", rep)
	}
}
