package states

import (
	"time"

	"github.com/gluster/anthill/fsm"
)

// Upgrade states, one machine per cluster; full contract in UpgradeDefinition.
const (
	// UpgradeIdle: no upgrade running; left by requestUpgrade.
	UpgradeIdle fsm.State = "Idle"
	// UpgradeValidating: preflight checks; left by validated, block, pause, cancel.
	UpgradeValidating fsm.State = "Validating"
	// UpgradeRollingServers: one server at a time; left by serversDone, block, pause.
	UpgradeRollingServers fsm.State = "RollingServers"
	// UpgradeRollingClients: CSI node plugins; left by clientsDone, block, pause.
	UpgradeRollingClients fsm.State = "RollingClients"
	// UpgradeComplete: everything at the target; left by settle or requestUpgrade.
	UpgradeComplete fsm.State = "Complete"
	// UpgradeBlocked: a check or a timeout stopped the roll; left by retry, pause, cancel.
	UpgradeBlocked fsm.State = "Blocked"
	// UpgradePaused: spec.paused; left by unpause.
	UpgradePaused fsm.State = "Paused"
)

// Upgrade events and steps; documented in UpgradeDefinition.
const (
	UpgradeRequest     fsm.Event = "requestUpgrade"
	UpgradeValidated   fsm.Event = "validated"
	UpgradeServersDone fsm.Event = "serversDone"
	UpgradeClientsDone fsm.Event = "clientsDone"
	UpgradeBlock       fsm.Event = "block"
	UpgradeRetry       fsm.Event = "retry"
	UpgradePause       fsm.Event = "pause"
	UpgradeUnpause     fsm.Event = "unpause"
	UpgradeCancel      fsm.Event = "cancel"
	UpgradeSettle      fsm.Event = "settle"

	// Steps.
	UpgradeSelectNextNode fsm.Step = "selectNextNode"
	UpgradeRollClients    fsm.Step = "rollClients"
)

// UpgradeMachine is the machine name used in logs, metrics and docs.
const UpgradeMachine = "upgrade"

// UpgradeDefinition returns the upgrade machine (a fresh copy per call).
func UpgradeDefinition() *fsm.Definition {
	return &fsm.Definition{
		Machine: UpgradeMachine,
		Doc: "One machine per GlusterCluster, persisted in `GlusterCluster.status.upgrade`, started by changing " +
			"the cluster's version, or anything else in the servers' pod template (image, resources, env, tolerations, " +
			"affinity: the template revision) or the CSI images. It validates the upgrade, then rolls the Gluster servers batch by batch (one node by default; up to " +
			"`upgradePolicy.maxParallel` nodes of one zone with `perZone`) " +
			"(each node walks its own Quiescing → Restarting → Rejoining → HealWait states), then the CSI node " +
			"plugins. Clients are rolled last because a CSI client must never be newer than the servers it " +
			"mounts from. The target a run validated is recorded in status when `validated` fires; changing " +
			"the version mid-run blocks the run so that the new target is validated against the mixed cluster.",
		Initial: UpgradeIdle,
		States: []fsm.StateDoc{
			{Name: UpgradeIdle, Doc: "Initial state, and entered by `settle` or `cancel`. Every server and client " +
				"runs the cluster's version and template. Left by `requestUpgrade` when either changes (not while paused, " +
				"and not for a template alone while `spec.automation.templateRollouts` is false: reason `AutomationOff`)."},
			{Name: UpgradeValidating, Doc: "Entered by `requestUpgrade`, `retry` or `unpause`. Checks that every " +
				"running server version may reach the target per the compatibility table (one major release at a " +
				"time, never backwards), that the CSI client is not newer than the oldest server, that no volume " +
				"is in split-brain, and that every node is Online. Left by `validated`, `block` with the failed " +
				"check as reason, `pause`, or `cancel` if there turns out to be nothing to upgrade."},
			{Name: UpgradeRollingServers, Doc: "Entered by `validated`. The `selectNextNode` step picks the next " +
				"batch of nodes not at the target (zone by zone; one node unless `upgradePolicy.maxParallel` says " +
				"more); each node's own machine upgrades it, and the next batch is picked only when the whole batch " +
				"is back Online and every volume is healthy: recorded Healthy by its heal machine, or found healed by a " +
				"live read of bricks status and heal-info made then. Left by `serversDone` when all nodes run the " +
				"target, `block` on split-brain, a node that is not Online, a changed target or a step that " +
				"outlasts the step timeout, or `pause`."},
			{Name: UpgradeRollingClients, Doc: "Entered by `serversDone`. The `rollClients` step sets the CSI node " +
				"plugins (and the block targets) to the target version and restarts the plugin pods on nodes where " +
				"no pod uses a volume of the cluster; it runs again while such a node still has an old plugin pod. " +
				"The node plugin DaemonSets use OnDelete: a plugin pod on a node with Gluster mounts in use is " +
				"pinned — restarting it would kill the FUSE mounts under the running pods — and keeps the old " +
				"version until the node is drained or an admin deletes the pod. Waits until every plugin pod runs " +
				"the target or is pinned. Left by `clientsDone`, `block` on timeout or a changed target, or `pause`."},
			{Name: UpgradeComplete, Doc: "Entered by `clientsDone`. Everything runs the target. Shown for a while " +
				"so the admin sees the result; left by `settle` after that, or by `requestUpgrade` if the version " +
				"or a template changes again."},
			{Name: UpgradeBlocked, Doc: "Entered by `block`; the Progressing condition says why. Servers may run " +
				"mixed versions, which Gluster supports across one major step. Re-checks on every sync and is left " +
				"by `retry` when the validation checks pass again (the run then resumes where it stopped), by " +
				"`cancel` if the version was set back to what every server runs, or by `pause`."},
			{Name: UpgradePaused, Doc: "Entered by `pause` when `spec.paused` is set. No node is selected, so a node " +
				"waiting to be stopped returns to Online; a node already restarting finishes. Left by `unpause` " +
				"when `spec.paused` is cleared, which re-validates before resuming."},
		},
		Events: []fsm.EventDoc{
			{Name: UpgradeRequest, Doc: "Fires when the cluster's version differs from what servers or clients run, when a " +
				"server's pod runs another template revision than the spec gives it, or when a CSI workload runs other images. No action."},
			{Name: UpgradeValidated, Doc: "Fires when every validation check passes. No action; the dispatcher records the validated target in status."},
			{Name: UpgradeServersDone, Doc: "Fires when every node is Online at the target. No action."},
			{Name: UpgradeClientsDone, Doc: "Fires when the node plugin DaemonSets are set to the target and every " +
				"plugin pod runs it or is pinned by mounts in use (or there is none); the message counts the nodes " +
				"that keep the old plugin until drained. No action."},
			{Name: UpgradeBlock, Doc: "Fires when a check fails or a step times out. No action; the reason becomes the condition."},
			{Name: UpgradeRetry, Doc: "Fires when a blocked upgrade's checks pass again. No action."},
			{Name: UpgradePause, Doc: "Fires when `spec.paused` is set. No action."},
			{Name: UpgradeUnpause, Doc: "Fires when `spec.paused` is cleared. No action."},
			{Name: UpgradeCancel, Doc: "Fires when there is nothing left to upgrade (the version was set back, or already runs everywhere). No action."},
			{Name: UpgradeSettle, Doc: "Fires when Complete has been shown for the hold time. No action."},
		},
		Transitions: []fsm.Transition{
			{Event: UpgradeRequest, From: []fsm.State{UpgradeIdle, UpgradeComplete}, To: UpgradeValidating},
			{Event: UpgradeValidated, From: []fsm.State{UpgradeValidating}, To: UpgradeRollingServers},
			{Event: UpgradeServersDone, From: []fsm.State{UpgradeRollingServers}, To: UpgradeRollingClients},
			{Event: UpgradeClientsDone, From: []fsm.State{UpgradeRollingClients}, To: UpgradeComplete},
			{Event: UpgradeBlock, From: []fsm.State{UpgradeValidating, UpgradeRollingServers, UpgradeRollingClients}, To: UpgradeBlocked},
			{Event: UpgradeRetry, From: []fsm.State{UpgradeBlocked}, To: UpgradeValidating},
			{Event: UpgradePause, From: []fsm.State{UpgradeValidating, UpgradeRollingServers, UpgradeRollingClients, UpgradeBlocked}, To: UpgradePaused},
			{Event: UpgradeUnpause, From: []fsm.State{UpgradePaused}, To: UpgradeValidating},
			{Event: UpgradeCancel, From: []fsm.State{UpgradeValidating, UpgradeBlocked}, To: UpgradeIdle},
			{Event: UpgradeSettle, From: []fsm.State{UpgradeComplete}, To: UpgradeIdle},
		},
		Steps: []fsm.StepDoc{
			{Name: UpgradeSelectNextNode, In: []fsm.State{UpgradeRollingServers}, Doc: "Record the next batch " +
				"to upgrade in `status.upgrade.currentNodes` and when its step started: the first nodes, by zone " +
				"then name, not yet at the target, up to `upgradePolicy.maxParallel`, all from one zone when " +
				"`perZone` is set. No action: the batch is the machine's own status, written by the sync " +
				"that runs the step. Idempotent: selecting the already selected batch changes nothing."},
			{Name: UpgradeRollClients, In: []fsm.State{UpgradeRollingClients}, Doc: "Set the CSI node plugin " +
				"DaemonSets, controllers and block targets to the target version, then delete the old-version " +
				"node plugin pods on Kubernetes nodes where no running pod uses a volume of the cluster's drivers " +
				"(re-read live), so the DaemonSet recreates them at the target. Pods on nodes with mounts in use " +
				"are left alone. Idempotent: pods already at the target or being deleted are skipped."},
		},
	}
}

// UpgradeSnapshot is what DecideUpgrade needs about one cluster.
type UpgradeSnapshot struct {
	State      fsm.State
	StateSince time.Time
	Now        time.Time

	// Paused: spec.paused.
	Paused bool
	// Off: what spec.automation switched off (TemplateRollouts is the
	// upgrade machine's).
	Off AutomationOff
	// TargetVersion: the version the cluster spec asks for.
	TargetVersion string
	// ActiveTarget: the target this run validated (status), "" if none.
	ActiveTarget string

	// ServerVersions: the distinct versions the Gluster servers run.
	ServerVersions []string
	// ServersStaleTemplate: counted servers whose pod runs another
	// template revision than the spec gives them (NodeFacts.StaleTemplate):
	// a change to the image, resources, env, tolerations or affinity, which
	// rolls out like a version.
	ServersStaleTemplate int
	// NodesTotal: nodes that count toward the cluster (not leaving).
	NodesTotal int
	// NodesOnline: of those, nodes in the Online state.
	NodesOnline int
	// NodesAtTarget: of those, nodes Online at the target version.
	NodesAtTarget int
	// NodesUpgrading: of those, nodes in Quiescing, Restarting, Rejoining or
	// HealWait.
	NodesUpgrading int
	// StepStartedAt: when the current server or client step began (node
	// selected, previous node finished, clients rolled); zero if none. The
	// dispatcher resets it when validated fires, so a resumed run gets a
	// fresh timeout.
	StepStartedAt time.Time
	// NextNodes: the batch selectNextNode would pick (up to
	// upgradePolicy.maxParallel nodes, all from one zone when perZone),
	// empty if none.
	NextNodes []string

	// CSIClientVersion: the version the CSI node plugin is set to, "" if no
	// CSI driver is deployed.
	CSIClientVersion string
	// CSIImagesStale: a CSI controller, node plugin or block target runs
	// other images than the spec gives it at the CSI target (an image tag
	// changed in spec.csi, or the version): rollClients sets them.
	CSIImagesStale bool
	// CSINodesTotal / CSINodesAtTarget: CSI node plugin pods, and those
	// ready at ActiveTarget with their DaemonSet's images.
	CSINodesTotal    int
	CSINodesAtTarget int
	// CSINodesPinned: plugin pods not at the target on Kubernetes nodes
	// where a pod uses a volume of the cluster's drivers. They keep the old
	// plugin (OnDelete) until the node is drained or the pod deleted.
	CSINodesPinned int
	// CSINodesStale: plugin pods not at the target, not being deleted, on
	// nodes with no such volume in use: rollClients restarts them.
	CSINodesStale int

	// VolumesSplitBrain / VolumesUnhealthy: heal machines in SplitBrain, and
	// in anything but Healthy.
	VolumesSplitBrain int
	VolumesUnhealthy  int
	// VolumesHealedLive: of VolumesUnhealthy, volumes a live read of
	// bricks status and heal-info found healed (every replica set
	// Healthy) before the heal machine recorded it: read only when a
	// batch is back and nothing else holds the next one, so that the
	// next batch does not wait for the heal machine's next look.
	VolumesHealedLive int

	// BlockReason / BlockMessage: while Blocked, the reason and message of
	// the transition that blocked the run, so that waiting for a node in
	// flight keeps saying why the run is blocked.
	BlockReason  string
	BlockMessage string

	// StepTimeout bounds each wait in RollingServers and RollingClients.
	StepTimeout time.Duration
	// CompleteHold is how long Complete is shown before settling to Idle.
	CompleteHold time.Duration
}

// CountVolumes counts into VolumesUnhealthy and VolumesSplitBrain the
// volumes of heal, the heal machine's state of each (status.volumes):
// every one not Healthy is unhealthy, and SplitBrain ones are also in
// split-brain.
func (s *UpgradeSnapshot) CountVolumes(heal []fsm.State) {
	for _, st := range heal {
		switch st {
		case HealHealthy:
		case HealSplitBrain:
			s.VolumesSplitBrain++
			s.VolumesUnhealthy++
		default:
			s.VolumesUnhealthy++
		}
	}
}
