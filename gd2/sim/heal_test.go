package sim

import (
	"testing"
	"time"
)

// healSetup builds a started replica-3 smart volume on three zones.
func healSetup(t *testing.T, cfg Config) (*harness, wireVolume) {
	t.Helper()
	cfg.Peers, cfg.Zones = 3, 3
	h := newHarness(t, cfg)
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	return h, h.volume("v")
}

func (h *harness) healSummary() []wireBrickHealInfo {
	h.t.Helper()
	var out []wireBrickHealInfo
	h.must(200, "GET", "/v1/volumes/v/info-summary/heal-info", nil).decode(h.t, &out)
	return out
}

func TestHealAccumulatesWhileDownAndDrainsWithShd(t *testing.T) {
	h, v := healSetup(t, Config{WriteRate: 10, HealRate: 5})
	// The serving node stays up; take the last brick's peer down.
	down := v.Subvols[0].Bricks[2].PeerID
	if err := h.sim.SetPeerAlive(down, false); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(10 * time.Second) // 100 entries
	if err := h.sim.Write("v", 20); err != nil {
		t.Fatal(err)
	}
	hi := h.healSummary()
	for _, b := range hi {
		if b.HostID == "-" {
			if *b.TotalEntries != -1 || b.Status != "Transport endpoint is not connected" {
				t.Errorf("down brick %+v", b)
			}
			continue
		}
		if *b.EntriesInHealPending != 120 || *b.TotalEntries != 120 || *b.EntriesInSplitBrain != 0 {
			t.Errorf("up brick pending %d, want 120", *b.EntriesInHealPending)
		}
	}
	if err := h.sim.SetPeerAlive(down, true); err != nil {
		t.Fatal(err)
	}
	// Self-heal daemon is off by default on replicate: nothing drains, and
	// a heal trigger is refused.
	h.clock.Step(100 * time.Second)
	if got := *h.healSummary()[0].EntriesInHealPending; got != 120 {
		t.Errorf("drained without shd: %d", got)
	}
	if r := h.do("POST", "/v1/volumes/v/heal", nil); r.status != 400 || r.errMsg(t) != msgShdDisabled {
		t.Errorf("heal with shd off: %d %s", r.status, r.body)
	}
	// Without the advanced flag the validation step of the txn refuses.
	if r := h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}}); r.status != 500 || r.errMsg(t) != msgTxnStep {
		t.Errorf("advanced option without flag: %d %s", r.status, r.body)
	}
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{"replicate.self-heal-daemon": "on"}, AllowAdvancedOptions: true})
	h.must(200, "POST", "/v1/volumes/v/heal?type=full", nil)
	h.clock.Step(10 * time.Second) // 50 healed
	if got := *h.healSummary()[0].EntriesInHealPending; got != 70 {
		t.Errorf("after 10s drain: %d, want 70", got)
	}
	h.clock.Step(time.Minute)
	var plain []wireBrickHealInfo
	h.must(200, "GET", "/v1/volumes/v/heal-info", nil).decode(t, &plain)
	for _, b := range plain {
		if b.Entries == nil || *b.Entries != 0 || b.Status != "Connected" {
			t.Errorf("healed brick %+v", b)
		}
	}
}

func TestHealInfoErrors(t *testing.T) {
	h, _ := healSetup(t, Config{})
	h.must(404, "GET", "/v1/volumes/nope/heal-info", nil)
	if r := h.do("GET", "/v1/volumes/v/info/heal-info", nil); r.status != 500 || r.errMsg(t) != msgHealInfoFailed {
		t.Errorf("info opts: %d %s", r.status, r.body)
	}
	h.must(200, "POST", "/v1/volumes/v/stop", nil)
	if r := h.do("GET", "/v1/volumes/v/heal-info", nil); r.status != 400 || r.errMsg(t) != msgVolNotStarted {
		t.Errorf("stopped: %d %s", r.status, r.body)
	}
	ps := h.peers()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "d", Subvols: []wireSubvolReq{{Bricks: []wireBrickReq{{PeerID: ps[0].ID, Path: "/d"}}}}})
	h.must(200, "POST", "/v1/volumes/d/start", nil)
	if r := h.do("GET", "/v1/volumes/d/heal-info", nil); r.status != 400 || r.errMsg(t) != msgHealBadVolType {
		t.Errorf("distribute: %d %s", r.status, r.body)
	}
}

func TestSplitBrainInjectAndResolve(t *testing.T) {
	h, v := healSetup(t, Config{})
	if err := h.sim.InjectSplitBrain("v", 0, []string{"a", "/b"}); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(time.Hour)
	var sb []wireBrickHealInfo
	h.must(200, "GET", "/v1/volumes/v/split-brain-info/heal-info", nil).decode(t, &sb)
	if *sb[0].Entries != 2 || len(sb[0].FileGfidList) != 2 || sb[0].FileGfidList[0].Filename != "/a" {
		t.Errorf("split-brain-info %+v", sb[0])
	}
	h.must(400, "POST", "/v1/volumes/v/split-brain/latest-mtime", wireSplitBrainReq{FileName: "a"})
	h.must(400, "POST", "/v1/volumes/v/split-brain/nope", wireSplitBrainReq{FileName: "/a"})
	h.must(200, "POST", "/v1/volumes/v/split-brain/latest-mtime", wireSplitBrainReq{FileName: "/a"})
	if got := *h.healSummary()[0].EntriesInSplitBrain; got != 1 {
		t.Errorf("after one resolution: %d", got)
	}
	b := v.Subvols[0].Bricks[1]
	h.must(200, "POST", "/v1/volumes/v/split-brain/source-brick", wireSplitBrainReq{HostName: b.Host, BrickName: b.Path})
	if got := *h.healSummary()[0].EntriesInSplitBrain; got != 0 {
		t.Errorf("after source-brick: %d", got)
	}
	// Admin clear path.
	if err := h.sim.InjectSplitBrain("v", 0, []string{"c"}); err != nil {
		t.Fatal(err)
	}
	if err := h.sim.ClearSplitBrain("v"); err != nil {
		t.Fatal(err)
	}
	if got := *h.healSummary()[0].EntriesInSplitBrain; got != 0 {
		t.Errorf("after clear: %d", got)
	}
}

func TestReplaceBrickBacklogAndPreStateBody(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4, InitialFiles: 40})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	v := h.volume("v")
	src := v.Subvols[0].Bricks[0]
	var before wireVolume
	// Sized by statfs on the serving node: address the source's own GD2.
	h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path}).decode(t, &before)
	if before.Subvols[0].Bricks[0].PeerID != src.PeerID {
		t.Errorf("200 body should be the volume before replacement")
	}
	after := h.volume("v")
	nb := after.Subvols[0].Bricks[0]
	if nb.PeerID == src.PeerID || nb.Path != src.Path || nb.ID == src.ID {
		t.Errorf("new brick %+v (old %+v)", nb, src)
	}
	// Real GD2 marks the empty new brick a heal sink nowhere: heal-info
	// reads 0 on every brick until its heal is made to happen.
	hi := h.healSummary()
	if *hi[1].EntriesInHealPending != 0 || *hi[0].EntriesInHealPending != 0 {
		t.Errorf("backlog right after the replace: %+v %+v, want 0 as real GD2 reads", *hi[0].EntriesInHealPending, *hi[1].EntriesInHealPending)
	}
	healReplacement(h, "v")
	hi = h.healSummary()
	if *hi[1].EntriesInHealPending != 40 || *hi[0].EntriesInHealPending != 0 {
		t.Errorf("backlog after the heal options and a full heal: %+v %+v", *hi[0].EntriesInHealPending, *hi[1].EntriesInHealPending)
	}
	if vs := h.sim.Violations(); len(vs) != 0 {
		t.Errorf("safe replace recorded: %+v", vs)
	}
	// The replaced brick keeps running on its node: GD2 does not give its
	// space back to the device.
	var devs []wireDevice
	h.must(200, "GET", "/v1/devices/"+src.PeerID, nil).decode(t, &devs)
	used := false
	for _, d := range devs {
		used = used || d.FreeSize < d.TotalSize
	}
	if !used {
		t.Errorf("replaced brick's space was credited back: %+v", devs)
	}
}

// SetRates applies from now on: what accrued before keeps the old rates.
func TestSetRatesAppliesFromNow(t *testing.T) {
	h, v := healSetup(t, Config{WriteRate: 10, HealRate: 5})
	down := v.Subvols[0].Bricks[2].PeerID
	if err := h.sim.SetPeerAlive(down, false); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(10 * time.Second) // 100 entries at the old rate
	if err := h.sim.SetRates(1, 0); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(10 * time.Second) // 10 more
	if got := *h.healSummary()[0].EntriesInHealPending; got != 110 {
		t.Fatalf("pending %d, want 110", got)
	}
	if err := h.sim.SetRates(-1, 0); err == nil {
		t.Fatal("a negative rate must be refused")
	}
}

// A rewrite of existing files marks them for the down brick, at most every
// file the replica set holds, and adds none.
func TestOverwriteMarksExistingFilesOnly(t *testing.T) {
	h, v := healSetup(t, Config{WriteRate: 1e-9, HealRate: 5, InitialFiles: 50})
	down := v.Subvols[0].Bricks[2].PeerID
	if err := h.sim.SetPeerAlive(down, false); err != nil {
		t.Fatal(err)
	}
	pending := func() int64 {
		t.Helper()
		for _, b := range h.healSummary() {
			if b.HostID != "-" {
				return *b.EntriesInHealPending
			}
		}
		t.Fatal("no brick up")
		return 0
	}
	if err := h.sim.Overwrite("v", 30); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 30 {
		t.Errorf("after rewriting 30 of 50 files: %d pending, want 30", got)
	}
	if err := h.sim.Overwrite("v", 40); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 50 {
		t.Errorf("after rewriting 70 times: %d pending, want every file (50)", got)
	}
	if err := h.sim.Write("v", 10); err != nil {
		t.Fatal(err)
	}
	if got := pending(); got != 60 {
		t.Errorf("after 10 new files: %d pending, want 60", got)
	}
	if err := h.sim.Overwrite("nope", 1); err == nil {
		t.Error("a rewrite of an unknown volume was accepted")
	}
}

// healReplacement does what makes real GD2 heal a replacement: the
// self-heal daemon set on again, data, metadata and entry self-heal on, a
// full heal.
func healReplacement(h *harness, vol string) {
	h.t.Helper()
	h.must(200, "POST", "/v1/volumes/"+vol+"/options", wireVolOptionReq{Options: map[string]string{
		optSelfHeal: "on", optDataHeal: "on", optMetadataHeal: "on", optEntryHeal: "on",
	}, AllowAdvancedOptions: true})
	h.must(200, "POST", "/v1/volumes/"+vol+"/heal?type=full", nil)
}
