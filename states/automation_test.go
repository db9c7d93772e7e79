package states

import (
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

// Each switch of spec.automation holds its own change, with reason
// AutomationOff and a message naming the field, and nothing else: the
// same snapshot with the switch on makes the change, and with another
// switch off it still does.
func TestEverySwitchHoldsItsChangeAlone(t *testing.T) {
	type decided struct {
		event fsm.Event
		step  fsm.Step
	}
	cases := []struct {
		name  string
		field string
		// decide decides with off switched off, from a snapshot where the
		// change is due.
		decide func(off AutomationOff) Decision
		on     decided
	}{
		{"disruptionBudgets holds opening a zone", "disruptionBudgets", func(off AutomationOff) Decision {
			s := calmCluster(DisruptionLocked, "")
			s.Off = off
			return DecideDisruption(s)
		}, decided{event: DisruptionOpenZone}},
		{"disruptionBudgets holds locking a disrupted zone", "disruptionBudgets", func(off AutomationOff) Decision {
			s := calmCluster(DisruptionOpen, "zone-1")
			zoneOf(&s, "zone-1").Disrupted = []string{"gluster-a-0 Offline"}
			s.Off = off
			return DecideDisruption(s)
		}, decided{event: DisruptionDisrupted}},
		{"disruptionBudgets holds bringing drifted budgets back", "disruptionBudgets", func(off AutomationOff) Decision {
			s := calmCluster(DisruptionOpen, "zone-1")
			s.BudgetsInSync = false
			s.Off = off
			return DecideDisruption(s)
		}, decided{step: DisruptionApplyBudgets}},
		{"templateRollouts holds a rollout of a changed template", "templateRollouts", func(off AutomationOff) Decision {
			s := upgradableCluster(UpgradeIdle)
			s.ServerVersions, s.CSIClientVersion, s.ServersStaleTemplate = []string{"11.1"}, "11.1", 1
			s.Off = off
			return DecideUpgrade(s)
		}, decided{event: UpgradeRequest}},
		{"templateRollouts holds a rollout of changed CSI images after a run", "templateRollouts", func(off AutomationOff) Decision {
			s := upgradableCluster(UpgradeComplete)
			s.StateSince = t0.Add(-time.Hour)
			s.ServerVersions, s.CSIClientVersion, s.CSIImagesStale = []string{"11.1"}, "11.1", true
			s.Off = off
			d := DecideUpgrade(s)
			if d.Event == UpgradeSettle {
				// Complete settles into Idle, which holds the rollout.
				s.State = UpgradeIdle
				d = DecideUpgrade(s)
			}
			return d
		}, decided{event: UpgradeRequest}},
		{"clusterOptions holds setting options", "clusterOptions", func(off AutomationOff) Decision {
			s := readyCluster(ClusterReady)
			s.OptionsDiffer = []string{"cluster.brick-multiplex"}
			s.Off = off
			return DecideCluster(s)
		}, decided{step: ClusterApplyOptions}},
		{"lostPodEviction holds force-deleting a lost pod", "lostPodEviction", func(off AutomationOff) Decision {
			s := healthyNode(NodeOffline)
			lostPodOffline(&s)
			s.Off = off
			return DecideNode(s)
		}, decided{step: NodeEvictLostPod}},
		{"markFailed holds marking a node down too long Failed", "markFailed", func(off AutomationOff) Decision {
			s := healthyNode(NodeOffline)
			s.PeerAlive, s.DownSince = false, t0.Add(-31*time.Minute)
			s.Off = off
			return DecideNode(s)
		}, decided{event: NodeMarkFailed}},
		{"forceStartBricks holds starting bricks GD2 left offline", "forceStartBricks", func(off AutomationOff) Decision {
			s := cleanVolume(HealHealPending)
			s.PendingEntries, s.BricksUnreachable = 9, 2
			s.NotStarted = notStarted(2, t0.Add(-31*time.Second))
			s.Off = off
			return DecideHeal(s)
		}, decided{step: HealForceStartBricks}},
	}
	all := []string{"disruptionBudgets", "templateRollouts", "clusterOptions", "lostPodEviction", "markFailed", "forceStartBricks"}
	switchOff := func(fields ...string) AutomationOff {
		var off AutomationOff
		for _, f := range fields {
			switch f {
			case "disruptionBudgets":
				off.DisruptionBudgets = true
			case "templateRollouts":
				off.TemplateRollouts = true
			case "clusterOptions":
				off.ClusterOptions = true
			case "lostPodEviction":
				off.LostPodEviction = true
			case "markFailed":
				off.MarkFailed = true
			case "forceStartBricks":
				off.ForceStartBricks = true
			default:
				t.Fatalf("unknown switch %s", f)
			}
		}
		return off
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if d := tc.decide(AutomationOff{}); d.Event != tc.on.event || d.Step != tc.on.step {
				t.Fatalf("on: %s/%s (%s), want %s/%s", d.Event, d.Step, d.Reason, tc.on.event, tc.on.step)
			}
			var others []string
			for _, f := range all {
				if f != tc.field {
					others = append(others, f)
				}
			}
			if d := tc.decide(switchOff(others...)); d.Event != tc.on.event || d.Step != tc.on.step {
				t.Fatalf("every other switch off: %s/%s (%s), want %s/%s", d.Event, d.Step, d.Reason, tc.on.event, tc.on.step)
			}
			d := tc.decide(switchOff(tc.field))
			if d.Event != "" || d.Step != "" || d.Reason != ReasonAutomationOff || !strings.Contains(d.Message, "spec.automation."+tc.field+" is false") {
				t.Fatalf("off: %s/%s %s: %s; want a wait AutomationOff naming spec.automation.%s", d.Event, d.Step, d.Reason, d.Message, tc.field)
			}
			t.Logf("%s", d.Message)
		})
	}
}

// A template rollout already validating when it is switched off is called
// off before it rolls a server; a version upgrade is not a rollout and
// goes on.
func TestTemplateRolloutsOffCancelsOnlyARollout(t *testing.T) {
	s := upgradableCluster(UpgradeValidating)
	s.Off.TemplateRollouts = true
	if d := DecideUpgrade(s); d.Event != UpgradeValidated {
		t.Fatalf("a version upgrade with rollouts off: %s (%s: %s), want validated", d.Event, d.Reason, d.Message)
	}
	s.ServerVersions, s.CSIClientVersion, s.ServersStaleTemplate = []string{"11.1"}, "11.1", 1
	if d := DecideUpgrade(s); d.Event != UpgradeCancel || d.Reason != ReasonAutomationOff {
		t.Fatalf("a template rollout switched off while validating: %s (%s), want cancel AutomationOff", d.Event, d.Reason)
	}
}

// Lost-pod eviction off holds only the eviction: a node down past its
// permissible downtime is still marked Failed.
func TestLostPodEvictionOffStillMarksFailed(t *testing.T) {
	s := healthyNode(NodeOffline)
	lostPodOffline(&s)
	s.DownSince = t0.Add(-31 * time.Minute)
	s.Off.LostPodEviction = true
	if d := DecideNode(s); d.Event != NodeMarkFailed {
		t.Fatalf("%s/%s (%s), want markFailed", d.Event, d.Step, d.Reason)
	}
}
