package sim

import (
	"testing"
	"time"
)

// brickHeal returns heal-info of the brick on peerID.
func (h *harness) brickHeal(peerID string, v wireVolume) wireBrickHealInfo {
	h.t.Helper()
	var path string
	for _, b := range v.Subvols[0].Bricks {
		if b.PeerID == peerID {
			path = b.Host + ":" + b.Path
		}
	}
	var out []wireBrickHealInfo
	h.must(200, "GET", "/v1/volumes/v/heal-info", nil).decode(h.t, &out)
	for _, b := range out {
		if b.Name == path {
			return b
		}
	}
	h.t.Fatalf("no heal-info for %s", path)
	return wireBrickHealInfo{}
}

func (h *harness) peerByID(id string) wirePeer {
	h.t.Helper()
	var p wirePeer
	h.must(200, "GET", "/v1/peers/"+id, nil).decode(h.t, &p)
	return p
}

func TestCrashedGD2StaysOnlineToItsPeersUntilItsLeaseExpires(t *testing.T) {
	h, v := healSetup(t, Config{})
	h.via = "gd2-1"
	h.must(200, "POST", "/v1/volumes/v/options", wireVolOptionReq{Options: map[string]string{optSelfHeal: "on"}, AllowAdvancedOptions: true})
	victim := h.peerOfHost("gd2-3")
	pid := h.peerByID(victim).PID
	if err := h.sim.CrashPeer(victim); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(29 * time.Second)
	if p := h.peerByID(victim); !p.Online || p.PID != pid {
		t.Fatalf("29 s after the crash: %+v, want still online with pid %d", p, pid)
	}
	// Its bricks died with it.
	if b := h.brickHeal(victim, v); b.HostID != "-" {
		t.Fatalf("crashed node's brick in heal-info: %+v", b)
	}
	// The liveness gate passes; the step sent there fails.
	wantCode2(t, h.do("POST", "/v1/volumes/v/heal", nil), "SelfHeal", msgStepUnreachable)
	if r := h.do("POST", "/v1/volumes/v/stop", nil); r.status != 500 || r.errMsg(t) != msgTxnTimeout {
		t.Fatalf("v2 stop with a node whose lease outlives it: %d %s", r.status, r.body)
	}
	h.clock.Step(time.Second)
	if p := h.peerByID(victim); p.Online || p.PID != 0 {
		t.Fatalf("30 s after the crash: %+v, want offline", p)
	}
	if r := h.do("POST", "/v1/volumes/v/heal", nil); r.status != 500 || r.errMsg(t) != "node "+victim+" is probably down" {
		t.Fatalf("after the lease: %d %s", r.status, r.body)
	}
}

func TestCrashWithInstantLivenessIsOfflineAtOnce(t *testing.T) {
	h, _ := healSetup(t, Config{LivenessTTL: Instant})
	victim := h.peerOfHost("gd2-3")
	if err := h.sim.CrashPeer(victim); err != nil {
		t.Fatal(err)
	}
	if p := h.peerByID(victim); p.Online {
		t.Fatalf("crash with Instant liveness: %+v", p)
	}
}

func TestRestartedBricksAreUnreachableUntilTheyReconnect(t *testing.T) {
	h, v := healSetup(t, Config{WriteRate: 10})
	h.via = "gd2-1"
	victim := h.peerOfHost("gd2-3")
	if err := h.sim.RestartPeer(victim); err != nil {
		t.Fatal(err)
	}
	if p := h.peerByID(victim); !p.Online {
		t.Fatalf("restarted peer %+v, want online", p)
	}
	if st := h.statusOfBrick("v", victim, v.Subvols[0].Bricks[2].Path); !st.Online && v.Subvols[0].Bricks[2].PeerID == victim {
		t.Fatalf("restarted brick process %+v, want running", st)
	}
	h.clock.Step(29 * time.Second)
	if b := h.brickHeal(victim, v); b.HostID != "-" || *b.Entries != -1 {
		t.Fatalf("29 s after the restart: %+v, want unreachable", b)
	}
	h.clock.Step(time.Second)
	b := h.brickHeal(victim, v)
	if b.HostID != victim || b.Status != "Connected" {
		t.Fatalf("30 s after the restart: %+v, want connected", b)
	}
	// Writes made meanwhile are for it to heal: its siblings list them.
	var out []wireBrickHealInfo
	h.must(200, "GET", "/v1/volumes/v/heal-info", nil).decode(t, &out)
	if *out[0].Entries+*out[1].Entries+*out[2].Entries == 0 {
		t.Fatalf("no entries to heal after 30 s of writes without the brick: %+v", out)
	}
}

func TestRestartMayStartBricksBeforeMountingThem(t *testing.T) {
	h, v := healSetup(t, Config{UnmountedBrickStarts: 1})
	h.via = "gd2-1"
	victim := h.peerOfHost("gd2-3")
	var path string
	for _, b := range v.Subvols[0].Bricks {
		if b.PeerID == victim {
			path = b.Path
		}
	}
	if err := h.sim.RestartPeer(victim); err != nil {
		t.Fatal(err)
	}
	h.clock.Step(5 * time.Minute)
	if st := h.statusOfBrick("v", victim, path); st.Online || st.PID != 0 {
		t.Fatalf("brick started unmounted: %+v, want offline", st)
	}
	if b := h.brickHeal(victim, v); b.HostID != "-" {
		t.Fatalf("unmounted brick in heal-info: %+v", b)
	}
	h.must(200, "POST", "/v1/volumes/v/start", wireVolStartReq{ForceStartBricks: true})
	if st := h.statusOfBrick("v", victim, path); !st.Online {
		t.Fatalf("after force-start-bricks: %+v, want online", st)
	}
	if b := h.brickHeal(victim, v); b.HostID != victim {
		t.Fatalf("after force-start-bricks heal-info %+v", b)
	}
}

func TestSetPeerAliveSwitchesWithoutGD2Timing(t *testing.T) {
	h, v := healSetup(t, Config{UnmountedBrickStarts: 1})
	victim := h.peerOfHost("gd2-3")
	if err := h.sim.SetPeerAlive(victim, false); err != nil {
		t.Fatal(err)
	}
	if p := h.peerByID(victim); p.Online {
		t.Fatalf("a clean stop shows offline at once: %+v", p)
	}
	if err := h.sim.SetPeerAlive(victim, true); err != nil {
		t.Fatal(err)
	}
	if b := h.brickHeal(victim, v); b.HostID != victim {
		t.Fatalf("brick after SetPeerAlive: %+v, want connected at once", b)
	}
}
