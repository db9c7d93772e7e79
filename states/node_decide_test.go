package states

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

var t0 = time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)

// healthyNode is an Online node with nothing to do: the base every case
// changes.
func healthyNode(state fsm.State) NodeSnapshot {
	return NodeSnapshot{
		State: state, StateSince: t0.Add(-time.Hour), Now: t0,
		PVCExists: true, PVCBound: true, PodExists: true, PodReady: true,
		RunningVersion: "10.4", TargetVersion: "10.4",
		PermissibleDowntime: 30 * time.Minute, UpgradeStepTimeout: 10 * time.Minute,
		GD2Reachable: true, PeerKnown: true, PeerID: "6f1c", PeerAlive: true,
		BricksOnNode: 3,
	}
}

type nodeCase struct {
	name      string
	state     fsm.State
	mutate    func(*NodeSnapshot)
	wantEvent fsm.Event
	wantStep  fsm.Step
	// wantReason is checked when set.
	wantReason string
}

func nodeCases() []nodeCase {
	return []nodeCase{
		// Pending.
		{name: "a new node is provisioned at once", state: NodePending, mutate: func(s *NodeSnapshot) { s.PodExists, s.PVCExists = false, false }, wantEvent: NodeProvision},
		{name: "a node deleted before provisioning goes straight to deleting", state: NodePending, mutate: func(s *NodeSnapshot) { s.Deleting = true }, wantEvent: NodeRemove},

		// Provisioning.
		{name: "a provisioning node waits for its PVC to bind", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.PVCBound = false }, wantReason: ReasonWaitingForPod},
		{name: "a provisioning node waits for its pod to be ready", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.PodReady = false }, wantReason: ReasonWaitingForPod},
		{name: "a provisioning node waits while GD2 is unreachable", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.GD2Reachable = false }, wantReason: ReasonGD2Unreachable},
		{name: "a provisioning node joins when its pod is ready", state: NodeProvisioning, wantEvent: NodeJoin},
		{name: "a provisioning node waits for the cluster's first node to join before it", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.JoinAfter = "gc-a-1" }, wantReason: ReasonWaitingForPoolSeed},
		{name: "a provisioning node that is decommissioned detaches any half-added peer", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.Request = RequestDecommission }, wantEvent: NodeDetach},

		// Joining.
		{name: "a joining node activates once its peer is alive", state: NodeJoining, wantEvent: NodeActivate},
		{name: "a joining node waits for its peer to be listed", state: NodeJoining, mutate: func(s *NodeSnapshot) { s.PeerKnown = false }, wantReason: ReasonWaitingForPeer},
		{name: "a joining node waits for its peer to be alive", state: NodeJoining, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantReason: ReasonWaitingForPeer},
		{name: "a joining node that is deleted detaches", state: NodeJoining, mutate: func(s *NodeSnapshot) { s.Deleting = true }, wantEvent: NodeDetach},

		// Online.
		{name: "an online node with nothing to do stays", state: NodeOnline, wantReason: ReasonSteady},
		{name: "a disabled online node disables its devices", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Disabled, s.DevicesEnabled = true, 2 }, wantStep: NodeDisableDevices},
		{name: "a disabled online node with its devices disabled stays, saying so", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Disabled, s.DevicesEnabled, s.DevicesDisabled = true, 0, 2
		}, wantReason: ReasonNodeDisabled},
		{name: "an enabled online node enables disabled devices", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.DevicesDisabled = 1 }, wantStep: NodeEnableDevices},
		{name: "an online node whose upgrade ended before its devices were enabled again enables them", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.RunningVersion, s.TargetVersion, s.DevicesDisabled = "11.1", "11.1", 2
		}, wantStep: NodeEnableDevices},
		{name: "an online node with devices disabled by a restart, then asked for maintenance, enters maintenance without enabling them", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Request, s.DevicesDisabled = RequestMaintenance, 2
		}, wantEvent: NodeEnterMaintenance},
		{name: "an online node with devices disabled by a restart, then decommissioned, drains without enabling them", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Request, s.DevicesDisabled = RequestDecommission, 2
		}, wantEvent: NodeDrain},
		{name: "an online node with devices disabled by a restart, then deleted, drains without enabling them", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Deleting, s.DevicesDisabled = true, 2
		}, wantEvent: NodeDrain},
		{name: "an online node back from an upgrade whose spec.desiredState is disabled keeps its devices disabled", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.RunningVersion, s.TargetVersion, s.Disabled, s.DevicesDisabled = "11.1", "11.1", true, 2
		}, wantReason: ReasonNodeDisabled},
		{name: "a disabled online node is still upgraded", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Disabled, s.UpgradeSelected, s.TargetVersion = true, true, "11.2"
		}, wantEvent: NodeUpgrade},
		{name: "a disabled online node still goes offline when its peer dies", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Disabled, s.PeerAlive = true, false }, wantEvent: NodePeerLost},
		{name: "an online node goes offline when GD2 reports the peer dead", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantEvent: NodePeerLost},
		{name: "an online node whose peer just dropped stays online for the offline grace", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.PeerAlive, s.OfflineGrace, s.DownSince = false, 30*time.Second, t0.Add(-10*time.Second)
		}, wantReason: ReasonPeerUnresponsive},
		{name: "an online node goes offline once the peer stayed dead for the offline grace", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.PeerAlive, s.OfflineGrace, s.DownSince = false, 30*time.Second, t0.Add(-30*time.Second)
		}, wantEvent: NodePeerLost},
		{name: "an online node whose peer was never seen down before waits the grace from now", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.PeerAlive, s.OfflineGrace = false, 30*time.Second
		}, wantReason: ReasonPeerUnresponsive},
		{name: "an online node missing from the peer list is left alone", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.PeerKnown = false; s.PeerAlive = false }, wantReason: ReasonPeerMissing},
		{name: "an online node does nothing while GD2 is unreachable", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.GD2Reachable = false; s.PeerAlive = false }, wantReason: ReasonGD2Unreachable},
		{name: "an online node enters maintenance on request", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Request = RequestMaintenance }, wantEvent: NodeEnterMaintenance},
		{name: "an online node drains on a decommission request", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Request = RequestDecommission }, wantEvent: NodeDrain, wantReason: ReasonDecommissionRequested},
		{name: "an online node drains when its GlusterNode is deleted", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Deleting = true }, wantEvent: NodeDrain, wantReason: ReasonDeletionRequested},
		{name: "an online node selected for upgrade starts quiescing", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.UpgradeSelected = true; s.TargetVersion = "11.1" }, wantEvent: NodeUpgrade},
		{name: "an online node selected for upgrade but already at target stays", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.UpgradeSelected = true }, wantReason: ReasonSteady},
		{name: "an online node selected to roll a changed template starts quiescing", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetRevision = true, "r2"
		}, wantEvent: NodeUpgrade},
		{name: "an online node with a changed template but not selected stays", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.TargetRevision = "r2" }, wantReason: ReasonSteady},
		{name: "a resume request on an online node changes nothing", state: NodeOnline, mutate: func(s *NodeSnapshot) { s.Request = RequestResume }, wantReason: ReasonSteady},

		// Offline.
		{name: "an offline node within the permissible downtime waits", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.DownSince = t0.Add(-10 * time.Minute) }, wantReason: ReasonWithinDowntime},
		{name: "an offline node past the permissible downtime fails", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.DownSince = t0.Add(-31 * time.Minute) }, wantEvent: NodeMarkFailed},
		{name: "an offline node without a recorded down time waits a full window", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantReason: ReasonWithinDowntime},
		{name: "an offline node whose peer disappeared from the list never fails", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.PeerAlive, s.PeerKnown = false, false
			s.DownSince = t0.Add(-48 * time.Hour)
		}, wantReason: ReasonWithinDowntime},
		{name: "an offline node never fails while GD2 is unreachable", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.GD2Reachable, s.PeerAlive = false, false
			s.DownSince = t0.Add(-48 * time.Hour)
		}, wantReason: ReasonGD2Unreachable},
		{name: "an offline node whose peer is back recovers", state: NodeOffline, wantEvent: NodePeerRecovered},
		{name: "an offline node whose peer just came back stays offline for the recovery window", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.RecoveryWindow, s.AliveSince, s.DownSince = 2*time.Minute, t0.Add(-time.Minute), t0.Add(-time.Hour)
		}, wantReason: ReasonPeerRecovering},
		{name: "an offline node whose peer stayed alive for the recovery window recovers", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.RecoveryWindow, s.AliveSince = 2*time.Minute, t0.Add(-2*time.Minute)
		}, wantEvent: NodePeerRecovered},
		{name: "an offline node enters maintenance on request", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.Request = RequestMaintenance }, wantEvent: NodeEnterMaintenance},
		{name: "an offline node drains on a decommission request", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.Request = RequestDecommission }, wantEvent: NodeDrain},
		{name: "an offline node whose pod is stuck on a lost Kubernetes node with movable storage evicts it", state: NodeOffline, mutate: lostPodOffline, wantStep: NodeEvictLostPod},

		// Maintenance.
		{name: "a node in maintenance stays however long it is down", state: NodeMaintenance, mutate: func(s *NodeSnapshot) {
			s.PeerAlive = false
			s.DownSince = t0.Add(-72 * time.Hour)
			s.Request = RequestMaintenance
		}, wantReason: ReasonInMaintenance},
		{name: "a node in maintenance disables devices that are enabled", state: NodeMaintenance, mutate: func(s *NodeSnapshot) { s.DevicesEnabled = 2 }, wantStep: NodeDisableDevices},
		{name: "a node in maintenance leaves a dead peer's devices alone", state: NodeMaintenance, mutate: func(s *NodeSnapshot) { s.DevicesEnabled, s.PeerAlive = 2, false }, wantReason: ReasonInMaintenance},
		{name: "a node in maintenance resumes on request when alive", state: NodeMaintenance, mutate: func(s *NodeSnapshot) { s.Request = RequestResume }, wantEvent: NodeResume},
		{name: "a node in maintenance waits for its peer before resuming", state: NodeMaintenance, mutate: func(s *NodeSnapshot) { s.Request = RequestResume; s.PeerAlive = false }, wantReason: ReasonWaitingForPeer},
		{name: "a node in maintenance drains on a decommission request", state: NodeMaintenance, mutate: func(s *NodeSnapshot) { s.Request = RequestDecommission }, wantEvent: NodeDrain},

		// Failed.
		{name: "a failed node is never drained by itself: GD2 cannot move a dead peer's bricks", state: NodeFailed, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantReason: ReasonBricksUnmovable},
		{name: "a failed node drains on an explicit decommission even while dead", state: NodeFailed, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.Request = RequestDecommission }, wantEvent: NodeDrain, wantReason: ReasonDecommissionRequested},
		{name: "a failed node whose peer came back recovers", state: NodeFailed, wantEvent: NodePeerRecovered},
		{name: "a failed node whose peer just came back waits out the recovery window", state: NodeFailed, mutate: func(s *NodeSnapshot) {
			s.RecoveryWindow, s.AliveSince = 2*time.Minute, t0.Add(-time.Minute)
		}, wantReason: ReasonPeerRecovering},
		{name: "a failed node enters maintenance on request", state: NodeFailed, mutate: func(s *NodeSnapshot) { s.PeerAlive = false; s.Request = RequestMaintenance }, wantEvent: NodeEnterMaintenance},
		{name: "a failed node that is decommissioned drains even if it came back", state: NodeFailed, mutate: func(s *NodeSnapshot) { s.Request = RequestDecommission }, wantEvent: NodeDrain, wantReason: ReasonDecommissionRequested},

		// Draining.
		{name: "a draining node moves its next brick", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1" }, wantStep: NodeMoveBrick},
		{name: "a draining node disables its devices before moving bricks", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.DevicesEnabled = 1
		}, wantStep: NodeDisableDevices},
		{name: "a draining node waits for the previous replacement to heal", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.ReplacementsHealing = 1
		}, wantReason: ReasonReplacementHealing},
		{name: "a draining node allowed parallel moves moves another brick while fewer replacements heal", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.ReplacementsHealing, s.MaxParallelMoves = 2, 3
		}, wantStep: NodeMoveBrick},
		{name: "a draining node with as many replacements healing as its parallel moves waits", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.ReplacementsHealing, s.MaxParallelMoves = 3, 3
		}, wantReason: ReasonReplacementHealing},
		{name: "a draining node with replacements healing and no brick that may move beside them waits for the heal", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.ReplacementsHealing, s.MaxParallelMoves = 1, 3
			s.DrainBlockedReason = "no alive peer outside zones"
		}, wantReason: ReasonReplacementHealing},
		{name: "a drained node waits for every replacement to heal whatever its parallel moves", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.BricksOnNode, s.ReplacementsHealing, s.MaxParallelMoves = 0, 1, 3
		}, wantReason: ReasonReplacementHealing},
		{name: "a draining node never moves a brick holding the only healed copy", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.SoleHealedCopies = 2
		}, wantReason: ReasonSoleHealedCopy},
		{name: "a draining node whose only bricks left would drop their replica set below quorum waits", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.QuorumAtRisk = 1
		}, wantReason: ReasonQuorumAtRisk},
		{name: "a draining node moves a brick of another replica set while one set would lose quorum", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.QuorumAtRisk = 1
		}, wantStep: NodeMoveBrick},
		{name: "a draining node waits when no brick can be placed", state: NodeDraining, wantReason: ReasonDrainBlocked},
		{name: "a draining node names the node of the volume that is down", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.DrainBlockedReason, s.VolumeNodeDown = "node storage/b is down", "node storage/b is down"
		}, wantReason: ReasonVolumeNodeDown},
		{name: "a draining node that would break quorum because a node of the volume is down names that node", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.VolumeNodeDown = "node storage/b is down"
			s.QuorumAtRisk = 1
		}, wantReason: ReasonVolumeNodeDown},
		{name: "a draining node moves a brick of another volume while a node of one volume is down", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol2", "/bricks/vol2/b1"
			s.VolumeNodeDown = "node storage/b is down"
		}, wantStep: NodeMoveBrick},
		{name: "a draining node whose own peer is dead waits for it", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.PeerAlive = false
			s.DrainBlockedReason, s.VolumeNodeDown = "node storage/a is down", "node storage/a is down"
		}, wantReason: ReasonVolumeNodeDown},
		{name: "a drained node with a live peer detaches", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0 }, wantEvent: NodeDetach},
		{name: "a drained node whose last replacement is still healing waits", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.ReplacementsHealing = 1 }, wantReason: ReasonReplacementHealing},
		{name: "a draining node makes GD2 heal a replacement it moved before anything else", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b2"
			s.ReplacementsHealing, s.ReplacementsFilling = 1, 1
			s.HealReplacementVolume, s.HealReplacementBrick = "vol1", "/bricks/vol1/b1"
		}, wantStep: NodeHealReplacement},
		{name: "a replacement's heal waits for the down node of its volume (GD2 refuses it)", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.ReplacementsHealing, s.ReplacementsFilling = 1, 1
			s.HealReplacementVolume, s.HealReplacementBrick = "vol1", "/bricks/vol1/b1"
			s.HealReplacementNodeDown = "node-c (zone-3)"
		}, wantReason: ReasonVolumeNodeDown},
		{name: "a drained node whose replacement reads 0 pending but is still filling does not detach", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.BricksOnNode = 0
			s.ReplacementsHealing, s.ReplacementsFilling = 1, 1
		}, wantReason: ReasonReplacementHealing},
		{name: "a drained node with a dead peer is abandoned", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerAlive = false }, wantEvent: NodeAbandon},
		{name: "a decommission is cancelled by a resume request", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.Request = RequestResume }, wantEvent: NodeResume},
		{name: "a deleted node's drain cannot be cancelled", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Request, s.Deleting = RequestResume, true
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
		}, wantStep: NodeMoveBrick},
		{name: "a draining node does nothing while GD2 is unreachable", state: NodeDraining, mutate: func(s *NodeSnapshot) { s.GD2Reachable = false; s.BricksOnNode = 0 }, wantReason: ReasonGD2Unreachable},

		// Abandoned.
		{name: "an abandoned node whose dead peer holds no brick removes its workload, leaving the peer as a tombstone", state: NodeAbandoned, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerAlive = false }, wantEvent: NodeRemove, wantReason: ReasonAbandoned},
		{name: "an abandoned node whose peer holds bricks again keeps its storage", state: NodeAbandoned, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantReason: ReasonBricksStillOnNode},
		{name: "an abandoned node whose peer left GD2's list waits for the admin", state: NodeAbandoned, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerKnown, s.PeerAlive = false, false }, wantReason: ReasonPeerMissing},
		{name: "an abandoned node whose peer came back detaches it", state: NodeAbandoned, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0 }, wantEvent: NodeDetach},
		{name: "an abandoned node that is deleted removes its workload", state: NodeAbandoned, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerAlive = false; s.Deleting = true }, wantEvent: NodeRemove},
		{name: "an abandoned node is not removed while GD2 cannot confirm it has no bricks", state: NodeAbandoned, mutate: func(s *NodeSnapshot) {
			s.BricksOnNode = 0
			s.PeerAlive, s.GD2Reachable, s.Deleting = false, false, true
		}, wantReason: ReasonGD2Unreachable},

		// Detaching.
		{name: "a detaching node deletes its peer", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0 }, wantStep: NodeDeletePeer},
		{name: "a detaching node never deletes a peer with bricks", state: NodeDetaching, wantReason: ReasonBricksStillOnNode},
		{name: "a detaching node waits for a dead peer it cannot delete", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerAlive = false }, wantReason: ReasonPeerNotAlive},
		{name: "a detached node removes its workload", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerKnown = false }, wantEvent: NodeRemove},
		{name: "the last peer of a cluster being deleted is removed with its pool", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.ClusterDeleting = true; s.OnlyPeer = true }, wantEvent: NodeRemove},
		{name: "the last peer is kept while its cluster lives on", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.OnlyPeer = true }, wantStep: NodeDeletePeer},
		{name: "the last peer of a cluster being deleted still keeps bricks", state: NodeDetaching, mutate: func(s *NodeSnapshot) { s.ClusterDeleting = true; s.OnlyPeer = true }, wantReason: ReasonBricksStillOnNode},

		// Deleting.
		{name: "a deleting node deletes its pod and PVC", state: NodeDeleting, mutate: func(s *NodeSnapshot) { s.BricksOnNode = 0; s.PeerKnown = false }, wantStep: NodeDeleteWorkload},
		{name: "a deleting node refuses while its peer still has bricks", state: NodeDeleting, wantReason: ReasonBricksStillOnNode},
		{name: "a deleting node finishes when the pod and PVC are gone", state: NodeDeleting, mutate: func(s *NodeSnapshot) { s.PodExists, s.PVCExists = false, false }, wantEvent: NodeFinish},

		// Deleted.
		{name: "a deleted node does nothing", state: NodeDeleted, wantReason: ReasonSteady},

		// Upgrade sub-states.
		{name: "a quiescing node restarts when stopping is safe", state: NodeQuiescing, mutate: func(s *NodeSnapshot) { s.UpgradeSelected = true; s.TargetVersion = "11.1" }, wantEvent: NodeRestart},
		{name: "a quiescing node safe to stop restarts, its devices still enabled (restart's action disables them)", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.DevicesEnabled = true, "11.1", 2
		}, wantEvent: NodeRestart, wantReason: ReasonSafeToStop},
		{name: "a quiescing node whose devices are already disabled restarts", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.DevicesDisabled = true, "11.1", 2
		}, wantEvent: NodeRestart},
		{name: "a quiescing node not yet safe to stop keeps its devices enabled", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.DevicesEnabled, s.SoleHealedCopies = true, "11.1", 2, 1
		}, wantReason: ReasonSoleHealedCopy},
		{name: "a quiescing node waiting for an earlier batch member keeps its devices enabled", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.DevicesEnabled, s.UpgradeAhead = true, "11.1", 2, []string{"n1"}
		}, wantReason: ReasonBatchMemberFirst},
		{name: "a quiescing node no longer selected returns online without touching its devices", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.TargetVersion, s.DevicesEnabled = "11.1", 2
		}, wantEvent: NodeAbortUpgrade},
		{name: "a quiescing node waits while it holds the only healed copy", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.SoleHealedCopies = true, "11.1", 1
		}, wantReason: ReasonSoleHealedCopy},
		{name: "a quiescing node waits while stopping it would break quorum", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.QuorumAtRisk = true, "11.1", 1
		}, wantReason: ReasonQuorumAtRisk},
		{name: "a quiescing node waits for an earlier batch member sharing a replica set", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.UpgradeAhead = true, "11.1", []string{"n-0"}
		}, wantReason: ReasonBatchMemberFirst},
		{name: "a paused quiescing node returns online even while an earlier batch member goes first", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.UpgradeAhead, s.Paused = true, "11.1", []string{"n-0"}, true
		}, wantEvent: NodeAbortUpgrade},
		{name: "a quiescing node no longer selected returns online", state: NodeQuiescing, mutate: func(s *NodeSnapshot) { s.TargetVersion = "11.1" }, wantEvent: NodeAbortUpgrade},
		{name: "a quiescing node whose peer dies goes offline", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetVersion, s.PeerAlive = true, "11.1", false
		}, wantEvent: NodePeerLost},
		{name: "a restarting node rejoins when its pod is ready at the target", state: NodeRestarting, wantEvent: NodeRejoin},
		{name: "a restarting node waits while its ready pod runs the old template", state: NodeRestarting, mutate: func(s *NodeSnapshot) {
			s.TargetRevision = "r2"
			s.StateSince = t0.Add(-time.Minute)
		}, wantStep: NodeRollWorkload, wantReason: ReasonRestarting},
		{name: "a quiescing node whose template is current again returns online", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected = true
		}, wantEvent: NodeAbortUpgrade, wantReason: ReasonUpgradeDeselected},
		{name: "a quiescing node selected for a changed template restarts when safe", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.UpgradeSelected, s.TargetRevision = true, "r2"
		}, wantEvent: NodeRestart},
		{name: "a restarting node waits for the new pod", state: NodeRestarting, mutate: func(s *NodeSnapshot) {
			s.PodReady, s.TargetVersion = false, "11.1"
			s.StateSince = t0.Add(-time.Minute)
		}, wantStep: NodeRollWorkload, wantReason: ReasonRestarting},
		{name: "a restarting node that outlasts the step timeout goes offline", state: NodeRestarting, mutate: func(s *NodeSnapshot) { s.PodReady = false }, wantEvent: NodePeerLost, wantReason: ReasonRestartTimedOut},
		{name: "a rejoining node waits for its bricks", state: NodeRejoining, mutate: func(s *NodeSnapshot) {
			s.BricksOffline = 1
			s.StateSince = t0.Add(-time.Minute)
		}, wantReason: ReasonBricksOffline},
		{name: "a rejoining node awaits heal once its peer and bricks are back", state: NodeRejoining, wantEvent: NodeAwaitHeal},
		{name: "a rejoining node that outlasts the step timeout goes offline", state: NodeRejoining, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantEvent: NodePeerLost},
		{name: "a node waiting for heal waits while entries are pending", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.PendingHealEntries = 12 }, wantReason: ReasonHealPending},
		{name: "a node waiting for heal waits on split-brain", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.SplitBrainEntries = 1 }, wantReason: ReasonSplitBrain},
		{name: "a node waiting for heal is upgraded when healed", state: NodeHealWait, wantEvent: NodeUpgraded},
		{name: "a healed node whose restart disabled its devices is upgraded, Online enabling them", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.DevicesDisabled = 2 }, wantEvent: NodeUpgraded},
		{name: "a node still healing keeps its devices disabled", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.DevicesDisabled, s.PendingHealEntries = 2, 5 }, wantReason: ReasonHealPending},
		{name: "a node waiting for heal whose restarted brick heal-info cannot reach yet is not healed, however clean the counts look", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.BricksUnreachable = 1 }, wantReason: ReasonBrickDown},
		{name: "a node waiting for heal with a sibling brick unreachable and entries pending waits for the brick first", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.BricksUnreachable = 1; s.PendingHealEntries = 4 }, wantReason: ReasonBrickDown},
		{name: "a node waiting for heal whose peer dies goes offline", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.PeerAlive = false }, wantEvent: NodePeerLost},

		// Unknown.
		{name: "an unknown state is never acted on", state: "Exploded", wantReason: ReasonUnknownState},

		// Paused (spec.paused): nothing that changes the pool starts.
		{name: "paused: a new node is not provisioned", state: NodePending, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantReason: ReasonPaused},
		{name: "paused: a node removed before provisioning is not cleaned up", state: NodePending, mutate: func(s *NodeSnapshot) { s.Paused, s.Deleting = true, true }, wantReason: ReasonPaused},
		{name: "paused: a provisioning node that is decommissioned does not detach", state: NodeProvisioning, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestDecommission
		}, wantReason: ReasonPaused},
		{name: "paused: a joining node that is deleted does not detach", state: NodeJoining, mutate: func(s *NodeSnapshot) { s.Paused, s.Deleting = true, true }, wantReason: ReasonPaused},
		{name: "paused: a provisioning node does not join", state: NodeProvisioning, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantReason: ReasonPaused},
		{name: "paused: a joining node does not activate", state: NodeJoining, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantReason: ReasonPaused},
		{name: "paused: an online node asked to decommission does not start draining", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestDecommission
		}, wantReason: ReasonPaused},
		{name: "paused: an online node selected for upgrade does not start it", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.UpgradeSelected, s.TargetVersion = true, true, "11.1"
		}, wantReason: ReasonPaused},
		{name: "paused: an online node still goes offline when its peer is lost", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PeerAlive = true, false
		}, wantEvent: NodePeerLost},
		{name: "paused: an online node still enters maintenance on request", state: NodeOnline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestMaintenance
		}, wantEvent: NodeEnterMaintenance},
		{name: "paused: an offline node past its downtime is not declared failed", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PeerAlive, s.DownSince = true, false, t0.Add(-time.Hour)
		}, wantReason: ReasonPaused},
		{name: "paused: an offline node's pod stuck on a lost node is not evicted", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			lostPodOffline(s)
			s.Paused = true
		}, wantReason: ReasonPaused},
		{name: "paused: an offline node whose peer came back still recovers", state: NodeOffline, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantEvent: NodePeerRecovered},
		{name: "paused: an offline node asked to decommission does not start draining", state: NodeOffline, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PeerAlive, s.Deleting = true, false, true
		}, wantReason: ReasonPaused},
		{name: "paused: a node in maintenance asked to decommission does not start draining", state: NodeMaintenance, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestDecommission
		}, wantReason: ReasonPaused},
		{name: "paused: a node in maintenance still resumes on request", state: NodeMaintenance, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestResume
		}, wantEvent: NodeResume},
		{name: "paused: a failed node asked to decommission does not start draining", state: NodeFailed, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PeerAlive, s.Request = true, false, RequestDecommission
		}, wantReason: ReasonPaused},
		{name: "paused: a failed node still raises its alert", state: NodeFailed, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PeerAlive = true, false
		}, wantReason: ReasonBricksUnmovable},
		{name: "paused: a draining node moves no brick", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Paused, s.NextBrickVolume, s.NextBrickPath = true, "vol1", "/bricks/vol1/b1"
		}, wantReason: ReasonPaused},
		{name: "paused: a drained node does not detach", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Paused, s.BricksOnNode = true, 0
		}, wantReason: ReasonPaused},
		{name: "paused: a draining node still makes GD2 heal its replacement", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Paused = true
			s.ReplacementsHealing, s.ReplacementsFilling = 1, 1
			s.HealReplacementVolume, s.HealReplacementBrick = "vol1", "/bricks/vol1/b1"
		}, wantStep: NodeHealReplacement},
		{name: "paused: a draining node still disables a re-enabled device", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Paused, s.DevicesEnabled = true, 1
		}, wantStep: NodeDisableDevices},
		{name: "paused: a draining node's decommission can still be cancelled", state: NodeDraining, mutate: func(s *NodeSnapshot) {
			s.Paused, s.Request = true, RequestResume
		}, wantEvent: NodeResume},
		{name: "paused: an abandoned node is not removed", state: NodeAbandoned, mutate: func(s *NodeSnapshot) {
			s.Paused, s.BricksOnNode, s.PeerAlive = true, 0, false
		}, wantReason: ReasonPaused},
		{name: "paused: a detaching node does not delete its peer", state: NodeDetaching, mutate: func(s *NodeSnapshot) {
			s.Paused, s.BricksOnNode = true, 0
		}, wantReason: ReasonPaused},
		{name: "paused: a deleting node that left the pool still deletes its workload", state: NodeDeleting, mutate: func(s *NodeSnapshot) {
			s.Paused, s.BricksOnNode, s.PeerKnown = true, 0, false
		}, wantStep: NodeDeleteWorkload},
		{name: "paused: a quiescing node returns online without being stopped", state: NodeQuiescing, mutate: func(s *NodeSnapshot) {
			s.Paused, s.UpgradeSelected, s.TargetVersion = true, true, "11.1"
		}, wantEvent: NodeAbortUpgrade, wantReason: ReasonPaused},
		{name: "paused: a restarting node still rolls its pod and comes back", state: NodeRestarting, mutate: func(s *NodeSnapshot) {
			s.Paused, s.PodReady, s.TargetVersion = true, false, "11.1"
			s.StateSince = t0.Add(-time.Minute)
		}, wantStep: NodeRollWorkload},
		{name: "paused: a rejoining node still awaits heal", state: NodeRejoining, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantEvent: NodeAwaitHeal},
		{name: "paused: a healed node still finishes its upgrade", state: NodeHealWait, mutate: func(s *NodeSnapshot) { s.Paused = true }, wantEvent: NodeUpgraded},
	}
}

func TestDecideNode(t *testing.T) {
	def := NodeDefinition()
	var seen []decisionCase
	for _, tc := range nodeCases() {
		t.Run(tc.name, func(t *testing.T) {
			s := healthyNode(tc.state)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			got := DecideNode(s)
			if got.Event != tc.wantEvent || got.Step != tc.wantStep {
				t.Fatalf("DecideNode() = event %q step %q (%s: %s), want event %q step %q",
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

func TestDecideNodeIsPure(t *testing.T) {
	for _, tc := range nodeCases() {
		s := healthyNode(tc.state)
		if tc.mutate != nil {
			tc.mutate(&s)
		}
		if a, b := DecideNode(s), DecideNode(s); !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two calls disagree: %+v vs %+v", tc.name, a, b)
		}
	}
}

// The waits an admin must act on are Warnings (one Event per change); the
// ordinary ones are not.
func TestDecideNodeMarksAlertWorthyWaitsAsWarnings(t *testing.T) {
	failed := healthyNode(NodeFailed)
	failed.PeerAlive = false
	down := healthyNode(NodeDraining)
	down.DrainBlockedReason, down.VolumeNodeDown = "node storage/b is down", "node storage/b is down"
	for _, s := range []NodeSnapshot{failed, down} {
		if d := DecideNode(s); !d.Warning || !d.Waiting() {
			t.Errorf("%s (%s): Warning %t, want a warning wait", s.State, d.Reason, d.Warning)
		}
	}
	if d := DecideNode(healthyNode(NodeOnline)); d.Warning {
		t.Errorf("a steady Online node's wait (%s) is a Warning", d.Reason)
	}
}

// TestDrainMessagesShowTheMovesInFlight: what the node's status message,
// its Events and `kubectl gluster explain` show of a drain with moves in
// flight: how many replacements heal, the brick moving now, and what is
// left.
func TestDrainMessagesShowTheMovesInFlight(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*NodeSnapshot)
		want   []string
		// after is the requeue wanted.
		after time.Duration
	}{
		{name: "a move beside others names the replacements healing and the bricks left, and looks again soon for the next", mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.ReplacementsHealing, s.MaxParallelMoves = 2, 4
		}, want: []string{"2 replacement brick(s) healing", "moving brick /bricks/vol1/b1 of volume vol1", "3 left", "maxParallelMoves 4"}, after: pollBeside},
		{name: "a drain at its bound names the replacements healing and the bound", mutate: func(s *NodeSnapshot) {
			s.ReplacementsHealing, s.MaxParallelMoves = 4, 4
		}, want: []string{"Waiting for 4 replacement brick(s) to heal", "maxParallelMoves 4", "3 brick(s) left"}, after: pollLong},
		{name: "a first move says nothing is healing", mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.MaxParallelMoves = 4
		}, want: []string{"Moving brick /bricks/vol1/b1 of volume vol1 off the node (3 left)."}, after: pollBeside},
		{name: "a move that fills the bound looks again at the step's usual pace", mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.ReplacementsHealing, s.MaxParallelMoves = 3, 4
		}, want: []string{"3 replacement brick(s) healing"}, after: pollShort},
		{name: "a move one at a time looks again at the step's usual pace", mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
		}, want: []string{"Moving brick /bricks/vol1/b1"}, after: pollShort},
		{name: "the node's last brick looks again at the step's usual pace", mutate: func(s *NodeSnapshot) {
			s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1/b1"
			s.BricksOnNode, s.MaxParallelMoves = 1, 4
		}, want: []string{"(1 left)"}, after: pollShort},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := healthyNode(NodeDraining)
			tc.mutate(&s)
			d := DecideNode(s)
			for _, w := range tc.want {
				if !strings.Contains(d.Message, w) {
					t.Errorf("message %q does not say %q", d.Message, w)
				}
			}
			if d.RequeueAfter != tc.after {
				t.Errorf("requeue after %s, want %s", d.RequeueAfter, tc.after)
			}
		})
	}
}

// An upgrading node's waits and steps look again soon enough that a batch
// is not held by its polling: a heal's end is noticed within a second.
func TestUpgradingNodeRequeues(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  fsm.State
		mutate func(*NodeSnapshot)
		most   time.Duration
	}{
		{name: "a node waiting for entries to heal looks again within a second", state: NodeHealWait,
			mutate: func(s *NodeSnapshot) { s.PendingHealEntries = 40 }, most: time.Second},
		{name: "a node waiting for a sibling brick to be reachable looks again within a second", state: NodeHealWait,
			mutate: func(s *NodeSnapshot) { s.BricksUnreachable = 1 }, most: time.Second},
		{name: "a rejoining node looks again within a second", state: NodeRejoining,
			mutate: func(s *NodeSnapshot) { s.BricksOffline, s.StateSince = 1, t0.Add(-time.Minute) }, most: time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := healthyNode(tc.state)
			tc.mutate(&s)
			d := DecideNode(s)
			if d.Event != "" || d.RequeueAfter <= 0 || d.RequeueAfter > tc.most {
				t.Errorf("DecideNode() = event %q step %q, requeue after %s (%s), want a wait or step requeued within %s", d.Event, d.Step, d.RequeueAfter, d.Message, tc.most)
			}
		})
	}
}
