package sim

import (
	"strings"
	"testing"
	"time"
)

// TestAReplacementHealsOnlyWhenGD2IsMadeTo plays what real GD2 did in
// e2e/realgd2 after a replace-brick: heal-info reads 0 while the new
// brick is empty (bricks-status shows it using its empty file system's
// bytes), a full heal queues nothing until the self-heal daemon option is
// set on again (a new daemon volfile) and data, metadata and entry
// self-heal are on; then everything the new brick lacks is pending on its
// siblings and heals at the heal rate, after which the new brick uses
// what they use.
func TestAReplacementHealsOnlyWhenGD2IsMadeTo(t *testing.T) {
	h := newHarness(t, Config{Peers: 4, Zones: 4, InitialFiles: 40, HealRate: 10})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 3})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	if err := h.sim.SetVolumeUsed("v", 100<<20); err != nil {
		t.Fatal(err)
	}
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true})
	src := h.volume("v").Subvols[0].Bricks[0]
	sibling := h.volume("v").Subvols[0].Bricks[1]
	h.mustAt(src.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: src.PeerID, SrcBrickPath: src.Path})
	nb := h.volume("v").Subvols[0].Bricks[0]

	pending := func() (n int64) {
		for _, b := range h.healSummary() {
			n += *b.EntriesInHealPending
		}
		return n
	}
	used := func(b wireBrick) uint64 { return h.statusOfBrick("v", b.PeerID, b.Path).Size.Used }
	if p := pending(); p != 0 {
		t.Fatalf("heal-info counts %d right after the replace; real GD2 counts none", p)
	}
	if nu, su := used(nb), used(sibling); nu+(1<<20) >= su {
		t.Fatalf("the empty replacement uses %d bytes, its sibling %d: an empty brick must show less", nu, su)
	}

	// What real GD2 refuses on the way, the simulator refuses alike.
	r := h.do("POST", "/v1/volumes/v/heal?type=everything", nil)
	if r.status != 400 || !strings.Contains(string(r.body), msgHealBadType) {
		t.Fatalf("heal of an unknown type: %d %s", r.status, r.body)
	}
	r = h.do("POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optDataHeal: "on"}})
	if r.status != 500 || !strings.Contains(string(r.body), "is an advanced option") {
		t.Fatalf("data-self-heal without the advanced flag: %d %s", r.status, r.body)
	}

	// A full heal with the daemons' old volfile, or with self-heal off,
	// answers 200 and queues nothing.
	h.must(200, "POST", "/v1/volumes/v/heal?type=full", nil)
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optDataHeal: "on", optMetadataHeal: "on", optEntryHeal: "on"}, AllowAdvancedOptions: true})
	h.must(200, "POST", "/v1/volumes/v/heal?type=full", nil)
	h.clock.Step(time.Minute)
	if p := pending(); p != 0 {
		t.Fatalf("a full heal by daemons that do not know the new brick queued %d", p)
	}
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on", optDataHeal: "off"}, AllowAdvancedOptions: true})
	h.must(200, "POST", "/v1/volumes/v/heal?type=full", nil)
	if p := pending(); p != 0 {
		t.Fatalf("a full heal with data self-heal off queued %d", p)
	}

	// The heal that works: now everything is pending, on the siblings.
	healReplacement(h, "v")
	if p := pending(); p != 2*40 {
		t.Fatalf("after the heal options and a full heal %d pending, want the 40 entries on each of the 2 siblings", p)
	}
	h.clock.Step(2 * time.Second)
	if p := pending(); p != 2*20 {
		t.Fatalf("2 s at 10 entries/s later %d pending, want 20 on each sibling", p)
	}
	h.clock.Step(2 * time.Second)
	if p := pending(); p != 0 {
		t.Fatalf("healed: %d still pending", p)
	}
	if nu, su := used(nb), used(sibling); nu != su {
		t.Fatalf("the healed replacement uses %d bytes, its sibling %d", nu, su)
	}
	if vs := h.sim.Violations(); len(vs) != 0 {
		t.Fatalf("violations: %+v", vs)
	}
}

// TestReplacingBesideAnEmptyReplacementIsAViolation: the invariant
// checker knows the truth, so the second brick of a set replaced while
// the first replacement is empty (heal-info 0) is an unsafe replace.
func TestReplacingBesideAnEmptyReplacementIsAViolation(t *testing.T) {
	h := newHarness(t, Config{Peers: 5, Zones: 5, InitialFiles: 40})
	h.registerAll()
	h.must(201, "POST", "/v1/volumes", wireVolCreateReq{Name: "v", Size: 1 << 30, Replica: 2})
	h.must(200, "POST", "/v1/volumes/v/start", nil)
	first := h.volume("v").Subvols[0].Bricks[0]
	h.mustAt(first.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: first.PeerID, SrcBrickPath: first.Path})
	second := h.volume("v").Subvols[0].Bricks[1]
	h.mustAt(second.Host, 200, "POST", "/v1/volumes/v/replacebrick", wireReplaceBrickReq{SrcPeerID: second.PeerID, SrcBrickPath: second.Path})
	vs := h.sim.Violations()
	if len(vs) != 1 || vs[0].Kind != ViolationUnsafeBrickReplace {
		t.Fatalf("violations %+v, want the second replace unsafe: its only other copy was empty", vs)
	}
}
