package states

import "github.com/gluster/anthill/fsm"

// Node states. The full contract of each state (how it is entered, what it
// waits for, which events leave it) is in NodeDefinition and docs/fsm/node.md.
const (
	// NodePending: new GlusterNode, nothing created; left by provision or remove.
	NodePending fsm.State = "Pending"
	// NodeProvisioning: PVC and pod requested; waits for both; left by join or detach.
	NodeProvisioning fsm.State = "Provisioning"
	// NodeJoining: peer added to GD2; waits for it to be alive; left by activate or detach.
	NodeJoining fsm.State = "Joining"
	// NodeOnline: serving bricks; left by peerLost, enterMaintenance, drain, upgrade.
	NodeOnline fsm.State = "Online"
	// NodeOffline: GD2 reports the peer not alive; left by peerRecovered, markFailed, enterMaintenance, drain.
	NodeOffline fsm.State = "Offline"
	// NodeMaintenance: admin hold, exempt from failure handling; left by resume or drain.
	NodeMaintenance fsm.State = "Maintenance"
	// NodeFailed: down past permissibleDowntime; left by drain, peerRecovered, enterMaintenance.
	NodeFailed fsm.State = "Failed"
	// NodeDraining: bricks moved off one at a time (held between moves while paused); left by detach, abandon, resume.
	NodeDraining fsm.State = "Draining"
	// NodeAbandoned: drained but the dead peer cannot be deleted; left by remove (peer kept as a tombstone) or detach.
	NodeAbandoned fsm.State = "Abandoned"
	// NodeDetaching: peer being deleted from GD2; left by remove.
	NodeDetaching fsm.State = "Detaching"
	// NodeDeleting: pod and PVC being deleted; left by finish.
	NodeDeleting fsm.State = "Deleting"
	// NodeDeleted: terminal; the finalizer may be released.
	NodeDeleted fsm.State = "Deleted"
	// NodeQuiescing: selected for upgrade, waits until stopping is safe; left by restart (which disables its devices), abortUpgrade, peerLost.
	NodeQuiescing fsm.State = "Quiescing"
	// NodeRestarting: pod rolled to the target version; left by rejoin or peerLost.
	NodeRestarting fsm.State = "Restarting"
	// NodeRejoining: new pod ready, waits for peer and bricks; left by awaitHeal or peerLost.
	NodeRejoining fsm.State = "Rejoining"
	// NodeHealWait: back online, waits for heal of its replica sets; left by upgraded or peerLost.
	NodeHealWait fsm.State = "HealWait"
)

// Node events and steps; documented in NodeDefinition.
const (
	NodeProvision        fsm.Event = "provision"
	NodeJoin             fsm.Event = "join"
	NodeActivate         fsm.Event = "activate"
	NodePeerLost         fsm.Event = "peerLost"
	NodePeerRecovered    fsm.Event = "peerRecovered"
	NodeMarkFailed       fsm.Event = "markFailed"
	NodeEnterMaintenance fsm.Event = "enterMaintenance"
	NodeResume           fsm.Event = "resume"
	NodeDrain            fsm.Event = "drain"
	NodeAbandon          fsm.Event = "abandon"
	NodeDetach           fsm.Event = "detach"
	NodeRemove           fsm.Event = "remove"
	NodeFinish           fsm.Event = "finish"
	NodeUpgrade          fsm.Event = "upgrade"
	NodeAbortUpgrade     fsm.Event = "abortUpgrade"
	NodeRestart          fsm.Event = "restart"
	NodeRejoin           fsm.Event = "rejoin"
	NodeAwaitHeal        fsm.Event = "awaitHeal"
	NodeUpgraded         fsm.Event = "upgraded"

	// Steps (in-state work, no state change).
	NodeMoveBrick fsm.Step = "moveBrick"
	// NodeHealReplacement makes GD2 heal a replacement brick
	// (transitions' healReplacement): GD2 does not by itself.
	NodeHealReplacement fsm.Step = "healReplacement"
	NodeDeletePeer      fsm.Step = "deletePeer"
	NodeDeleteWorkload  fsm.Step = "deleteWorkload"
	NodeDisableDevices  fsm.Step = "disableDevices"
	NodeEnableDevices   fsm.Step = "enableDevices"
	NodeEvictLostPod    fsm.Step = "evictLostPod"
	NodeRollWorkload    fsm.Step = "rollWorkload"
)

// NodeMachine is the machine name used in logs, metrics and docs.
const NodeMachine = "node"

// NodeDefinition returns the node machine. Each call returns a fresh copy, so
// callers may not corrupt the shared definition.
func NodeDefinition() *fsm.Definition {
	return &fsm.Definition{
		Machine: NodeMachine,
		Doc: "One machine per GlusterNode: a Gluster server pod with its PVC, the GD2 peer it runs, " +
			"and the devices it contributes. The state is persisted in `GlusterNode.status.state` and mirrored " +
			"into the GD2 peer's metadata key `anthill-state` so that it is visible from either side. " +
			"Liveness is GD2's view (`online` in the peer record, a 30-second session key), not pod " +
			"readiness, because GD2's view is what decides whether the node's bricks serve data. " +
			"Three safety rules shape the machine: data is only ever moved away because of an explicit " +
			"decommission request or a GlusterNode deletion (a failure, a cordoned Kubernetes node, or a peer " +
			"missing from a list never triggers it: GD2 cannot move a dead peer's bricks at all); a brick is never " +
			"moved or stopped while it holds the only healed copy of its replica set or while stopping it " +
			"would drop its replica set below quorum; and a peer is never deleted while it has bricks. " +
			"While the cluster's `spec.paused` is set the machine starts nothing that changes the pool and waits " +
			"with reason `Paused` instead, naming what it would do: no `provision`, `join` or `activate`, no `drain` " +
			"and no `moveBrick`, `abandon` or `detach` of a draining node, no `deletePeer` or `remove`, no " +
			"`evictLostPod` or `markFailed`, and no `upgrade` or `restart`. A pause never leaves a node half " +
			"changed: a brick move is one GD2 replace-brick, so a drain holds between two moves with the " +
			"replacements already made healing on; a node already Restarting, Rejoining or in HealWait finishes " +
			"coming back; a node that has left the pool (Deleting) finishes deleting its workload. What only " +
			"observes or protects goes on: `peerLost` and `peerRecovered` (status follows GD2), the Failed " +
			"alert, `disableDevices`, and the admin's per-node `maintenance` and `resume` requests (which move no data).",
		Initial: NodePending,
		States: []fsm.StateDoc{
			{Name: NodePending, Doc: "Entered when the GlusterNode is created. Nothing exists yet. " +
				"Left by `provision` at once, or by `remove` if the GlusterNode is deleted first."},
			{Name: NodeProvisioning, Doc: "Entered by `provision`, whose action created the node's PVC and pod. " +
				"Waits for the PVC to be bound and the pod to be ready, and for GD2 to be reachable. " +
				"Left by `join` when they are, or by `detach` if the node is deleted or decommissioned before it joined."},
			{Name: NodeJoining, Doc: "Entered by `join`, whose action added the node as a GD2 peer (tagged with the " +
				"GlusterNode's name and zone, so a repeated add finds it). Waits for the peer to be reported alive. " +
				"Left by `activate`, or by `detach` if the node is deleted or decommissioned meanwhile."},
			{Name: NodeOnline, Doc: "Entered by `activate` (devices registered), `peerRecovered`, `resume` or " +
				"`upgraded`. The peer is alive and its devices take new bricks. Observes peer liveness, admin " +
				"requests, deletion and upgrade selection. Left by `peerLost`, `enterMaintenance`, `drain` or " +
				"`upgrade`. A peer that is missing from GD2's list does not leave this state. A peer GD2 reports not alive " +
				"starts the outage clock (`downSince`) but leaves the node Online for `offlineGrace`, so a short drop " +
				"changes nothing; the peer's liveness is re-read at least every 15 seconds. While paused, neither " +
				"`drain` nor `upgrade` fires (reason `Paused`); `peerLost` and `enterMaintenance` still do. " +
				"`spec.desiredState: disabled` keeps the node Online, serving its bricks, while the `disableDevices` " +
				"step disables its devices so that no new brick lands on it; back at `enabled`, the `enableDevices` " +
				"step enables them again, as it does for a node back from an upgrade. Unlike maintenance, a disabled node is still watched for failure and " +
				"still upgraded."},
			{Name: NodeOffline, Doc: "Entered by `peerLost` when GD2 has reported the peer not alive for `offlineGrace`. " +
				"The `permissibleDowntime` clock runs from the first not-alive report (`downSince`). When the peer " +
				"is seen alive the outage is over for the clock (the next not-alive report starts a new one), but " +
				"the node stays Offline until the peer has stayed alive for `recoveryWindow` (`aliveSince`): a " +
				"flapping peer stays Offline and is never declared failed. Left by `peerRecovered` after the " +
				"recovery window, `markFailed` when one continuous outage exceeds the downtime, `enterMaintenance` " +
				"on an admin request, or `drain` on decommission or deletion. If the pod is stuck terminating on a " +
				"lost Kubernetes node and its storage can move, the `evictLostPod` step lets it come back elsewhere; " +
				"with node-local storage it waits. While paused, neither `markFailed`, `evictLostPod` nor `drain` " +
				"runs (reason `Paused`); `peerRecovered` and `enterMaintenance` still do. With " +
				"`spec.automation.markFailed` false the node stays Offline past the downtime, and with " +
				"`spec.automation.lostPodEviction` false its stuck pod is left to Kubernetes (reason `AutomationOff`, each " +
				"holding only its own change)."},
			{Name: NodeMaintenance, Doc: "Entered by `enterMaintenance` on the admin's `maintenance` request; its " +
				"action disables the node's devices so no new bricks land on it. The node is exempt from failure " +
				"handling however long it is down. If the peer was down when maintenance began, or its devices " +
				"were re-enabled by hand, the `disableDevices` step disables them once it is alive. Left by " +
				"`resume` when the admin requests it and the peer is alive, or by `drain` on decommission or deletion " +
				"(held while paused)."},
			{Name: NodeFailed, Doc: "Entered by `markFailed` after the peer stayed down longer than " +
				"`permissibleDowntime` outside maintenance. Raises the AnthillNodeFailed alert (runbook: docs/runbooks/AnthillNodeFailed.md): a Warning Event and the Degraded " +
				"condition with reason `BricksUnmovable`. GD2 replaces no brick of a volume while a node holding " +
				"one of its bricks is down and cannot delete a dead peer, so nothing can rebuild the node's bricks " +
				"elsewhere; its replica sets run on their other copies, and the node still counts toward its " +
				"template (a replacement could not take its bricks). Left by `peerRecovered` when the server comes " +
				"back as the same peer and stays alive for `recoveryWindow` (self-heal then catches it up), by " +
				"`enterMaintenance` if the admin takes the node over, or by `drain` on an explicit decommission or " +
				"deletion (held while paused; the alert stays)."},
			{Name: NodeDraining, Doc: "Entered by `drain` (decommission request or deletion); its action " +
				"disables the node's devices, and the `disableDevices` step repeats that whenever the peer is alive " +
				"with a device enabled. The `moveBrick` step replaces one brick at a time onto another node, sent " +
				"to the node's own GD2 (which sizes the new brick) and limited to peers that keep the brick's " +
				"replica set in distinct zones and cannot hold a brick of the replacement's name; " +
				"the next move waits until the previous replacement has healed. GD2 heals no " +
				"replacement by itself and reads it as healed while it is empty, so the `healReplacement` step makes " +
				"it (again every 10 s while the replacement is short of data and nothing is pending; while any peer of the pool is down " +
				"it waits with reason `VolumeNodeDown`, since GD2 sets volume options on every peer), and a " +
				"replacement counts as healed only once it uses as many bytes as the fullest other copy of its set; until then the wait is `ReplacementHealing`. A move is also refused while the " +
				"brick holds its replica set's only healed copy or stopping it would break quorum. While any node " +
				"holding a brick of the volume is down (this one included) GD2 refuses the move, and the drain " +
				"waits with reason `VolumeNodeDown` naming it. Left by " +
				"`detach` when no bricks remain and the peer is alive, `abandon` when no bricks remain but the " +
				"peer is dead, or `resume` if the admin cancels a decommission. While paused the drain holds " +
				"between two moves with reason `Paused`: no `moveBrick`, `detach` or `abandon` (a brick move is " +
				"one replace-brick, so none is ever half done, and replacements already made keep healing); " +
				"`disableDevices`, `healReplacement` and `resume` still run, and the drain carries on where it stopped once the " +
				"pause is cleared."},
			{Name: NodeAbandoned, Doc: "Entered by `abandon`: every brick has moved off the node but the peer is dead, " +
				"and GD2 cannot delete a peer that is not alive. Re-reads GD2's volumes, then leaves by `remove` at " +
				"once while the peer still holds no brick: the dead peer stays in GD2's list as a tombstone, its " +
				"metadata still `anthill-state=Abandoned`, ignored when anthill counts the pool. Left by `detach` " +
				"instead if the peer is alive again (it can then be deleted properly). Waits if the peer holds " +
				"bricks again, or is missing from GD2's list and the GlusterNode is not being deleted, and with " +
				"reason `Paused` while the cluster is paused."},
			{Name: NodeDetaching, Doc: "Entered by `detach` with no bricks on the node. The `deletePeer` step " +
				"deletes the GD2 peer (never while it has bricks). Left by `remove` once the peer is gone from " +
				"GD2's list, or at once when it is the last peer of a cluster being deleted: GD2 cannot remove its " +
				"only peer, and the pool goes away with it. While paused, neither `deletePeer` nor `remove` runs " +
				"(reason `Paused`)."},
			{Name: NodeDeleting, Doc: "Entered by `remove` once the node holds no bricks and has left the pool. " +
				"The `deleteWorkload` step deletes the pod and the PVC. Left by `finish` when both are gone. A pause " +
				"does not hold it: the node has already left the pool."},
			{Name: NodeDeleted, Doc: "Entered by `finish`. Terminal: nothing of the node remains and the " +
				"GlusterNode's finalizer may be released."},
			{Name: NodeQuiescing, Doc: "Entered by `upgrade` when the upgrade machine selected this node and it " +
				"runs an older version. Waits until stopping the node is safe: no member before it in the upgrade " +
				"batch that shares a replica set with it is still on its way (reason `BatchMemberFirst`; GD2 " +
				"still shows a member that has just committed to Restarting online, so it cannot order two such " +
				"stops by itself), none of its bricks holds its replica set's only healed copy and none of its " +
				"replica sets would drop below quorum. Left by " +
				"`restart`, whose action disables the node's devices, by `abortUpgrade` if the node is no longer selected or the cluster is paused (nothing " +
				"was stopped yet), or by `peerLost`."},
			{Name: NodeRestarting, Doc: "Entered by `restart`. The state is persisted before anything is stopped; " +
				"the `rollWorkload` step then rolls the pod to the target version, so an operator that crashes " +
				"mid-restart finds the node here and carries on. Waits for the new pod to be ready at that version. " +
				"Left by `rejoin`, or by `peerLost` if it takes longer than the upgrade step timeout. A pause does " +
				"not hold it, nor Rejoining or HealWait: a node whose restart began always comes back, so a pause " +
				"never leaves a node down."},
			{Name: NodeRejoining, Doc: "Entered by `rejoin`. Waits for the GD2 peer to be alive again (same id; " +
				"GD2 state survives a restart) and for all of the node's bricks to be online. Left by " +
				"`awaitHeal`, or by `peerLost` if it takes longer than the upgrade step timeout."},
			{Name: NodeHealWait, Doc: "Entered by `awaitHeal`. Waits until the replica sets the node's bricks " +
				"belong to have no entries pending heal, none in split-brain and no brick unreachable (heal-info " +
				"counts only reachable bricks, so a restarted brick not yet reconnected hides what it lacks), so that " +
				"the next node may be stopped. Left by `upgraded`, or by `peerLost` if the peer dies. The devices " +
				"`restart` disabled stay disabled here; Online's `enableDevices` step enables them, so every way " +
				"out of an upgrade (`upgraded`, `peerLost` then `peerRecovered`, `abortUpgrade` after a crash between " +
				"`restart`'s action and its commit) and an operator that crashes anywhere between disabling and " +
				"enabling end with the devices enabled once the node is Online, " +
				"unless it is disabled, asked into maintenance or out of the pool."},
		},
		Events: []fsm.EventDoc{
			{Name: NodeProvision, Doc: "Fires on a new GlusterNode. Action: create the node's PVC and StatefulSet if absent."},
			{Name: NodeJoin, Doc: "Fires when the PVC is bound, the pod ready and GD2 reachable, and, while no node of the cluster " +
				"has joined, only for the cluster's first node by name (the others wait for it: `WaitingForPoolSeed`). Action: add the peer " +
				"(or find the one already added for this GlusterNode) with its zone and anthill metadata, through the GD2 of a node " +
				"that joined (the first node's own add goes through the management Service)."},
			{Name: NodeActivate, Doc: "Fires when the new peer is alive. Action: register the node's devices " +
				"(already registered counts as done)."},
			{Name: NodePeerLost, Doc: "Fires when GD2 has reported an Online node's peer not alive for `offlineGrace`, " +
				"when an upgrading node's peer dies, or when a restarting node does not come back within the upgrade " +
				"step timeout. No action."},
			{Name: NodePeerRecovered, Doc: "Fires when the peer has stayed alive for `recoveryWindow` before the node " +
				"was drained. No action; GD2's self-heal brings its bricks up to date."},
			{Name: NodeMarkFailed, Doc: "Fires when one continuous outage of the peer has lasted longer than " +
				"`permissibleDowntime`. No action; the state raises the AnthillNodeFailed alert."},
			{Name: NodeEnterMaintenance, Doc: "Fires on the admin's `maintenance` request. Action: disable the " +
				"node's devices so that no new bricks are placed on it."},
			{Name: NodeResume, Doc: "Fires on the admin's `resume` request while the peer is alive, ending " +
				"maintenance or cancelling a decommission. Action: re-enable the node's devices."},
			{Name: NodeDrain, Doc: "Fires on a decommission request or on deletion of the GlusterNode. Action: " +
				"disable the node's devices (skipped for a dead peer, whose devices GD2 does not place on anyway)."},
			{Name: NodeAbandon, Doc: "Fires when a drain finished but the peer is dead and so cannot be deleted. No action."},
			{Name: NodeDetach, Doc: "Fires when the node holds no bricks and its peer can be deleted, or when a node " +
				"that never finished joining is deleted. No action; the `deletePeer` step does the work."},
			{Name: NodeRemove, Doc: "Fires when the node's peer is gone (or never existed), or when an abandoned " +
				"node's dead peer holds no brick. No action; the `deleteWorkload` step does the work."},
			{Name: NodeFinish, Doc: "Fires when the pod and the PVC are gone. No action."},
			{Name: NodeUpgrade, Doc: "Fires when the upgrade machine selected this node and its running version " +
				"differs from the target. No action."},
			{Name: NodeAbortUpgrade, Doc: "Fires when a quiescing node is no longer selected (upgrade paused, " +
				"blocked or retargeted), the cluster is paused, or the node already runs the target. No action; nothing was stopped yet."},
			{Name: NodeRestart, Doc: "Fires when stopping the node is safe. Action: disable the node's devices, so that GD2's " +
				"volume-create planner, which reads device states and never `anthill-state`, places no new brick on a node " +
				"about to stop (Online enables them again). The `rollWorkload` step in Restarting stops the pod, after the " +
				"state is persisted."},
			{Name: NodeRejoin, Doc: "Fires when the new pod is ready at the target version. No action."},
			{Name: NodeAwaitHeal, Doc: "Fires when the peer is alive and all its bricks are online. No action."},
			{Name: NodeUpgraded, Doc: "Fires when the node's replica sets are healed. No action; Online enables the devices `restart` disabled."},
		},
		Transitions: []fsm.Transition{
			{Event: NodeProvision, From: []fsm.State{NodePending}, To: NodeProvisioning},
			{Event: NodeJoin, From: []fsm.State{NodeProvisioning}, To: NodeJoining},
			{Event: NodeActivate, From: []fsm.State{NodeJoining}, To: NodeOnline},
			{Event: NodePeerLost, From: []fsm.State{NodeOnline, NodeQuiescing, NodeRestarting, NodeRejoining, NodeHealWait}, To: NodeOffline},
			{Event: NodePeerRecovered, From: []fsm.State{NodeOffline, NodeFailed}, To: NodeOnline},
			{Event: NodeMarkFailed, From: []fsm.State{NodeOffline}, To: NodeFailed},
			{Event: NodeEnterMaintenance, From: []fsm.State{NodeOnline, NodeOffline, NodeFailed}, To: NodeMaintenance},
			{Event: NodeResume, From: []fsm.State{NodeMaintenance, NodeDraining}, To: NodeOnline},
			{Event: NodeDrain, From: []fsm.State{NodeOnline, NodeOffline, NodeMaintenance, NodeFailed}, To: NodeDraining},
			{Event: NodeAbandon, From: []fsm.State{NodeDraining}, To: NodeAbandoned},
			{Event: NodeDetach, From: []fsm.State{NodeProvisioning, NodeJoining, NodeDraining, NodeAbandoned}, To: NodeDetaching},
			{Event: NodeRemove, From: []fsm.State{NodePending, NodeDetaching, NodeAbandoned}, To: NodeDeleting},
			{Event: NodeFinish, From: []fsm.State{NodeDeleting}, To: NodeDeleted},
			{Event: NodeUpgrade, From: []fsm.State{NodeOnline}, To: NodeQuiescing},
			{Event: NodeAbortUpgrade, From: []fsm.State{NodeQuiescing}, To: NodeOnline},
			{Event: NodeRestart, From: []fsm.State{NodeQuiescing}, To: NodeRestarting},
			{Event: NodeRejoin, From: []fsm.State{NodeRestarting}, To: NodeRejoining},
			{Event: NodeAwaitHeal, From: []fsm.State{NodeRejoining}, To: NodeHealWait},
			{Event: NodeUpgraded, From: []fsm.State{NodeHealWait}, To: NodeOnline},
		},
		Steps: []fsm.StepDoc{
			{Name: NodeMoveBrick, In: []fsm.State{NodeDraining}, Doc: "Replace one brick of the node onto another " +
				"node (GD2 replace-brick), only when no earlier replacement is still healing and the brick is " +
				"safe to move. Idempotent: the dispatcher re-reads the node's bricks before each step, so a move " +
				"that already happened is not repeated."},
			{Name: NodeHealReplacement, In: []fsm.State{NodeDraining}, Doc: "Make GD2 heal the replacement of a " +
				"brick the drain moved, which GD2 does not do by itself (it reports nothing to heal while the new brick " +
				"is empty): set the volume's `cluster/replicate.self-heal-daemon` on again, so that the self-heal " +
				"daemons are given a volfile naming the new brick, set data, metadata and entry self-heal on, and " +
				"trigger a full heal. Put on record in the node's ledger before it runs; setting options to the values " +
				"they have and a full heal while one runs change nothing, so it is repeated, every " +
				"10 s, while the replacement is still short of its siblings' data and nothing is pending. A move counts " +
				"healed only after GD2 accepted it and the replacement uses as many bytes as the fullest other copy."},
			{Name: NodeDeletePeer, In: []fsm.State{NodeDetaching}, Doc: "Delete the node's GD2 peer while it is " +
				"still listed and holds no bricks. A peer that is already gone counts as deleted."},
			{Name: NodeEnableDevices, In: []fsm.State{NodeOnline}, Doc: "Enable every device of an Online node " +
				"whose `spec.desiredState` is enabled while some device is disabled: the admin set it back from " +
				"disabled, or the node is back from an upgrade, whose `restart` disabled them. An admin's maintenance, " +
				"decommission or deletion request is decided first, so such a node's devices are never enabled on " +
				"its way there. Runs only while the peer is alive; enabling an enabled device is a no-op."},
			{Name: NodeDisableDevices, In: []fsm.State{NodeMaintenance, NodeDraining, NodeOnline}, Doc: "Disable every " +
				"device of the node in GD2 so that no new brick is placed on it: in maintenance, while draining, and " +
				"while `spec.desiredState` is disabled. Runs only while the peer is alive " +
				"(GD2 places nothing on a dead peer anyway) and some device is still enabled; disabling a " +
				"disabled device is a no-op."},
			{Name: NodeEvictLostPod, In: []fsm.State{NodeOffline}, Doc: "Force-delete the node's pod (grace 0, only " +
				"that pod's UID) when it is stuck terminating on a Kubernetes node that has not been Ready for the lost-node " +
				"grace, its termination grace is over, GD2 (read live) reports the peer not alive, and none of its claims " +
				"is on node-local storage. The StatefulSet then recreates the pod on another node with the same name, " +
				"DNS name and claims, so the same GD2 peer comes back. Never runs for node-local storage. A pod already " +
				"gone, or replaced by a new one, counts as done."},
			{Name: NodeRollWorkload, In: []fsm.State{NodeRestarting}, Doc: "Set the node's StatefulSet to the " +
				"target version and delete the pod if it still runs another one. Idempotent: reads both live, " +
				"changes nothing once the template is at the target, and leaves a pod that is already " +
				"terminating or at the target alone."},
			{Name: NodeDeleteWorkload, In: []fsm.State{NodeDeleting}, Doc: "Delete the node's StatefulSet and " +
				"PVC. Objects already gone count as deleted; the step repeats until both are observed gone."},
		},
		Terminal: []fsm.State{NodeDeleted},
	}
}
