package states

import (
	"strings"
	"testing"

	"github.com/gluster/anthill/fsm"
)

// calmCluster is a three-zone cluster with bricks in every zone, every
// node up, everything healed and the budgets in sync.
func calmCluster(state fsm.State, zone string) DisruptionSnapshot {
	s := DisruptionSnapshot{State: state, Zone: zone, Now: t0, GD2Reachable: true, BudgetsInSync: true}
	for _, z := range []string{"zone-1", "zone-2", "zone-3"} {
		s.Zones = append(s.Zones, DisruptionZone{Name: z, BrickNodes: 1, HealChecked: true})
	}
	return s
}

func zoneOf(s *DisruptionSnapshot, name string) *DisruptionZone {
	for i := range s.Zones {
		if s.Zones[i].Name == name {
			return &s.Zones[i]
		}
	}
	panic("no zone " + name)
}

func TestDecideDisruption(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		zone       string
		mutate     func(*DisruptionSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Step
		wantReason string
		wantZone   string
	}{
		{name: "a calm locked cluster opens its first zone", state: DisruptionLocked,
			wantEvent: DisruptionOpenZone, wantReason: ReasonZoneSafe, wantZone: "zone-1"},
		{name: "a locked cluster reopens the zone last open", state: DisruptionLocked, zone: "zone-2",
			wantEvent: DisruptionOpenZone, wantZone: "zone-2"},
		{name: "a locked cluster opens the zone being drained first", state: DisruptionLocked, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-3").DrainRequested = true },
			wantEvent: DisruptionOpenZone, wantReason: ReasonDrainRequested, wantZone: "zone-3"},
		{name: "a drained zone without bricks is not a candidate", state: DisruptionLocked,
			mutate: func(s *DisruptionSnapshot) {
				z := zoneOf(s, "zone-3")
				z.DrainRequested, z.BrickNodes = true, 0
			},
			wantEvent: DisruptionOpenZone, wantZone: "zone-1"},
		{name: "a zone last open that lost its bricks is skipped", state: DisruptionLocked, zone: "zone-2",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").BrickNodes = 0 },
			wantEvent: DisruptionOpenZone, wantZone: "zone-1"},
		{name: "a cluster without bricks stays locked with nothing to protect", state: DisruptionLocked,
			mutate: func(s *DisruptionSnapshot) {
				for i := range s.Zones {
					s.Zones[i].BrickNodes = 0
				}
			},
			wantReason: ReasonNoBricks},
		{name: "a locked cluster waits while GD2 is unreachable", state: DisruptionLocked,
			mutate: func(s *DisruptionSnapshot) { s.GD2Reachable = false }, wantReason: ReasonGD2Unreachable},
		{name: "a locked cluster waits while a node holding bricks in another zone is down", state: DisruptionLocked,
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").Disrupted = []string{"node b is Offline"} },
			wantReason: ReasonDisruptionBlocked},
		{name: "a locked cluster waits for an admitted eviction to finish", state: DisruptionLocked,
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").EvictionsInFlight = 1 },
			wantReason: ReasonDisruptionBlocked},
		{name: "a locked cluster waits for a volume in the candidate zone to heal", state: DisruptionLocked,
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").UnhealthyVolumes = []string{"vol"} },
			wantReason: ReasonDisruptionBlocked},
		{name: "a locked cluster does not trust a heal machine the live heal-info contradicts", state: DisruptionLocked,
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").HealNotClean = []string{"vol"} },
			wantReason: ReasonDisruptionBlocked},
		{name: "a locked cluster does not open a zone whose heal-info was not read", state: DisruptionLocked,
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").HealChecked = false },
			wantReason: ReasonDisruptionBlocked},
		{name: "a locked cluster repairs drifted budgets while it waits", state: DisruptionLocked,
			mutate: func(s *DisruptionSnapshot) {
				s.BudgetsInSync = false
				zoneOf(s, "zone-1").Disrupted = []string{"pod a-0 is not ready"}
			},
			wantStep: DisruptionApplyBudgets, wantReason: ReasonBudgetsDrifted},

		{name: "an open zone stays open while calm", state: DisruptionOpen, zone: "zone-1",
			wantReason: ReasonZoneOpen, wantZone: "zone-1"},
		{name: "an open zone repairs drifted budgets", state: DisruptionOpen, zone: "zone-1",
			mutate: func(s *DisruptionSnapshot) { s.BudgetsInSync = false }, wantStep: DisruptionApplyBudgets},
		{name: "an open zone whose pod was evicted is disrupted", state: DisruptionOpen, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").Disrupted = []string{"pod a-0 is being deleted"} },
			wantEvent: DisruptionDisrupted, wantReason: ReasonZoneDisrupted, wantZone: "zone-1"},
		{name: "an open zone with an admitted eviction is disrupted", state: DisruptionOpen, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").EvictionsInFlight = 1 },
			wantEvent: DisruptionDisrupted},
		{name: "an open zone with a volume pending heal is disrupted", state: DisruptionOpen, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").UnhealthyVolumes = []string{"vol"} },
			wantEvent: DisruptionDisrupted},
		{name: "an open zone locks for a node down in another zone", state: DisruptionOpen, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-3").Disrupted = []string{"node c is Offline"} },
			wantEvent: DisruptionLock, wantReason: ReasonDisruptedElsewhere},
		{name: "an open zone locks when GD2 is unreachable", state: DisruptionOpen, zone: "zone-1",
			mutate: func(s *DisruptionSnapshot) { s.GD2Reachable = false }, wantEvent: DisruptionLock, wantReason: ReasonGD2Unreachable},
		{name: "an open zone that is gone locks", state: DisruptionOpen, zone: "zone-9",
			wantEvent: DisruptionLock, wantReason: ReasonZoneGone},
		{name: "an open zone hands over to a zone being drained", state: DisruptionOpen, zone: "zone-1",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").DrainRequested = true },
			wantEvent: DisruptionLock, wantReason: ReasonZoneHandover},
		{name: "an open zone being drained keeps the slot while another zone is drained too", state: DisruptionOpen, zone: "zone-1",
			mutate: func(s *DisruptionSnapshot) {
				zoneOf(s, "zone-1").DrainRequested = true
				zoneOf(s, "zone-2").DrainRequested = true
			},
			wantReason: ReasonZoneOpen},

		{name: "a recovering zone waits for its node to come back", state: DisruptionRecovering, zone: "zone-1",
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").Disrupted = []string{"node a is Offline"} },
			wantReason: ReasonDisruptionBlocked, wantZone: "zone-1"},
		{name: "a recovering zone waits for heal", state: DisruptionRecovering, zone: "zone-1",
			mutate:     func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").HealNotClean = []string{"vol"} },
			wantReason: ReasonDisruptionBlocked},
		{name: "a recovering zone waits while GD2 is unreachable", state: DisruptionRecovering, zone: "zone-1",
			mutate:     func(s *DisruptionSnapshot) { s.GD2Reachable = false },
			wantReason: ReasonDisruptionBlocked},
		{name: "a recovering zone repairs drifted budgets while it waits", state: DisruptionRecovering, zone: "zone-1",
			mutate: func(s *DisruptionSnapshot) {
				s.BudgetsInSync = false
				zoneOf(s, "zone-1").UnhealthyVolumes = []string{"vol"}
			},
			wantStep: DisruptionApplyBudgets},
		{name: "a recovered zone reopens (sticky) even when another zone is first", state: DisruptionRecovering, zone: "zone-2",
			wantEvent: DisruptionRecovered, wantReason: ReasonZoneSafe, wantZone: "zone-2"},
		{name: "a recovering zone that lost its bricks locks", state: DisruptionRecovering, zone: "zone-2",
			mutate:    func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").BrickNodes = 0 },
			wantEvent: DisruptionLock, wantReason: ReasonZoneGone},
	}
	var cases []decisionCase
	def := DisruptionDefinition()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := calmCluster(tt.state, tt.zone)
			if tt.mutate != nil {
				tt.mutate(&s)
			}
			got := DecideDisruption(s)
			cases = append(cases, decisionCase{name: tt.name, state: tt.state, got: got})
			checkDecisionIsAllowed(t, def, tt.state, got)
			if got.Event != tt.wantEvent || got.Step != tt.wantStep {
				t.Fatalf("event %q step %q, want %q %q (%s: %s)", got.Event, got.Step, tt.wantEvent, tt.wantStep, got.Reason, got.Message)
			}
			if tt.wantReason != "" && got.Reason != tt.wantReason {
				t.Errorf("reason %q, want %q (%s)", got.Reason, tt.wantReason, got.Message)
			}
			if tt.wantZone != "" && got.Subject != tt.wantZone {
				t.Errorf("zone %q, want %q", got.Subject, tt.wantZone)
			}
		})
	}
	checkCoverage(t, def, cases)
}

// The one invariant the budgets exist for: the machine never opens a zone
// (open or recovered) while any node holding bricks is disrupted, an
// eviction is in flight, or a volume in that zone is not healed by both
// the heal machine and a live read.
func TestDisruptionNeverOpensAnUnsafeZone(t *testing.T) {
	unsafe := []func(*DisruptionSnapshot){
		func(s *DisruptionSnapshot) { s.GD2Reachable = false },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").Disrupted = []string{"x"} },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-2").Disrupted = []string{"x"} },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-3").EvictionsInFlight = 1 },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").UnhealthyVolumes = []string{"v"} },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").HealNotClean = []string{"v"} },
		func(s *DisruptionSnapshot) { zoneOf(s, "zone-1").HealChecked = false },
	}
	for _, st := range []fsm.State{DisruptionLocked, DisruptionRecovering} {
		for i, m := range unsafe {
			for _, drift := range []bool{false, true} {
				s := calmCluster(st, "zone-1")
				s.BudgetsInSync = !drift
				m(&s)
				got := DecideDisruption(s)
				if got.Event == DisruptionOpenZone || got.Event == DisruptionRecovered {
					t.Errorf("%s, unsafe case %d: decided %s of %s (%s)", st, i, got.Event, got.Subject, got.Message)
				}
			}
		}
	}
}

func TestDisruptionUnknownStateIsRefused(t *testing.T) {
	got := DecideDisruption(DisruptionSnapshot{State: "Ajar"})
	if got.Event != "" || got.Step != "" || got.Reason != ReasonUnknownState || !strings.Contains(got.Message, "Ajar") {
		t.Fatalf("got %+v", got)
	}
}
