package states

import (
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

func TestLivenessClocks(t *testing.T) {
	earlier := t0.Add(-5 * time.Minute)
	var zero time.Time
	cases := []struct {
		name                string
		state               fsm.State
		reachable, known    bool
		alive               bool
		down, aliveSince    time.Time
		wantDown, wantAlive time.Time
	}{
		{name: "an online node's first not-alive report starts the outage", state: NodeOnline, reachable: true, known: true, wantDown: t0},
		{name: "an online node keeps the start of an outage already recorded", state: NodeOnline, reachable: true, known: true, down: earlier, wantDown: earlier},
		{name: "an online node seen alive forgets a short drop", state: NodeOnline, reachable: true, known: true, alive: true, down: earlier},
		{name: "an offline node seen alive starts the recovery window and keeps the outage", state: NodeOffline, reachable: true, known: true, alive: true, down: earlier, wantDown: earlier, wantAlive: t0},
		{name: "an offline node still alive keeps its recovery window", state: NodeOffline, reachable: true, known: true, alive: true, down: earlier, aliveSince: earlier, wantDown: earlier, wantAlive: earlier},
		{name: "an offline node lost again after being seen alive starts a new outage", state: NodeOffline, reachable: true, known: true, down: earlier, aliveSince: earlier, wantDown: t0},
		{name: "an offline node still down keeps its outage", state: NodeOffline, reachable: true, known: true, down: earlier, wantDown: earlier},
		{name: "a failed node seen alive starts the recovery window", state: NodeFailed, reachable: true, known: true, alive: true, down: earlier, wantDown: earlier, wantAlive: t0},
		{name: "nothing changes while GD2 is unreachable", state: NodeOffline, known: true, alive: true, down: earlier, wantDown: earlier},
		{name: "nothing changes for a peer missing from the list", state: NodeOnline, reachable: true, down: earlier, aliveSince: earlier, wantDown: earlier, wantAlive: earlier},
		{name: "a draining node's clocks are left alone", state: NodeDraining, reachable: true, known: true, alive: true, down: earlier, wantDown: earlier},
		{name: "a node in maintenance is exempt", state: NodeMaintenance, reachable: true, known: true, wantDown: zero},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := NodeSnapshot{State: tc.state, Now: t0, GD2Reachable: tc.reachable, PeerKnown: tc.known, PeerAlive: tc.alive, DownSince: tc.down, AliveSince: tc.aliveSince}
			down, alive := LivenessClocks(s)
			if !down.Equal(tc.wantDown) || !alive.Equal(tc.wantAlive) {
				t.Errorf("LivenessClocks() = (%v, %v), want (%v, %v)", down, alive, tc.wantDown, tc.wantAlive)
			}
		})
	}
}

// TestFlappingPeerIsNeverFailed replays a peer that is down for most of
// every minute, for two hours, against a 30-minute deadline: it must never
// be marked failed, and it must leave Online once, not once per flap.
func TestFlappingPeerIsNeverFailed(t *testing.T) {
	s := NodeSnapshot{
		State: NodeOnline, GD2Reachable: true, PeerKnown: true,
		PermissibleDowntime: 30 * time.Minute, OfflineGrace: 30 * time.Second, RecoveryWindow: 2 * time.Minute,
	}
	lost := 0
	for sec := 0; sec < 2*3600; sec += 5 {
		s.Now = t0.Add(time.Duration(sec) * time.Second)
		s.PeerAlive = sec%60 >= 45 // alive 15 s of every minute
		s.DownSince, s.AliveSince = LivenessClocks(s)
		d := DecideNode(s)
		switch d.Event {
		case "":
			continue
		case NodePeerLost:
			lost++
		case NodeMarkFailed:
			t.Fatalf("a flapping peer was marked failed at %s", s.Now.Sub(t0))
		}
		m, err := NodeDefinition().NewMachine(s.State)
		if err != nil {
			t.Fatal(err)
		}
		tr, err := m.Fire(t.Context(), d.Event)
		if err != nil {
			t.Fatal(err)
		}
		s.State = tr.To
		if s.State == NodeOnline {
			s.DownSince, s.AliveSince = time.Time{}, time.Time{}
		}
	}
	if lost != 1 {
		t.Errorf("the node went Offline %d times, want once", lost)
	}
	if s.State != NodeOffline {
		t.Errorf("a peer that never stays up for the recovery window ends %s, want Offline", s.State)
	}
}

// The peer list a liveness clock is set from is at most half the shorter
// window old; without windows, any age will do.
func TestLivenessListAge(t *testing.T) {
	for _, c := range []struct {
		grace, window, want time.Duration
	}{
		{30 * time.Second, 2 * time.Minute, 15 * time.Second},
		{2 * time.Second, 4 * time.Second, time.Second},
		{10 * time.Second, 4 * time.Second, 2 * time.Second},
		{0, 4 * time.Second, 2 * time.Second},
		{2 * time.Second, 0, time.Second},
		{0, 0, 0},
	} {
		if got := LivenessListAge(c.grace, c.window); got != c.want {
			t.Errorf("LivenessListAge(%s, %s) = %s, want %s", c.grace, c.window, got, c.want)
		}
	}
}

// The peer watch reads a cluster's peers every LivenessListAge, or at the
// fallback without windows.
func TestPeerWatchInterval(t *testing.T) {
	if got := PeerWatchInterval(30*time.Second, 2*time.Minute, 5*time.Second); got != 15*time.Second {
		t.Errorf("at the default windows: %s, want 15s", got)
	}
	if got := PeerWatchInterval(0, 0, 5*time.Second); got != 5*time.Second {
		t.Errorf("without windows: %s, want the fallback 5s", got)
	}
}

// A node whose liveness the peer watch follows sets no liveness timer of
// its own: at rest it looks again only every pollRest, and a countdown
// wait ends at its deadline, not at the next sample. Without the watch,
// every wait that depends on liveness polls at most pollShort apart.
func TestAWatchedNodeWaitsWithoutALivenessTimer(t *testing.T) {
	now := time.Date(2026, 12, 5, 8, 0, 0, 0, time.UTC)
	base := NodeSnapshot{
		Now: now, GD2Reachable: true, PeerKnown: true, PeerAlive: true, PeerID: "p1",
		PVCExists: true, PVCBound: true, PodExists: true, PodReady: true, DevicesEnabled: 1,
		OfflineGrace: 30 * time.Second, RecoveryWindow: 2 * time.Minute, PermissibleDowntime: 30 * time.Minute,
	}
	for _, c := range []struct {
		name      string
		mutate    func(*NodeSnapshot)
		unwatched time.Duration
		watched   time.Duration
	}{
		{"online at rest", func(s *NodeSnapshot) { s.State = NodeOnline }, 15 * time.Second, pollRest},
		{"online and disabled", func(s *NodeSnapshot) {
			s.State, s.Disabled, s.DevicesEnabled, s.DevicesDisabled = NodeOnline, true, 0, 1
		}, 15 * time.Second, pollRest},
		{"online within the offline grace", func(s *NodeSnapshot) {
			s.State, s.PeerAlive, s.DownSince = NodeOnline, false, now.Add(-10*time.Second)
		}, 15 * time.Second, 20 * time.Second},
		{"offline within the permissible downtime", func(s *NodeSnapshot) {
			s.State, s.PeerAlive, s.DownSince = NodeOffline, false, now.Add(-25*time.Minute)
		}, 15 * time.Second, 5 * time.Minute},
		{"offline, recovering", func(s *NodeSnapshot) {
			s.State, s.DownSince, s.AliveSince = NodeOffline, now.Add(-time.Hour), now.Add(-time.Minute)
		}, 15 * time.Second, time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := base
			c.mutate(&s)
			d := DecideNode(s)
			if !d.Waiting() || d.RequeueAfter != c.unwatched {
				t.Errorf("unwatched: %+v, want a wait of %s", d, c.unwatched)
			}
			s.PeerWatched = true
			d = DecideNode(s)
			if !d.Waiting() || d.RequeueAfter != c.watched {
				t.Errorf("watched: %+v, want a wait of %s", d, c.watched)
			}
		})
	}
}
