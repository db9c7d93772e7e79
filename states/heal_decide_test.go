package states

import (
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

func cleanVolume(state fsm.State) HealSnapshot {
	return HealSnapshot{
		State: state, StateSince: t0.Add(-10 * time.Minute), Now: t0,
		Redundant: true, Started: true, HealInfoOK: true,
		StallTimeout: 15 * time.Minute,
	}
}

// notStarted is n bricks offline on one live peer since since, with the
// default grace.
func notStarted(n int, since time.Time) BricksNotStarted {
	return BricksNotStarted{Count: n, Peers: []string{"peer-a"}, Since: since, Grace: 30 * time.Second}
}

func TestDecideHeal(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		mutate     func(*HealSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Step
		wantReason string
	}{
		{name: "a new volume with a clean reading is healthy", state: HealUnknown, wantEvent: HealHealed},
		{name: "a new volume with pending entries needs heal", state: HealUnknown, mutate: func(s *HealSnapshot) { s.PendingEntries = 4 }, wantEvent: HealPendingFound},
		{name: "a new volume in split-brain is reported", state: HealUnknown, mutate: func(s *HealSnapshot) { s.SplitBrainEntries = 1 }, wantEvent: HealSplitBrainFound},
		{name: "an unknown volume stays unknown while heal-info fails", state: HealUnknown, mutate: func(s *HealSnapshot) { s.HealInfoOK = false }, wantReason: ReasonHealInfoFailed},
		{name: "an unknown volume that is not started stays unknown", state: HealUnknown, mutate: func(s *HealSnapshot) { s.Started = false }, wantReason: ReasonVolumeNotStarted},
		{name: "a volume without redundancy is healthy at once", state: HealUnknown, mutate: func(s *HealSnapshot) { s.Redundant = false; s.HealInfoOK = false }, wantEvent: HealHealed, wantReason: ReasonHealNotApplicable},
		{name: "a healthy volume without redundancy stays healthy", state: HealHealthy, mutate: func(s *HealSnapshot) { s.Redundant = false }, wantReason: ReasonHealNotApplicable},

		{name: "a healthy volume with nothing pending stays", state: HealHealthy, wantReason: ReasonHealthy},
		{name: "a healthy volume with pending entries needs heal", state: HealHealthy, mutate: func(s *HealSnapshot) { s.PendingEntries = 1 }, wantEvent: HealPendingFound},
		{name: "a healthy volume with an unreachable brick needs heal", state: HealHealthy, mutate: func(s *HealSnapshot) { s.BricksUnreachable = 1 }, wantEvent: HealPendingFound},
		{name: "a healthy volume in split-brain is reported", state: HealHealthy, mutate: func(s *HealSnapshot) { s.SplitBrainEntries = 2 }, wantEvent: HealSplitBrainFound},
		{name: "a healthy volume whose heal-info fails becomes unknown", state: HealHealthy, mutate: func(s *HealSnapshot) { s.HealInfoOK = false }, wantEvent: HealLostContact},
		{name: "a healthy volume that is stopped becomes unknown", state: HealHealthy, mutate: func(s *HealSnapshot) { s.Started = false }, wantEvent: HealLostContact, wantReason: ReasonVolumeNotStarted},

		{name: "a pending volume with every brick reachable starts healing", state: HealHealPending, mutate: func(s *HealSnapshot) { s.PendingEntries = 9 }, wantEvent: HealStartHeal},
		{name: "a pending volume whose self-heal daemon is off waits, saying so, instead of asking GD2 again", state: HealHealPending, mutate: func(s *HealSnapshot) { s.PendingEntries = 9; s.SelfHealOff = true }, wantReason: ReasonSelfHealDisabled},
		{name: "a pending volume with a brick down waits for it", state: HealHealPending, mutate: func(s *HealSnapshot) { s.PendingEntries = 9; s.BricksUnreachable = 1 }, wantReason: ReasonBrickDown},
		{name: "a pending volume whose bricks GD2 left offline on a live peer past the grace starts them", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 2
			s.NotStarted = notStarted(2, t0.Add(-31*time.Second))
		}, wantStep: HealForceStartBricks, wantReason: ReasonBricksNotStarted},
		{name: "a pending volume whose bricks are offline on a live peer waits out the grace first", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 2
			s.NotStarted = notStarted(2, t0.Add(-10*time.Second))
		}, wantReason: ReasonBrickDown},
		{name: "a pending volume whose bricks were only just seen offline on a live peer waits the whole grace", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 1
			s.NotStarted = notStarted(1, time.Time{})
		}, wantReason: ReasonBrickDown},
		{name: "a pending volume with no grace starts bricks offline on a live peer at once", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 1
			s.NotStarted = notStarted(1, t0)
			s.NotStarted.Grace = 0
		}, wantStep: HealForceStartBricks, wantReason: ReasonBricksNotStarted},
		{name: "a pending volume never starts bricks while anthill is changing the volume", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 1
			s.NotStarted = notStarted(1, t0.Add(-time.Hour))
			s.NotStarted.Changing = "node ns/b is Draining"
		}, wantReason: ReasonBrickDown},
		{name: "a pending volume never starts bricks while a peer of the volume is down", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 2
			s.NotStarted = notStarted(1, t0.Add(-time.Hour))
			s.NotStarted.PeersDown = 1
		}, wantReason: ReasonBrickDown},
		{name: "a pending volume whose offline bricks are all on dead peers just waits for them", state: HealHealPending, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 9, 1
			s.NotStarted = BricksNotStarted{PeersDown: 1, Grace: 30 * time.Second}
		}, wantReason: ReasonBrickDown},
		{name: "a healthy volume with bricks offline on a live peer first notes the pending heal", state: HealHealthy, mutate: func(s *HealSnapshot) {
			s.BricksUnreachable = 1
			s.NotStarted = notStarted(1, t0.Add(-time.Hour))
		}, wantEvent: HealPendingFound},
		{name: "a healing volume whose brick GD2 left offline stalls, to start it from HealPending", state: HealHealing, mutate: func(s *HealSnapshot) {
			s.PendingEntries, s.BricksUnreachable = 3, 1
			s.NotStarted = notStarted(1, t0.Add(-time.Hour))
		}, wantEvent: HealStalled, wantReason: ReasonBrickDown},
		{name: "a pending volume that healed by itself is healthy", state: HealHealPending, wantEvent: HealHealed},
		{name: "a pending volume in split-brain is reported", state: HealHealPending, mutate: func(s *HealSnapshot) { s.SplitBrainEntries = 1 }, wantEvent: HealSplitBrainFound},
		{name: "a pending volume whose heal-info fails becomes unknown", state: HealHealPending, mutate: func(s *HealSnapshot) { s.HealInfoOK = false }, wantEvent: HealLostContact},

		{name: "a healing volume making progress waits", state: HealHealing, mutate: func(s *HealSnapshot) { s.PendingEntries = 3 }, wantReason: ReasonHealProgressing},
		{name: "a healing volume reaching zero is healthy", state: HealHealing, wantEvent: HealHealed},
		{name: "a healing volume whose trigger GD2 could not deliver watches the daemon's own crawl, saying so", state: HealHealing, mutate: func(s *HealSnapshot) { s.PendingEntries = 3; s.TriggerNotDelivered = true }, wantReason: ReasonHealTriggerFailed},
		{name: "a healing volume whose trigger GD2 could not deliver is healthy once the crawl is done", state: HealHealing, mutate: func(s *HealSnapshot) { s.TriggerNotDelivered = true }, wantEvent: HealHealed},
		{name: "a healing volume whose undelivered trigger made no progress for the stall timeout stalls, to trigger again", state: HealHealing, mutate: func(s *HealSnapshot) {
			s.PendingEntries = 3
			s.TriggerNotDelivered = true
			s.StateSince = t0.Add(-time.Hour)
		}, wantEvent: HealStalled, wantReason: ReasonHealStalled},
		{name: "a healing volume without progress for the stall timeout stalls", state: HealHealing, mutate: func(s *HealSnapshot) {
			s.PendingEntries = 3
			s.StateSince = t0.Add(-time.Hour)
			s.LastProgressAt = t0.Add(-20 * time.Minute)
		}, wantEvent: HealStalled, wantReason: ReasonHealStalled},
		{name: "a healing volume with recent progress does not stall", state: HealHealing, mutate: func(s *HealSnapshot) {
			s.PendingEntries = 3
			s.StateSince = t0.Add(-time.Hour)
			s.LastProgressAt = t0.Add(-time.Minute)
		}, wantReason: ReasonHealProgressing},
		{name: "a healing volume losing a brick stalls", state: HealHealing, mutate: func(s *HealSnapshot) { s.PendingEntries = 3; s.BricksUnreachable = 1 }, wantEvent: HealStalled, wantReason: ReasonBrickDown},
		{name: "a healing volume in split-brain is reported", state: HealHealing, mutate: func(s *HealSnapshot) { s.SplitBrainEntries = 1 }, wantEvent: HealSplitBrainFound},
		{name: "a healing volume whose heal-info fails becomes unknown", state: HealHealing, mutate: func(s *HealSnapshot) { s.HealInfoOK = false }, wantEvent: HealLostContact},

		{name: "a split-brain volume waits for the admin", state: HealSplitBrain, mutate: func(s *HealSnapshot) { s.SplitBrainEntries = 1 }, wantReason: ReasonSplitBrain},
		{name: "a split-brain volume keeps its state when heal-info fails", state: HealSplitBrain, mutate: func(s *HealSnapshot) { s.HealInfoOK = false }, wantReason: ReasonHealInfoFailed},
		{name: "a resolved split-brain with entries left needs heal", state: HealSplitBrain, mutate: func(s *HealSnapshot) { s.PendingEntries = 2 }, wantEvent: HealPendingFound},
		{name: "a resolved split-brain with nothing left is healthy", state: HealSplitBrain, wantEvent: HealHealed},

		{name: "an unknown heal state is never acted on", state: "Melting", wantReason: ReasonUnknownState},
	}
	def := HealDefinition()
	var seen []decisionCase
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := cleanVolume(tc.state)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			got := DecideHeal(s)
			if got.Event != tc.wantEvent || got.Step != tc.wantStep {
				t.Fatalf("DecideHeal() = event %q step %q (%s: %s), want event %q step %q", got.Event, got.Step, got.Reason, got.Message, tc.wantEvent, tc.wantStep)
			}
			if tc.wantReason != "" && got.Reason != tc.wantReason {
				t.Errorf("Reason = %q, want %q (%s)", got.Reason, tc.wantReason, got.Message)
			}
			if def.HasState(tc.state) {
				checkDecisionIsAllowed(t, def, tc.state, got)
			}
			seen = append(seen, decisionCase{name: tc.name, state: tc.state, got: got})
		})
	}
	checkCoverage(t, def, seen)
}

func TestDecideHealLooksAgainWhenTheBrickStartGraceEnds(t *testing.T) {
	s := cleanVolume(HealHealPending)
	s.PendingEntries, s.BricksUnreachable = 9, 1
	s.NotStarted = notStarted(1, t0.Add(-25*time.Second))
	if d := DecideHeal(s); d.RequeueAfter != 5*time.Second || !d.Waiting() {
		t.Fatalf("DecideHeal() = %+v; want a wait of the 5s left of the grace", d)
	}
}

func TestChangesBricks(t *testing.T) {
	tests := []struct {
		name  string
		state fsm.State
		want  bool
	}{
		{name: "a draining node has its bricks moved", state: NodeDraining, want: true},
		{name: "a node about to be stopped for an upgrade is being changed", state: NodeQuiescing, want: true},
		{name: "a node whose pod is being rolled is being changed", state: NodeRestarting, want: true},
		{name: "a node in maintenance is the admin's", state: NodeMaintenance, want: true},
		{name: "a node leaving the pool is being changed", state: NodeDetaching, want: true},
		{name: "a restarted node waiting for its bricks may have them started", state: NodeRejoining},
		{name: "a restarted node waiting for heal may have them started", state: NodeHealWait},
		{name: "an online node may have them started", state: NodeOnline},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := ChangesBricks(tc.state); got != tc.want {
				t.Errorf("ChangesBricks(%s) = %t, want %t", tc.state, got, tc.want)
			}
		})
	}
}
