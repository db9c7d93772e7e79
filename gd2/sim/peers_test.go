package sim

import (
	"strings"
	"testing"
)

func TestPeerAddJoinsWithNewIDAndZone(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	r := h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"mycluster-a-1.nodes.ns.svc"}, Zone: "z2", Metadata: map[string]string{"k": "v"}})
	var p wirePeer
	r.decode(t, &p)
	if r.header.Get("Location") != "/v1/peers/"+p.ID || !p.Online || p.PID != 0 {
		t.Errorf("add response: %s %s", r.header.Get("Location"), r.body)
	}
	if p.Name != "mycluster-a-1" || p.PeerAddresses[0] != "mycluster-a-1.nodes.ns.svc:24008" || p.Metadata["_zone"] != "z2" || p.Metadata["k"] != "v" {
		t.Errorf("peer %+v", p)
	}
	var got wirePeer
	h.must(200, "GET", "/v1/peers/"+p.ID, nil).decode(t, &got)
	if !got.Online || got.PID == 0 {
		t.Errorf("GET after add should be online with pid: %+v", got)
	}
	// The same address, with or without the default port, is a duplicate.
	r = h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"mycluster-a-1.nodes.ns.svc"}})
	if r.status != 409 || r.errMsg(t) != "Peer exists with given addresses (ID: "+p.ID+")" {
		t.Errorf("re-add: %d %s", r.status, r.body)
	}
	// Another spelling of the same node is tried as a join, which the
	// node (already in this cluster) refuses.
	r = h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"mycluster-a-1:24008"}})
	if r.status != 500 || r.errMsg(t) != msgOtherCluster {
		t.Errorf("re-add under another spelling: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{}); r.status != 400 || r.errMsg(t) != msgNoHostnames {
		t.Errorf("no address: %d %s", r.status, r.body)
	}
	// Default zone is the peer's own UUID.
	var p3 wirePeer
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"c"}}).decode(t, &p3)
	if p3.Metadata["_zone"] != p3.ID {
		t.Errorf("default zone %q want %q", p3.Metadata["_zone"], p3.ID)
	}
}

func TestPeerAddStrictHosts(t *testing.T) {
	h := newHarness(t, Config{Peers: 1, StrictHosts: true})
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"ghost"}}); r.status != 500 || !strings.HasPrefix(r.errMsg(t), msgConnect) {
		t.Errorf("unknown host: %d %s", r.status, r.body)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "real", Alive: false}); err != nil {
		t.Fatal(err)
	}
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"real.x.svc:24008"}}); r.status != 500 {
		t.Errorf("down host: %d %s", r.status, r.body)
	}
	if err := h.sim.SetHostAlive("real", true); err != nil {
		t.Fatal(err)
	}
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"real.x.svc:24008"}})
}

func TestBootstrapFirstAliveHostBecomesMember(t *testing.T) {
	h := newHarness(t, Config{StrictHosts: true})
	if r := h.do("GET", "/v1/peers", nil); r.status != 503 {
		t.Fatalf("no member: %d %s", r.status, r.body)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "c-a-0", Address: "c-a-0.c-nodes.ns.svc:24008", Alive: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "c-a-1", Address: "c-a-1.c-nodes.ns.svc:24008", Alive: true}); err != nil {
		t.Fatal(err)
	}
	ps := h.peers()
	if len(ps) != 1 || ps[0].Name != "c-a-0" {
		t.Fatalf("bootstrap peers %+v", ps)
	}
	r := h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"c-a-1.c-nodes.ns.svc"}})
	if r.header.Get("X-Gluster-Peer-Id") != ps[0].ID {
		t.Errorf("served by %q, want %q", r.header.Get("X-Gluster-Peer-Id"), ps[0].ID)
	}
}

func TestPeerMetadataLimitsAndEditMerge(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	big := map[string]string{"k": strings.Repeat("x", 4096)} // 1+4096 > 4096
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"b"}, Metadata: big}); r.status != 400 || r.errMsg(t) != msgMetadataTooLarge {
		t.Errorf("oversize add: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"b"}, Metadata: map[string]string{"_x": "1"}}); r.status != 400 || r.errMsg(t) != msgReservedKey {
		t.Errorf("reserved key: %d %s", r.status, r.body)
	}
	var p wirePeer
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"b"}, Metadata: map[string]string{"k": strings.Repeat("x", 4095)[:4000]}}).decode(t, &p)
	var e wirePeer
	h.must(200, "POST", "/v1/peers/"+p.ID, wirePeerEditReq{Metadata: map[string]string{"a": ""}, Zone: "zz"}).decode(t, &e)
	if e.Online || e.PID != 0 || e.Metadata["k"] == "" || e.Metadata["_zone"] != "zz" {
		t.Errorf("edit response %+v", e)
	}
	if v, ok := e.Metadata["a"]; !ok || v != "" {
		t.Errorf("empty value should be kept: %+v", e.Metadata)
	}
	if r := h.do("POST", "/v1/peers/"+p.ID, wirePeerEditReq{Metadata: map[string]string{"more": strings.Repeat("y", 100)}}); r.status != 500 || r.errMsg(t) != msgPeerEditFailed {
		t.Errorf("merged overflow: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/peers/"+p.ID, wirePeerEditReq{Metadata: map[string]string{"_zone": "x"}}); r.status != 400 {
		t.Errorf("edit reserved: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/peers/00000000-0000-4000-8000-000000000000", wirePeerEditReq{}); r.status != 500 || r.errMsg(t) != msgPeerEditFailed {
		t.Errorf("edit unknown: %d %s", r.status, r.body)
	}
	if r := h.do("POST", "/v1/peers/nope", wirePeerEditReq{}); r.status != 400 {
		t.Errorf("edit bad uuid: %d %s", r.status, r.body)
	}
}

func TestPeerListFilter(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"b"}, Metadata: map[string]string{"x": "1", "y": "1"}})
	count := func(q string) (int, string) {
		r := h.must(200, "GET", "/v1/peers"+q, nil)
		var ps []wirePeer
		r.decode(t, &ps)
		return len(ps), strings.TrimSpace(string(r.body))
	}
	if n, _ := count("?key=x"); n != 1 {
		t.Errorf("key filter: %d", n)
	}
	if n, _ := count("?value=1"); n != 2 {
		t.Errorf("value filter should repeat per key: %d", n)
	}
	if n, _ := count("?key=x&value=1"); n != 1 {
		t.Errorf("key+value: %d", n)
	}
	if _, body := count("?key=nope"); body != "null" {
		t.Errorf("empty filtered list = %s, want null", body)
	}
}

func TestPeerDeleteOrder(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4})
	h.via = "gd2-1" // "self" is the node the requests are addressed to
	h.registerAll()
	ps := h.peers()
	self := h.do("GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id")
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3, ExcludePeers: []string{self}})
	var withBricks, spare string
	v := h.volume("v")
	used := map[string]bool{}
	for _, b := range v.Subvols[0].Bricks {
		used[b.PeerID] = true
	}
	for _, p := range ps {
		if p.ID == self {
			continue
		}
		if used[p.ID] {
			withBricks = p.ID
		} else {
			spare = p.ID
		}
	}
	if spare != "" {
		t.Fatalf("expected every non-serving peer to hold a brick")
	}
	check := func(id string, status int, msg string) {
		t.Helper()
		r := h.do("DELETE", "/v1/peers/"+id, nil)
		if r.status != status || r.errMsg(t) != msg {
			t.Errorf("delete %s: %d %s, want %d %q", id, r.status, r.body, status, msg)
		}
	}
	check("not-a-uuid", 400, msgInvalidPeerID)
	check("00000000-0000-4000-8000-000000000000", 404, msgPeerNotFound)
	check(self, 400, msgRemoveSelf)
	check(withBricks, 403, msgPeerHasBricks)
	if err := h.sim.SetPeerAlive(withBricks, false); err != nil {
		t.Fatal(err)
	}
	check(withBricks, 500, msgPeerNotAlive)
	if err := h.sim.SetPeerAlive(withBricks, true); err != nil {
		t.Fatal(err)
	}
	// A peer without bricks goes; it comes back standalone and rejoins
	// with a new id.
	var extra wirePeer
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"extra"}}).decode(t, &extra)
	r := h.must(204, "DELETE", "/v1/peers/"+extra.ID, nil)
	if len(r.body) != 0 {
		t.Errorf("204 body %q", r.body)
	}
	var again wirePeer
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"extra"}}).decode(t, &again)
	if again.ID == extra.ID {
		t.Errorf("rejoined peer kept its id")
	}
	vs := h.sim.Violations()
	if len(vs) == 0 || vs[0].Kind != ViolationPeerDeleteWithBricks || !vs[0].Rejected {
		t.Errorf("peer delete with bricks not recorded: %+v", vs)
	}
}
