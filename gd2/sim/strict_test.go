package sim

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
)

// Refusals of a real GD2 the simulator models: each test fails without the
// behaviour it names.

func (r response) errItem(t *testing.T) wireErrorItem {
	t.Helper()
	var e wireErrorResp
	r.decode(t, &e)
	if len(e.Errors) == 0 {
		t.Fatalf("no errors in %s", r.body)
	}
	return e.Errors[0]
}

// peerOfHost returns the member id of a simulated host.
func (h *harness) peerOfHost(name string) string {
	h.t.Helper()
	id := h.sim.PeerIDOfHost(name)
	if id == "" {
		h.t.Fatalf("host %s is no member", name)
	}
	return id
}

func (h *harness) down(name string) {
	h.t.Helper()
	if err := h.sim.SetHostAlive(name, false); err != nil {
		h.t.Fatal(err)
	}
}

func wantDown(t *testing.T, r response, id string) {
	t.Helper()
	if r.status != 500 {
		t.Fatalf("status %d, want 500 node down: %s", r.status, r.body)
	}
	if it := r.errItem(t); it.Code != 1 || it.Message != "node "+id+" is probably down" {
		t.Errorf("error %+v, want code 1 node %s is probably down", it, id)
	}
}

func wantCode2(t *testing.T, r response, step, cause string) wireErrorItem {
	t.Helper()
	if r.status != 500 {
		t.Fatalf("status %d, want 500 code 2: %s", r.status, r.body)
	}
	it := r.errItem(t)
	if it.Code != 2 || it.Message != msgTxnStep || it.Fields["step"] != step || it.Fields["error"] != cause {
		t.Errorf("error %+v, want code 2 step %s error %q", it, step, cause)
	}
	return it
}

// A 2-brick replica volume on gd2-1 and gd2-2 of a 4-peer cluster, all
// requests addressed to gd2-1.
func gateSetup(t *testing.T) *harness {
	h := newHarness(t, Config{Peers: 4, Zones: 4})
	h.via = "gd2-1"
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2, LimitPeers: []string{h.peerOfHost("gd2-1"), h.peerOfHost("gd2-2")}})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	return h
}

func TestGateReplaceBrickNeedsEveryNodeOfTheVolume(t *testing.T) {
	h := gateSetup(t)
	v := h.volume("v")
	var src wireBrick
	for _, b := range v.Subvols[0].Bricks {
		if b.PeerID == h.peerOfHost("gd2-1") {
			src = b
		}
	}
	other := h.peerOfHost("gd2-2")
	h.down("gd2-2")
	// The source's node is up and serving; the other brick's node is down.
	wantDown(t, h.do("POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path}), other)
	if got := h.volume("v"); !reflect.DeepEqual(got.Subvols, v.Subvols) {
		t.Errorf("refused replace changed the volume")
	}
}

func TestGateExpandAndOptionsNeedEveryPeer(t *testing.T) {
	h := gateSetup(t)
	spare := h.peerOfHost("gd2-4") // holds no brick of the volume
	h.down("gd2-4")
	wantDown(t, h.do("POST", "/v1/volumes/v/expand", wireVolExpandReq{Size: 1 << 30, Distribute: 1}), spare)
	wantDown(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true}), spare)
	wantDown(t, h.do("DELETE", "/v1/volumes/v/options", wireVolOptionResetReq{All: true}), spare)
	// The gate runs before the option validation step.
	wantDown(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{"no.such": "x"}}), spare)
	if got := h.volume("v"); got.Capacity != 1<<30 || got.Options[optSelfHeal] != "off" {
		t.Errorf("refused ops changed the volume: capacity %d options %v", got.Capacity, got.Options)
	}
	// Bricks-status and heal-info do not gate.
	h.must(200, "GET", "/v1/volumes/v/bricks", nil)
	h.must(200, "GET", "/v1/volumes/v/heal-info", nil)
}

func TestGateHealNeedsTheVolumesNodesOnly(t *testing.T) {
	h := gateSetup(t)
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true})
	h.down("gd2-4") // no brick there: heal goes on
	h.must(200, "POST", "/v1/volumes/v/heal", nil)
	other := h.peerOfHost("gd2-2")
	h.down("gd2-2")
	wantDown(t, h.do("POST", "/v1/volumes/v/heal", nil), other)
	h.must(200, "GET", "/v1/volumes/v/heal-info", nil)
}

func TestOptionValidationIsCode2OnSetAnd400OnCreate(t *testing.T) {
	h := gateSetup(t)
	serving := h.peerOfHost("gd2-1")
	it := wantCode2(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{"no.such": "x"}}),
		stepOptionValidate, "validation failed for volume option: option not found: no.such")
	if it.Fields["peer-id"] != serving {
		t.Errorf("peer-id %q, want the serving %s", it.Fields["peer-id"], serving)
	}
	wantCode2(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}}),
		stepOptionValidate, "validation failed for volume option: option "+optSelfHeal+" is an advanced option. To set it pass the advanced flag")
	wantCode2(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{"features/shard.shard": "on"}}),
		stepOptionValidate, "validation failed for volume option: option features/shard.shard is an experimental option. To set it pass the experimental flag")
	wantCode2(t, h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{"debug/io-stats.count-fop-hits": "on"}}),
		stepOptionValidate, "validation failed for volume option: option debug/io-stats.count-fop-hits will be deprecated in future releases. To set it pass the deprecated flag")
	if r := h.do("POST", "/v1/volumes/v/options", "garbage"); r.status != 400 || r.errMsg(t) != msgParse {
		t.Errorf("bad JSON: %d %s", r.status, r.body)
	}
	ps := []string{h.peerOfHost("gd2-1")}
	r := h.do("POST", "/v1/volumes", wireVolCreateReq{Name: "w", Size: 1 << 30, LimitPeers: ps, Options: map[string]string{"no.such": "x"}})
	if r.status != 400 || r.errMsg(t) != "option not found: no.such" {
		t.Errorf("create with unknown option: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/v1/volumes", wireVolCreateReq{Name: "w", Size: 1 << 30, LimitPeers: ps, Options: map[string]string{optSelfHeal: "on"}})
	if r.status != 400 || r.errMsg(t) != "option "+optSelfHeal+" is an advanced option. To set it pass the advanced flag" {
		t.Errorf("create with advanced option: %d %s", r.status, r.body)
	}
}

func TestOptionGetAcceptsSlashes(t *testing.T) {
	h := gateSetup(t)
	var o wireVolOptionGet
	h.must(200, "GET", "/v1/volumes/v/options/"+optSelfHeal, nil).decode(t, &o)
	if o.Name != optSelfHeal || o.Value != "off" || o.DefaultValue != "on" || !o.Modified {
		t.Errorf("option %+v", o)
	}
	h.must(200, "GET", "/v1/volumes/v/options/replicate.self-heal-daemon", nil)
	h.must(404, "GET", "/v1/volumes/v/options/no/such", nil)
	h.must(200, "GET", "/v1/volumes/v/info-summary/heal-info", nil)
}

// GD2 (volume-options-get.go at 54ce5f6f) answers one option under the
// name it was asked by, modified whenever the volume's options hold a key
// ending in it, even at the option's default; held against real GD2 by
// e2e/realgd2's TestSimulatorAnswersTheScenarioAsRealGD2Does.
func TestOptionGetIsModifiedWhenTheVolumeHoldsIt(t *testing.T) {
	h := gateSetup(t)
	get := func(name string) wireVolOptionGet {
		var o wireVolOptionGet
		h.must(200, "GET", "/v1/volumes/v/options/"+name, nil).decode(t, &o)
		return o
	}
	if o := get("replicate.self-heal-daemon"); o.Name != "replicate.self-heal-daemon" || o.Value != "off" || !o.Modified {
		t.Errorf("self-heal daemon as created (off): %+v", o)
	}
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true})
	if o := get("replicate.self-heal-daemon"); o.Value != "on" || o.DefaultValue != "on" || !o.Modified {
		t.Errorf("self-heal daemon set on, its default: %+v", o)
	}
	if o := get("replicate.favorite-child-policy"); o.Name != "replicate.favorite-child-policy" || o.Value != "none" || o.Modified {
		t.Errorf("an option never set: %+v", o)
	}
	var all []wireVolOptionGet
	h.must(200, "GET", "/v1/volumes/v/options", nil).decode(t, &all)
	for _, o := range all {
		if o.Name == optSelfHeal && (!o.Modified || o.Value != "on") {
			t.Errorf("the option list's self-heal daemon: %+v", o)
		}
	}
}

func TestDefaultOptionProfiles(t *testing.T) {
	h := newHarness(t, Config{Peers: 3, Zones: 3})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "r", Size: 1 << 30, Replica: 3})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "d", Size: 1 << 30})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "e", Size: 1 << 30, Disperse: 3})
	want := map[string]map[string]string{
		"r": {optSelfHeal: "off", optQuickRead: "off", optIOCache: "on", optReaddirAhead: "off", optReadAhead: "off", optWriteBehind: "on", optOpenBehind: "on", optMdCache: "on", optNlCache: "on"},
		"d": {optQuickRead: "off", optIOCache: "on", optReaddirAhead: "off", optReadAhead: "off", optWriteBehind: "on", optOpenBehind: "on", optMdCache: "on", optNlCache: "on"},
		"e": {optSelfHeal: "on", optMdCache: "off", optOpenBehind: "off", optQuickRead: "off", optIOCache: "off", optReaddirAhead: "off", optReadAhead: "off", optWriteBehind: "off"},
	}
	for name, opts := range want {
		v := h.volume(name)
		if !reflect.DeepEqual(v.Options, opts) {
			t.Errorf("%s options %v, want %v", name, v.Options, opts)
		}
		r := h.must(200, "GET", "/v1/volumes/"+name, nil)
		if strings.Contains(string(r.body), `"subvols":null`) {
			t.Errorf("%s: subvol objects carry subvols null: %s", name, r.body)
		}
	}
}

func TestHealTriggerOnDistributeIsSelfHealDisabled(t *testing.T) {
	h := newHarness(t, Config{Peers: 1})
	p := h.peers()[0]
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "d", Subvols: []wireSubvolReq{{Bricks: []wireBrickReq{{PeerID: p.ID, Path: "/d"}}}}})
	h.must(200, "POST", "/v1/volumes/d/start", nil)
	if r := h.do("POST", "/v1/volumes/d/heal", nil); r.status != 400 || r.errMsg(t) != msgShdDisabled {
		t.Errorf("heal on distribute: %d %s", r.status, r.body)
	}
}

func TestPeerAddOwnAddressUnderAnotherSpelling(t *testing.T) {
	h := newHarness(t, Config{Peers: 2})
	h.via = "gd2-1"
	self := h.peerOfHost("gd2-1")
	if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"gd2-1"}}); r.status != 409 || r.errMsg(t) != "Peer exists with given addresses (ID: "+self+")" {
		t.Errorf("own address: %d %s", r.status, r.body)
	}
	for _, addr := range []string{"localhost:24008", "127.0.0.1", "gd2-1.ns.svc:24008", "gd2-2.ns.svc"} {
		if r := h.do("POST", "/v1/peers", wirePeerAddReq{Addresses: []string{addr}}); r.status != 500 || r.errMsg(t) != msgOtherCluster {
			t.Errorf("add %s: %d %s", addr, r.status, r.body)
		}
	}
	if n := len(h.peers()); n != 2 {
		t.Errorf("%d peers after refused adds", n)
	}
}

func TestRoutingByHostHeader(t *testing.T) {
	h := newHarness(t, Config{Peers: 3})
	ids := map[string]string{}
	for _, n := range []string{"gd2-1", "gd2-2", "gd2-3"} {
		ids[n] = h.peerOfHost(n)
	}
	for n, id := range ids {
		for _, host := range []string{n, n + ".gc-nodes.ns.svc"} {
			if got := h.mustAt(host, 200, "GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id"); got != id {
				t.Errorf("addressed to %s: served by %s, want %s", host, got, id)
			}
		}
	}
	// Any other address reaches a random serving member: never a down or
	// unserving one, and over many requests each of the others.
	h.down("gd2-3")
	if err := h.sim.UpsertHost(HostSpec{Name: "gd2-2", Alive: true, Unserving: true}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "gd2-4", Alive: true}); err != nil {
		t.Fatal(err)
	}
	h.must(201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"gd2-4"}})
	ids["gd2-4"] = h.peerOfHost("gd2-4")
	seen := map[string]int{}
	for range 40 {
		seen[h.must(200, "GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id")]++
	}
	if len(seen) != 2 || seen[ids["gd2-1"]] == 0 || seen[ids["gd2-4"]] == 0 {
		t.Errorf("load-balanced requests served by %v, want gd2-1 and gd2-4 only", seen)
	}
	// An unserving host still answers when addressed.
	if got := h.mustAt("gd2-2", 200, "GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id"); got != ids["gd2-2"] {
		t.Errorf("unserving host addressed directly served by %s", got)
	}
}

func TestRoutingDownHostDropsTheConnection(t *testing.T) {
	h := newHarness(t, Config{Peers: 2})
	h.down("gd2-2")
	req, err := http.NewRequest("GET", h.srv.URL+"/ping", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Host = "gd2-2.gc-nodes.ns.svc:24007"
	resp, err := http.DefaultClient.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("down host answered %d", resp.StatusCode)
	}
}

func TestRoutingPartitionedAndStandaloneHosts(t *testing.T) {
	h := newHarness(t, Config{Peers: 2})
	id := h.peerOfHost("gd2-2")
	if err := h.sim.PartitionPeer(id, true); err != nil {
		t.Fatal(err)
	}
	h.mustAt("gd2-2", 200, "GET", "/ping", nil)
	r := h.doAt("gd2-2", "GET", "/v1/peers", nil)
	if r.status != 500 || r.errMsg(t) != msgStoreTimeout || r.header.Get("X-Gluster-Peer-Id") != id {
		t.Errorf("partitioned host: %d %s (peer %s)", r.status, r.body, r.header.Get("X-Gluster-Peer-Id"))
	}
	for range 10 { // never reached through the Service
		if got := h.must(200, "GET", "/v1/peers", nil).header.Get("X-Gluster-Peer-Id"); got == id {
			t.Fatalf("partitioned host served a load-balanced request")
		}
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "lone", Alive: true}); err != nil {
		t.Fatal(err)
	}
	h.mustAt("lone", 200, "GET", "/ping", nil)
	h.mustAt("lone", 200, "GET", "/version", nil)
	h.mustAt("lone", 503, "GET", "/v1/volumes", nil)
}

func TestGD2PeerIDKeepsTheIDThroughJoinLeaveAndRestart(t *testing.T) {
	const first, second = "0a000000-0000-4000-8000-00000000000a", "0b000000-0000-4000-8000-00000000000b"
	h := newHarness(t, Config{})
	if err := h.sim.UpsertHost(HostSpec{Name: "n0", Alive: true, PeerID: first}); err != nil {
		t.Fatal(err)
	}
	if got := h.sim.PeerIDOfHost("n0"); got != first {
		t.Fatalf("first start: id %s, want %s", got, first)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "n1", Alive: true, PeerID: second}); err != nil {
		t.Fatal(err)
	}
	var p wirePeer
	h.mustAt("n0", 201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"n1"}}).decode(t, &p)
	if p.ID != second {
		t.Fatalf("joined with id %s, want %s", p.ID, second)
	}
	if err := h.sim.RestartPeer(second); err != nil {
		t.Fatal(err)
	}
	h.mustAt("n0", 204, "DELETE", "/v1/peers/"+second, nil)
	for _, hi := range h.sim.Hosts() {
		if hi.Name == "n1" && (hi.PeerID != "" || hi.EnvPeerID != second) {
			t.Errorf("after delete: %+v", hi)
		}
	}
	h.mustAt("n0", 201, "POST", "/v1/peers", wirePeerAddReq{Addresses: []string{"n1"}}).decode(t, &p)
	if p.ID != second {
		t.Errorf("re-added with id %s, want %s", p.ID, second)
	}
	if err := h.sim.UpsertHost(HostSpec{Name: "bad", PeerID: "nope"}); err == nil {
		t.Errorf("a GD2_PEER_ID that is no UUID was accepted")
	}
}

// replSetup: a cluster (default 4 peers in 4 zones) with one registered
// device per peer.
func replSetup(t *testing.T, cfg Config) *harness {
	t.Helper()
	if cfg.Peers == 0 {
		cfg.Peers, cfg.Zones = 4, 4
	}
	cfg.DevicesPerPeer = 1
	h := newHarness(t, cfg)
	h.registerAll()
	return h
}

func (h *harness) device(peerID string) *device {
	h.t.Helper()
	h.sim.mu.Lock()
	defer h.sim.mu.Unlock()
	d := h.sim.m.Devices[deviceKey(peerID, "/dev/sdb")]
	if d == nil {
		h.t.Fatalf("no /dev/sdb on %s", peerID)
	}
	cp := *d
	cp.LVs = cloneSizes(d.LVs)
	return &cp
}

func cloneSizes(in map[string]uint64) map[string]uint64 {
	out := map[string]uint64{}
	for k, v := range in {
		out[k] = v
	}
	return out
}

func (h *harness) brickSize(vol string, sv, b int) uint64 {
	h.t.Helper()
	h.sim.mu.Lock()
	defer h.sim.mu.Unlock()
	return h.sim.m.Volumes[vol].Subvols[sv].Bricks[b].Size
}

func TestReplaceBrickServedElsewhereIsSizeZero(t *testing.T) {
	h := replSetup(t, Config{})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	src := v.Subvols[0].Bricks[0]
	other := v.Subvols[0].Bricks[1].Host
	var spare string
	for _, p := range h.peers() {
		if !strings.Contains(string(mustJSON(t, v)), p.ID) {
			spare = p.ID
		}
	}
	before := h.device(spare)
	r := h.doAt(other, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
	it := wantCode2(t, r, stepPrepareBricks, msgBrickSizeZero)
	if it.Fields["peer-id"] != spare {
		t.Errorf("failing peer %s, want the new brick's %s", it.Fields["peer-id"], spare)
	}
	after := h.device(spare)
	if after.Free != before.Free || len(after.LVs) != 2 || after.LVs["brick_v_s0_b0"] != 0 {
		t.Errorf("target device after the failed replace: free %d→%d, LVs %v; want a 0-byte LV left", before.Free, after.Free, after.LVs)
	}
	if got := h.volume("v"); !reflect.DeepEqual(got.Subvols, v.Subvols) {
		t.Errorf("failed replace changed the volume")
	}
	// The 0-byte leftover now blocks its name on that device: the next
	// replace to it fails in lvcreate (no live brick is hurt).
	r = h.doAt(src.Host, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
	wantCode2(t, r, stepPrepareBricks, `Logical Volume "tp_v_s0_b0" already exists in volume group "gluster-dev-sdb"`)
	if vs := h.sim.Violations(); len(vs) != 0 {
		t.Errorf("violations %+v", vs)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestReplaceBrickServedBySourceShrinksAndKeepsOldSpace(t *testing.T) {
	h := replSetup(t, Config{Peers: 5, Zones: 5})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
	v := h.volume("v")
	src := v.Subvols[0].Bricks[0]
	srcDev := h.device(src.PeerID)
	size0 := h.brickSize("v", 0, 0)
	h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
	nb := h.volume("v").Subvols[0].Bricks[0]
	size1 := h.brickSize("v", 0, 0)
	if nb.PeerID == src.PeerID || size1 >= size0 || size1 < size0*98/100 {
		t.Errorf("new brick on %s size %d (source %d): want another node, slightly smaller", nb.PeerID, size1, size0)
	}
	if d := h.device(nb.PeerID); d.LVs["brick_v_s0_b0"] != 0 || d.LVs["tp_v_s0_b0"] == 0 {
		t.Errorf("new brick's LVs %v, want 0-based names", d.LVs)
	}
	if got := h.device(src.PeerID); got.Free != srcDev.Free {
		t.Errorf("source device free %d→%d: the replaced brick's space must not come back", srcDev.Free, got.Free)
	}
	// Each further replace shrinks it again.
	h.mustAt(nb.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: nb.PeerID, SrcBrickPath: nb.Path})
	if size2 := h.brickSize("v", 0, 0); size2 >= size1 {
		t.Errorf("second replacement %d, want smaller than %d", size2, size1)
	}
}

func TestReplaceBrickMatchesTheRawPath(t *testing.T) {
	h := replSetup(t, Config{})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
	src := h.volume("v").Subvols[0].Bricks[0]
	// A trailing slash is another string: no match, GD2 falls back to
	// subvol 0 brick 0 with an empty source (path ""), and the new brick's
	// mount directory cannot be made (as real GD2 answered in e2e/realgd2's
	// TestSimulatorAnswersTheScenarioAsRealGD2Does).
	r := h.doAt(src.Host, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path + "/"})
	wantCode2(t, r, stepPrepareBricks, msgMkdirNoPath)
}

func TestReplaceBrickZones(t *testing.T) {
	h := replSetup(t, Config{})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
	v := h.volume("v")
	src := v.Subvols[0].Bricks[0]
	zoneOf := map[string]string{}
	for _, p := range h.peers() {
		zoneOf[p.ID] = p.Metadata["_zone"]
	}
	req := wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path, LimitZones: []string{zoneOf[src.PeerID]}}
	if r := h.doAt(src.Host, "POST", "/v1/volumes/v/replacebrick", req); r.status != 500 || r.errMsg(t) != msgNoVG {
		t.Errorf("only the source's zone: %d %s", r.status, r.body)
	}
	req.LimitZones = []string{zoneOf[v.Subvols[0].Bricks[1].PeerID]}
	if r := h.doAt(src.Host, "POST", "/v1/volumes/v/replacebrick", req); r.status != 500 || r.errMsg(t) != msgNoVG {
		t.Errorf("only a zone the volume uses: %d %s", r.status, r.body)
	}
}

// With subvolume-zones-overlap a brick may move to a zone another subvol
// uses; when the 0-based name of the replacement equals the 1-based name
// of a live brick on the chosen device, GD2 truncates that brick.
func TestReplaceBrickNameClashDamagesALiveBrick(t *testing.T) {
	h := replSetup(t, Config{})
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 2 << 30, Replica: 2, Distribute: 2, SubvolZonesOverlap: true})
	v := h.volume("v")
	a := v.Subvols[0].Bricks[0] // LV brick_v_s1_b1
	if v.Subvols[1].Bricks[0].PeerID != a.PeerID {
		t.Fatalf("overlap placed the subvols differently: %+v", v.Subvols)
	}
	// Move subvol 1's first brick off a's node.
	s10 := v.Subvols[1].Bricks[0]
	h.mustAt(s10.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: s10.PeerID, SrcBrickPath: s10.Path, SubvolZonesOverlap: true})
	v = h.volume("v")
	// Subvol 1 brick 1 is named brick_v_s1_b1 0-based: steer it to a's node.
	s11 := v.Subvols[1].Bricks[1]
	r := h.doAt(s11.Host, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{
		SrcPeerID: s11.PeerID, SrcBrickPath: s11.Path, SubvolZonesOverlap: true, LimitPeers: []string{a.PeerID}})
	wantCode2(t, r, stepPrepareBricks, `Logical Volume "tp_v_s1_b1" already exists in volume group "gluster-dev-sdb"`)
	// (The attempt is also an unsafe replace: the new brick of subvol 1 has
	// not healed yet, so the source is its only full copy.)
	var damaged []Violation
	for _, vi := range h.sim.Violations() {
		if vi.Kind == ViolationBrickDamaged {
			damaged = append(damaged, vi)
		}
	}
	if len(damaged) != 1 || damaged[0].Rejected || damaged[0].Brick != a.Host+":"+a.Path || damaged[0].PeerID != a.PeerID {
		t.Errorf("damaged %+v, want the live brick %s:%s", damaged, a.Host, a.Path)
	}
	if got := h.volume("v"); !reflect.DeepEqual(got.Subvols, v.Subvols) {
		t.Errorf("failed replace changed the volume")
	}
}

// Volume create/start/stop/delete run on the v2 engine, whose node-down
// text never names the node.
func TestV2NodeDownTextNamesNoNode(t *testing.T) {
	h := gateSetup(t)
	h.must(200, "POST", "/v1/volumes/v/stop", nil)
	h.down("gd2-2")
	for _, op := range []struct{ method, path string }{{"POST", "/v1/volumes/v/start"}, {"DELETE", "/v1/volumes/v"}} {
		if r := h.do(op.method, op.path, nil); r.status != 500 || r.errMsg(t) != msgNodesDown {
			t.Errorf("%s %s: %d %s", op.method, op.path, r.status, r.body)
		}
	}
}

// GD2 reports the version its own binary was built with: each host its
// build, the simulator's Config.Version for a host started without one.
func TestVersionIsEachHostsBuild(t *testing.T) {
	h := newHarness(t, Config{Peers: 2, Version: "v6.0-sim"})
	if err := h.sim.UpsertHost(HostSpec{Name: "gd2-2", Alive: true, Version: "v4.1.0-0"}); err != nil {
		t.Fatal(err)
	}
	for host, want := range map[string]string{"gd2-1": "v6.0-sim", "gd2-2": "v4.1.0-0"} {
		var v wireVersion
		h.mustAt(host, 200, "GET", "/version", nil).decode(t, &v)
		if v.GlusterdVersion != want || v.APIVersion != 1 {
			t.Errorf("%s: %+v, want glusterd-version %s", host, v, want)
		}
	}
}
