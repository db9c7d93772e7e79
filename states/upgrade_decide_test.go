package states

import (
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

// upgradableCluster is a healthy three-node cluster on 10.4 asked to go to
// 11.1, with a validated run in progress.
func upgradableCluster(state fsm.State) UpgradeSnapshot {
	return UpgradeSnapshot{
		State: state, StateSince: t0.Add(-5 * time.Minute), Now: t0,
		TargetVersion: "11.1", ActiveTarget: "11.1",
		ServerVersions: []string{"10.4"},
		NodesTotal:     3, NodesOnline: 3,
		CSIClientVersion: "10.4", CSINodesTotal: 4,
		StepTimeout: 30 * time.Minute, CompleteHold: 10 * time.Minute,
		NextNodes: []string{"gluster-a-0"},
	}
}

func TestDecideUpgrade(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		mutate     func(*UpgradeSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Step
		wantReason string
	}{
		// Idle.
		{name: "an idle cluster whose version changed starts validating", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) { s.ActiveTarget = "" }, wantEvent: UpgradeRequest},
		{name: "an idle cluster running its version stays idle", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"11.1"}, "11.1"
		}, wantReason: ReasonSteady},
		{name: "an idle paused cluster does not start", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantReason: ReasonPaused},
		{name: "an idle cluster with only an old CSI client still upgrades", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) { s.ServerVersions = []string{"11.1"} }, wantEvent: UpgradeRequest},
		{name: "an idle cluster at its version with a changed node template starts a rollout", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion, s.ServersStaleTemplate = []string{"11.1"}, "11.1", 1
		}, wantEvent: UpgradeRequest},
		{name: "an idle cluster at its version with changed CSI images starts a rollout", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion, s.CSIImagesStale = []string{"11.1"}, "11.1", true
		}, wantEvent: UpgradeRequest},
		{name: "an idle cluster naming no version rolls a changed template", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) {
			s.TargetVersion, s.ServerVersions, s.CSIClientVersion, s.ServersStaleTemplate = "", []string{"11.1"}, "11.1", 2
		}, wantEvent: UpgradeRequest},
		{name: "an idle cluster naming no version and nothing stale stays idle", state: UpgradeIdle, mutate: func(s *UpgradeSnapshot) {
			s.TargetVersion, s.ServerVersions, s.CSIClientVersion = "", []string{"11.1"}, "11.1"
		}, wantReason: ReasonSteady},

		// Validating.
		{name: "a valid one-major upgrade is validated", state: UpgradeValidating, wantEvent: UpgradeValidated},
		{name: "a two-major jump is blocked", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"9.6"}, "9.6"
		}, wantEvent: UpgradeBlock, wantReason: ReasonUnsupportedPath},
		{name: "a downgrade is blocked", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.TargetVersion = "10.1" }, wantEvent: UpgradeBlock, wantReason: ReasonUnsupportedPath},
		{name: "an unparsable target is blocked", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.TargetVersion = "latest" }, wantEvent: UpgradeBlock, wantReason: ReasonInvalidTargetVersion},
		{name: "a CSI client newer than the oldest server is blocked", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.CSIClientVersion = "11.0" }, wantEvent: UpgradeBlock, wantReason: ReasonClientNewerThanSrv},
		{name: "a mixed cluster resuming a one-major upgrade validates", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.ServerVersions = []string{"11.1", "10.4"} }, wantEvent: UpgradeValidated},
		{name: "split-brain blocks validation", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.VolumesSplitBrain = 1 }, wantEvent: UpgradeBlock, wantReason: ReasonSplitBrain},
		{name: "a node not online blocks validation", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.NodesOnline = 2 }, wantEvent: UpgradeBlock, wantReason: ReasonNodesNotOnline},
		{name: "validation with nothing to upgrade cancels", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"11.1"}, "11.1"
		}, wantEvent: UpgradeCancel},
		{name: "validation pauses when paused", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantEvent: UpgradePause},
		{name: "a template-only rollout with no version named is validated", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) {
			s.TargetVersion, s.ServersStaleTemplate = "", 1
		}, wantEvent: UpgradeValidated},
		{name: "a template-only rollout still needs every node Online", state: UpgradeValidating, mutate: func(s *UpgradeSnapshot) {
			s.TargetVersion, s.ServersStaleTemplate, s.NodesOnline = "", 1, 2
		}, wantEvent: UpgradeBlock, wantReason: ReasonNodesNotOnline},

		// RollingServers.
		{name: "rolling servers selects the next node", state: UpgradeRollingServers, wantStep: UpgradeSelectNextNode},
		{name: "rolling servers waits for the node being upgraded", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) {
			s.NodesUpgrading, s.NodesOnline = 1, 2
			s.StepStartedAt = t0.Add(-time.Minute)
		}, wantReason: ReasonNodeUpgrading},
		{name: "rolling servers blocks when a node upgrade outlasts the step timeout", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) {
			s.NodesUpgrading, s.NodesOnline = 1, 2
			s.StepStartedAt = t0.Add(-time.Hour)
		}, wantEvent: UpgradeBlock, wantReason: ReasonStepTimedOut},
		{name: "rolling servers waits for unhealthy volumes before the next node", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.VolumesUnhealthy = 1 }, wantReason: ReasonVolumesNotHealthy},
		{name: "rolling servers picks the next batch when a live read finds the volumes the heal machine has not yet recorded healed", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.VolumesUnhealthy, s.VolumesHealedLive = 2, 2 }, wantStep: UpgradeSelectNextNode},
		{name: "rolling servers waits for a volume the live read did not find healed", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.VolumesUnhealthy, s.VolumesHealedLive = 2, 1 }, wantReason: ReasonVolumesNotHealthy},
		{name: "rolling servers blocks on a node that is not online", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.NodesOnline = 2 }, wantEvent: UpgradeBlock, wantReason: ReasonNodesNotOnline},
		{name: "rolling servers blocks on split-brain", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.VolumesSplitBrain = 1 }, wantEvent: UpgradeBlock, wantReason: ReasonSplitBrain},
		{name: "rolling servers blocks when the target changes", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.TargetVersion = "11.2" }, wantEvent: UpgradeBlock, wantReason: ReasonTargetChanged},
		{name: "rolling servers finishes when every node runs the target", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.NodesAtTarget = []string{"11.1"}, 3
		}, wantEvent: UpgradeServersDone},
		{name: "rolling servers pauses when paused", state: UpgradeRollingServers, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantEvent: UpgradePause},

		// RollingClients.
		{name: "rolling clients sets the CSI plugin version", state: UpgradeRollingClients, wantStep: UpgradeRollClients},
		{name: "rolling clients waits for plugin pods", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget = "11.1", 2
			s.StepStartedAt = t0.Add(-time.Minute)
		}, wantReason: ReasonRollingClients},
		{name: "rolling clients finishes when every plugin runs the target", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget = "11.1", 4
		}, wantEvent: UpgradeClientsDone},
		{name: "rolling clients finishes at once without a CSI driver", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesTotal = "", 0
		}, wantEvent: UpgradeClientsDone},
		{name: "rolling clients finishes when the other plugins are pinned by mounts", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget, s.CSINodesPinned = "11.1", 3, 1
		}, wantEvent: UpgradeClientsDone, wantReason: ReasonClientsPinned},
		{name: "rolling clients does not finish on pinned plugins before the DaemonSet is set", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSINodesPinned = 4
		}, wantStep: UpgradeRollClients},
		{name: "rolling clients waits for a restarted plugin beside pinned ones", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget, s.CSINodesPinned = "11.1", 2, 1
			s.StepStartedAt = t0.Add(-time.Minute)
		}, wantReason: ReasonRollingClients},
		{name: "rolling clients restarts a plugin whose node no longer has mounts", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget, s.CSINodesPinned, s.CSINodesStale = "11.1", 2, 1, 1
			s.StepStartedAt = t0.Add(-time.Minute)
		}, wantStep: UpgradeRollClients},
		{name: "rolling clients sets a DaemonSet that has no pods yet", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSINodesTotal = 0
		}, wantStep: UpgradeRollClients},
		{name: "rolling clients blocks on timeout", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSINodesAtTarget = "11.1", 2
			s.StepStartedAt = t0.Add(-time.Hour)
		}, wantEvent: UpgradeBlock, wantReason: ReasonStepTimedOut},
		{name: "rolling clients pauses when paused", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantEvent: UpgradePause},
		{name: "rolling clients sets changed CSI images at an unchanged version", state: UpgradeRollingClients, mutate: func(s *UpgradeSnapshot) {
			s.CSIClientVersion, s.CSIImagesStale, s.CSINodesAtTarget = "11.1", true, 4
		}, wantStep: UpgradeRollClients},

		// Complete.
		{name: "a complete upgrade is shown for the hold time", state: UpgradeComplete, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"11.1"}, "11.1"
		}, wantReason: ReasonUpgradeComplete},
		{name: "a complete upgrade settles to idle after the hold time", state: UpgradeComplete, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"11.1"}, "11.1"
			s.StateSince = t0.Add(-time.Hour)
		}, wantEvent: UpgradeSettle},
		{name: "a new version after completion starts validating", state: UpgradeComplete, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion = []string{"11.1"}, "11.1"
			s.TargetVersion = "11.2"
		}, wantEvent: UpgradeRequest},
		{name: "a template changed after completion starts a rollout at once", state: UpgradeComplete, mutate: func(s *UpgradeSnapshot) {
			s.ServerVersions, s.CSIClientVersion, s.ServersStaleTemplate = []string{"11.1"}, "11.1", 1
		}, wantEvent: UpgradeRequest},

		// Blocked.
		{name: "a blocked upgrade stays blocked while the check fails", state: UpgradeBlocked, mutate: func(s *UpgradeSnapshot) { s.NodesOnline = 2 }, wantReason: ReasonNodesNotOnline},
		{name: "a blocked upgrade waits for a node mid-upgrade", state: UpgradeBlocked, mutate: func(s *UpgradeSnapshot) { s.NodesUpgrading = 1 }, wantReason: ReasonNodeUpgrading},
		{name: "a blocked upgrade waiting for a node mid-upgrade keeps the reason it was blocked for", state: UpgradeBlocked, mutate: func(s *UpgradeSnapshot) {
			s.NodesUpgrading, s.BlockReason = 1, ReasonStepTimedOut
		}, wantReason: ReasonStepTimedOut},
		{name: "a blocked upgrade retries when checks pass", state: UpgradeBlocked, wantEvent: UpgradeRetry},
		{name: "a blocked upgrade set back to the running version cancels", state: UpgradeBlocked, mutate: func(s *UpgradeSnapshot) { s.TargetVersion = "10.4" }, wantEvent: UpgradeCancel},
		{name: "a blocked upgrade pauses when paused", state: UpgradeBlocked, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantEvent: UpgradePause},

		// Paused.
		{name: "a paused upgrade stays paused", state: UpgradePaused, mutate: func(s *UpgradeSnapshot) { s.Paused = true }, wantReason: ReasonPaused},
		{name: "an unpaused upgrade re-validates", state: UpgradePaused, wantEvent: UpgradeUnpause},

		{name: "an unknown upgrade state is never acted on", state: "Sideways", wantReason: ReasonUnknownState},
	}
	def := UpgradeDefinition()
	var seen []decisionCase
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := upgradableCluster(tc.state)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			got := DecideUpgrade(s)
			if got.Event != tc.wantEvent || got.Step != tc.wantStep {
				t.Fatalf("DecideUpgrade() = event %q step %q (%s: %s), want event %q step %q",
					got.Event, got.Step, got.Reason, got.Message, tc.wantEvent, tc.wantStep)
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
