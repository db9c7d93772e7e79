package gd2_test

import (
	"errors"
	"testing"
	"time"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
)

// healPollLimit bounds every wait: one simulated second per poll.
const healPollLimit = 600

// waitHealed steps the simulator's clock until heal info shows every brick
// connected with nothing pending and nothing in split-brain.
func (e *env) waitHealed(volume string) {
	e.t.Helper()
	for range healPollLimit {
		hi, err := e.c.HealInfo(bg, volume, gd2.HealInfoSummary)
		e.must(err, "heal info")
		if healed(hi) {
			return
		}
		e.clock.Step(time.Second)
	}
	e.t.Fatalf("volume %s not healed after %d simulated seconds", volume, healPollLimit)
}

func healed(hi []gd2.BrickHealInfo) bool {
	for _, b := range hi {
		if b.Status != "Connected" || b.BrickDown() ||
			b.EntriesInHealPending == nil || *b.EntriesInHealPending != 0 ||
			b.EntriesInSplitBrain == nil || *b.EntriesInSplitBrain != 0 {
			return false
		}
	}
	return len(hi) > 0
}

// pending sums the heal-pending counters of the reachable bricks.
func pending(hi []gd2.BrickHealInfo) int64 {
	var n int64
	for _, b := range hi {
		if !b.BrickDown() && b.EntriesInHealPending != nil {
			n += *b.EntriesInHealPending
		}
	}
	return n
}

// noViolations is the invariant checked after every step.
func (e *env) noViolations(step string) {
	e.t.Helper()
	if v := e.sim.Violations(); len(v) != 0 {
		e.t.Fatalf("after %s: invariant violations %+v", step, v)
	}
}

func brickOn(v *gd2.Volume, peerID string) (gd2.BrickInfo, bool) {
	for _, b := range v.Bricks() {
		if b.PeerID == peerID {
			return b, true
		}
	}
	return gd2.BrickInfo{}, false
}

// TestScenarioPeerOutageHealThenReplaceAndRemoveThePeer walks the node
// lifecycle the operator drives: an outage heals back to zero, then a
// drain moves the peer's brick to a new peer in the same zone, waits for
// that brick to heal and only then deletes the old peer. The simulator's
// invariant checker must record nothing.
func TestScenarioPeerOutageHealThenReplaceAndRemoveThePeer(t *testing.T) {
	e := newEnv(t, func(c *sim.Config) { c.WriteRate, c.HealRate = 10, 25 })
	e.addDevices()
	e.smartReplica3("pv1", GiB)
	e.enableSelfHeal("pv1")
	e.start("pv1")
	e.waitHealed("pv1")
	e.noViolations("create and start")

	victim := e.peers[2] // zone-3
	e.must(e.sim.SetPeerAlive(victim.ID, false), "take peer down")
	e.clock.Step(5 * time.Second) // client writes at WriteRate while degraded
	e.must(e.sim.Write("pv1", 20), "write")
	hi, err := e.c.HealInfo(bg, "pv1", gd2.HealInfoSummary)
	e.must(err, "heal info while degraded")
	if pending(hi) == 0 || healed(hi) {
		t.Fatalf("writes during the outage left nothing to heal: %+v", hi)
	}
	if p, err := e.c.GetPeer(bg, victim.ID); err != nil || p.Online {
		t.Fatalf("peer should read offline: %+v, %v", p, err)
	}
	e.noViolations("outage and writes")

	e.must(e.sim.SetPeerAlive(victim.ID, true), "bring peer back")
	e.waitHealed("pv1")
	e.noViolations("heal after outage")

	// A replacement node joins the victim's zone.
	p4, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Zone: victim.Zone()})
	e.must(err, "add replacement peer")
	_, err = e.c.AddDevice(bg, p4.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
	e.must(err, "register replacement device")

	// GD2's planner excludes the zones of all the volume's bricks, the source
	// brick's included, so the victim is moved out of its zone first; this is
	// what lets the replacement land in the same zone.
	_, err = e.c.EditPeer(bg, victim.ID, gd2.PeerEditRequest{Zone: victim.Zone() + "-draining"})
	e.must(err, "re-zone the draining peer")

	before, err := e.c.GetVolume(bg, "pv1")
	e.must(err, "get volume")
	src, ok := brickOn(before, victim.ID)
	if !ok {
		t.Fatal("victim holds no brick")
	}
	// Served by the victim's own GD2: GD2 sizes the new brick from the
	// source path on the serving node.
	after, err := e.nodeClient(victim.Name).ReplaceBrick(bg, "pv1", gd2.ReplaceBrickRequest{SrcPeerID: victim.ID, SrcBrickPath: src.Path, LimitPeers: []string{p4.ID}})
	e.must(err, "replace brick")
	if _, still := brickOn(after, victim.ID); still {
		t.Fatal("ReplaceBrick returned a volume that still has the old brick")
	}
	if nb, moved := brickOn(after, p4.ID); !moved || nb.Path != src.Path {
		t.Fatalf("brick not on the replacement peer: %+v", after.Bricks())
	}
	// As real GD2: nothing pending while the new brick is empty, until
	// the heal options are set again and a full heal is triggered.
	hi, err = e.c.HealInfo(bg, "pv1", gd2.HealInfoSummary)
	e.must(err, "heal info after replace")
	if pending(hi) != 0 {
		t.Fatalf("heal-info counts %d entries right after a replace; real GD2 counts none", pending(hi))
	}
	_, err = e.c.SetVolumeOptions(bg, "pv1", gd2.VolumeOptionRequest{Options: map[string]string{
		gd2.OptionSelfHealDaemon: "on", gd2.OptionDataSelfHeal: "on", gd2.OptionMetadataSelfHeal: "on", gd2.OptionEntrySelfHeal: "on",
	}, AllowAdvanced: true})
	e.must(err, "heal options")
	e.must(e.c.Heal(bg, "pv1", gd2.HealFull), "full heal")
	hi, err = e.c.HealInfo(bg, "pv1", gd2.HealInfoSummary)
	e.must(err, "heal info after the full heal")
	if pending(hi) == 0 {
		t.Fatal("after the heal options and a full heal the new, empty brick must have a heal backlog")
	}
	e.noViolations("replace brick")
	e.waitHealed("pv1")

	if err := e.nodeClient(e.peers[0].Name).DeletePeer(bg, victim.ID); err != nil {
		t.Fatalf("delete drained peer: %v", err)
	}
	if _, err := e.c.GetPeer(bg, victim.ID); !errors.Is(err, gd2.ErrNotFound) {
		t.Fatalf("deleted peer still readable: %v", err)
	}
	e.noViolations("peer delete")
}

// TestScenarioReplacingTheLastOnlineHealedCopyIsDetected replaces a brick
// whose replica set has no other good copy: both siblings missed writes
// during outages and are back but unhealed (self-heal off). Every node is
// up, so GD2's liveness gate lets the request through; the simulator's
// checker must flag it.
func TestScenarioReplacingTheLastOnlineHealedCopyIsDetected(t *testing.T) {
	e := newEnv(t)
	e.addDevices()
	e.smartReplica3("pv1", GiB) // self-heal daemon stays off: nothing heals
	e.start("pv1")
	p4, err := e.c.AddPeer(bg, gd2.PeerAddRequest{Addresses: []string{"gd2-4"}, Zone: "zone-4"})
	e.must(err, "add peer")
	_, err = e.c.AddDevice(bg, p4.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"})
	e.must(err, "add device")

	a, b, c := e.peers[0], e.peers[1], e.peers[2]
	e.must(e.sim.SetPeerAlive(b.ID, false), "b down")
	e.must(e.sim.Write("pv1", 30), "write while b is down")
	e.must(e.sim.SetPeerAlive(b.ID, true), "b back, unhealed")
	e.must(e.sim.SetPeerAlive(c.ID, false), "c down")
	e.must(e.sim.Write("pv1", 30), "write while c is down")
	e.must(e.sim.SetPeerAlive(c.ID, true), "c back, unhealed")
	e.noViolations("setup")

	hi, err := e.c.HealInfo(bg, "pv1", gd2.HealInfoSummary)
	e.must(err, "heal info")
	if healed(hi) {
		t.Fatal("setup should leave b unhealed")
	}

	vol, err := e.c.GetVolume(bg, "pv1")
	e.must(err, "get volume")
	src, _ := brickOn(vol, a.ID)
	if _, err := e.nodeClient(a.Name).ReplaceBrick(bg, "pv1", gd2.ReplaceBrickRequest{SrcPeerID: a.ID, SrcBrickPath: src.Path, LimitPeers: []string{p4.ID}}); err != nil {
		t.Fatalf("GD2 does not guard replace-brick, the call should succeed: %v", err)
	}
	vs := e.sim.Violations()
	var found bool
	for _, v := range vs {
		if v.Kind == sim.ViolationUnsafeBrickReplace && v.Volume == "pv1" && v.PeerID == a.ID && !v.Rejected {
			found = true
		}
	}
	if !found {
		t.Fatalf("the unsafe replace was not detected; violations %+v", vs)
	}
}
