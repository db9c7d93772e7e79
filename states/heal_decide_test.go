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

func TestDecideHeal(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		mutate     func(*HealSnapshot)
		wantEvent  fsm.Event
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
			if got.Event != tc.wantEvent || got.Step != "" {
				t.Fatalf("DecideHeal() = event %q step %q (%s: %s), want event %q", got.Event, got.Step, got.Reason, got.Message, tc.wantEvent)
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
