package states

import (
	"fmt"
	"strings"
	"time"
)

// decideNode is DecideNode's decision, before the changes it makes.
func decideNode(s NodeSnapshot) Decision {
	switch s.State {
	case NodePending:
		if s.Paused {
			if s.removalRequested() {
				return paused("deleting what a crashed provision of the removed node left behind", 0)
			}
			return paused("provisioning the node", 0)
		}
		if s.removalRequested() {
			return fire(NodeRemove, ReasonDeletionRequested, "The node was removed before anything was created; deleting whatever a crashed provision left behind.")
		}
		return fire(NodeProvision, ReasonProvisioning, "Creating the node's PVC and pod.")
	case NodeProvisioning:
		return decideNodeProvisioning(s)
	case NodeJoining:
		return decideNodeJoining(s)
	case NodeOnline:
		return decideNodeOnline(s)
	case NodeOffline:
		return decideNodeOffline(s)
	case NodeMaintenance:
		return decideNodeMaintenance(s)
	case NodeFailed:
		return decideNodeFailed(s)
	case NodeDraining:
		return decideNodeDraining(s)
	case NodeAbandoned:
		return decideNodeAbandoned(s)
	case NodeDetaching:
		return decideNodeDetaching(s)
	case NodeDeleting:
		return decideNodeDeleting(s)
	case NodeDeleted:
		return wait(ReasonSteady, "The node is deleted.", 0)
	case NodeQuiescing:
		return decideNodeQuiescing(s)
	case NodeRestarting:
		return decideNodeRestarting(s)
	case NodeRejoining:
		return decideNodeRejoining(s)
	case NodeHealWait:
		return decideNodeHealWait(s)
	}
	return unknownState(NodeMachine, s.State)
}

func gd2Unreachable() Decision {
	return wait(ReasonGD2Unreachable, "GD2 did not answer; not acting on stale peer information.", pollShort)
}

func decideNodeProvisioning(s NodeSnapshot) Decision {
	if s.Paused {
		if s.removalRequested() {
			return paused("removing any peer a crashed join of the removed node may have added", 0)
		}
		return paused("adding the node to the pool", 0)
	}
	if s.removalRequested() {
		return fire(NodeDetach, ReasonDeletionRequested, "The node is being removed before it joined; removing any peer a crashed join may have added.")
	}
	if !s.PVCBound || !s.PodReady {
		return wait(ReasonWaitingForPod, fmt.Sprintf("Waiting for the PVC to be bound (%t) and the pod to be ready (%t).", s.PVCBound, s.PodReady), pollShort)
	}
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.JoinAfter != "" {
		return wait(ReasonWaitingForPoolSeed, fmt.Sprintf("Waiting for node %s, the cluster's first, to join GD2: every node joins the pool its GD2 starts.", s.JoinAfter), pollShort)
	}
	return fire(NodeJoin, ReasonPodReady, "The pod is ready; adding it as a GD2 peer.")
}

func decideNodeJoining(s NodeSnapshot) Decision {
	if s.Paused {
		if s.removalRequested() {
			return paused("removing the peer of the removed node", 0)
		}
		return paused("registering the new peer's devices", 0)
	}
	if s.removalRequested() {
		return fire(NodeDetach, ReasonDeletionRequested, "The node is being removed before it finished joining; removing its peer.")
	}
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if !s.PeerKnown || !s.PeerAlive {
		return wait(ReasonWaitingForPeer, "Waiting for GD2 to list the new peer as alive.", pollShort)
	}
	return fire(NodeActivate, ReasonPeerOnline, "The peer is alive; registering its devices.")
}

func decideNodeOnline(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.removalRequested() {
		if s.Paused {
			return paused("draining the node (removal requested)", livenessPoll(s))
		}
		return fire(NodeDrain, drainReason(s), "Removal requested; moving every brick off the node before it leaves.")
	}
	if !s.PeerKnown {
		return wait(ReasonPeerMissing, "The peer is missing from GD2's list; a missing entry never triggers failure handling, waiting for an admin.", pollLong)
	}
	if s.Request == RequestMaintenance {
		return fire(NodeEnterMaintenance, ReasonMaintenanceRequested, "Maintenance requested; no new bricks will be placed on the node.")
	}
	if !s.PeerAlive {
		since := orNow(s.DownSince, s.Now)
		if s.Now.Sub(since) >= s.OfflineGrace {
			return fire(NodePeerLost, ReasonPeerNotAlive, fmt.Sprintf("GD2 has reported the peer not alive since %s.", since.UTC().Format(time.RFC3339)))
		}
		return wait(ReasonPeerUnresponsive, fmt.Sprintf("GD2 reports the peer not alive; the node stays Online for the %s offline grace.", s.OfflineGrace),
			min(remaining(s.Now, since, s.OfflineGrace), livenessPoll(s)))
	}
	if s.UpgradeSelected && !s.RunsTarget() {
		if s.Paused {
			return paused("rolling the node to "+s.rollTarget(), livenessPoll(s))
		}
		return fire(NodeUpgrade, ReasonUpgradeSelected, fmt.Sprintf("Selected to roll from %s to %s.", s.runningName(), s.rollTarget()))
	}
	switch {
	case s.Disabled && s.DevicesEnabled > 0:
		return step(NodeDisableDevices, ReasonNodeDisabled, fmt.Sprintf("spec.desiredState is disabled: disabling %d device(s) so that no new brick lands on the node.", s.DevicesEnabled), pollShort)
	case !s.Disabled && s.DevicesDisabled > 0:
		// Also the way back from an upgrade, whose restart disabled the
		// devices: every way out of it (upgraded; peerLost then
		// peerRecovered; abortUpgrade after a crash between restart's
		// action and its commit) reaches Online before the node takes
		// new bricks again.
		return step(NodeEnableDevices, ReasonNodeEnabled, fmt.Sprintf("spec.desiredState is enabled: enabling %d disabled device(s).", s.DevicesDisabled), pollShort)
	case s.Disabled:
		return wait(ReasonNodeDisabled, "The node is online and disabled: it serves its bricks and takes no new ones.", livenessPoll(s))
	}
	return wait(ReasonSteady, "The node is online.", livenessPoll(s))
}

func drainReason(s NodeSnapshot) string {
	if s.Deleting {
		return ReasonDeletionRequested
	}
	return ReasonDecommissionRequested
}

func decideNodeMaintenance(s NodeSnapshot) Decision {
	if !s.removalRequested() && s.Request != RequestResume {
		if s.GD2Reachable && s.PeerKnown && s.PeerAlive && s.DevicesEnabled > 0 {
			return step(NodeDisableDevices, ReasonInMaintenance, fmt.Sprintf("Disabling %d device(s) so that no new bricks land on a node in maintenance.", s.DevicesEnabled), pollShort)
		}
		return wait(ReasonInMaintenance, "The node is in maintenance until the admin requests resume.", 0)
	}
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.removalRequested() {
		if s.Paused {
			return paused("draining the node (removal requested)", 0)
		}
		return fire(NodeDrain, drainReason(s), "Removal requested during maintenance; moving every brick off the node.")
	}
	if !s.PeerKnown || !s.PeerAlive {
		return wait(ReasonWaitingForPeer, "Resume requested; waiting for the peer to be alive before taking the node out of maintenance.", pollShort)
	}
	return fire(NodeResume, ReasonResumeRequested, "Resume requested; the node takes new bricks again.")
}

// decideNodeFailed keeps a failed node where it is. GD2's transaction
// engine refuses to replace any brick of a volume while a node holding one
// of its bricks is down, and refuses to delete a dead peer, so no REST call
// can rebuild a dead peer's bricks elsewhere (docs/design/failure-recovery.md).
// The other copies keep serving; the node waits, with a Warning, for its
// server to come back as the same peer, which self-heal then brings up to
// date. Only an explicit removal starts a drain, and that drain waits too
// while the peer is dead.
func decideNodeFailed(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.Request == RequestMaintenance {
		return fire(NodeEnterMaintenance, ReasonMaintenanceRequested, "Maintenance requested; the admin has taken over the failed node.")
	}
	if s.removalRequested() {
		if s.Paused {
			return paused("draining the failed node (removal requested)", livenessPoll(s))
		}
		return fire(NodeDrain, drainReason(s), "Removal requested for a failed node; its bricks move once GD2 allows it (never while the peer is down).")
	}
	if s.PeerKnown && s.PeerAlive {
		return recovering(s, "The failed peer came back; self-heal brings its bricks up to date.")
	}
	since := orNow(s.DownSince, s.Now)
	return warn(ReasonBricksUnmovable, fmt.Sprintf("The peer has been down since %s, longer than the permissible %s. "+
		"GD2 replaces no brick of a volume while a node holding one of its bricks is down, so this node's bricks cannot be rebuilt elsewhere; "+
		"their replica sets run on the other copies. Bring the server back with its disks (it rejoins as the same peer and self-heal catches it up), "+
		"or put it in maintenance.", since.UTC().Format(time.RFC3339), s.PermissibleDowntime), livenessPoll(s))
}

// drainBlocked returns a wait decision when moving this node's bricks would
// be unsafe or impossible right now.
func drainBlocked(s NodeSnapshot) (Decision, bool) {
	if s.VolumeNodeDown != "" && (s.NextBrickPath == "" || s.SoleHealedCopies > 0) {
		// GD2 refuses the moves while a node of the volume is down, and
		// that node is what keeps the other copies short: name it, as it
		// is what the admin can fix.
		return warn(ReasonVolumeNodeDown, "Waiting for a node to come back: "+s.VolumeNodeDown+".", pollLong), true
	}
	switch {
	case s.SoleHealedCopies > 0:
		return wait(ReasonSoleHealedCopy, fmt.Sprintf("%d brick(s) on the node hold the only healed copy of their replica set; not moving them until the other copies heal.", s.SoleHealedCopies), pollLong), true
	case s.QuorumAtRisk > 0 && s.NextBrickPath == "":
		// Quorum is kept per replica set (AnalyzePeer): a brick at risk
		// stays, and holds up the drain only when no other brick can move.
		return wait(ReasonQuorumAtRisk, fmt.Sprintf("Stopping %d brick(s) on the node would drop their replica set below quorum.", s.QuorumAtRisk), pollLong), true
	case s.DrainBlockedReason != "":
		return wait(ReasonDrainBlocked, "Bricks cannot be moved off the node: "+s.DrainBlockedReason+".", pollLong), true
	}
	return Decision{}, false
}

func decideNodeDraining(s NodeSnapshot) Decision {
	if s.Request == RequestResume && !s.Deleting && s.GD2Reachable && s.PeerKnown && s.PeerAlive {
		return fire(NodeResume, ReasonResumeRequested, "Decommission cancelled; the node keeps the bricks it still has and takes new ones again.")
	}
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.PeerKnown && s.PeerAlive && s.DevicesEnabled > 0 {
		return step(NodeDisableDevices, ReasonDecommissionRequested, fmt.Sprintf("Disabling %d device(s) so that no new bricks land on a draining node.", s.DevicesEnabled), pollShort)
	}
	if s.HealReplacementVolume != "" {
		// GD2 heals no replacement by itself: make it, even while
		// paused (it changes no placement), since every later step waits
		// for that heal. GD2 refuses it while a node of the volume is
		// down: that node is what the drain waits for.
		if s.HealReplacementNodeDown != "" {
			return warn(ReasonVolumeNodeDown, "Waiting for a node to come back: "+s.HealReplacementNodeDown+".", pollLong)
		}
		return step(NodeHealReplacement, ReasonHealingReplacement, fmt.Sprintf("Making GD2 heal the replacement of brick %s of volume %s: "+
			"self-heal daemon set on again, data, metadata and entry self-heal on, a full heal (%d replacement(s) short of their siblings' data).",
			s.HealReplacementBrick, s.HealReplacementVolume, s.ReplacementsFilling), pollBeside)
	}
	if s.Paused {
		// Held between moves: a moveBrick step is one GD2 replace-brick,
		// done or not, so no brick is ever half moved here, and a
		// replacement already made goes on healing.
		return paused(fmt.Sprintf("draining the node (%d brick(s) left on it, %d replacement(s) healing)", s.BricksOnNode, s.ReplacementsHealing), pollLong)
	}
	bound := max(s.MaxParallelMoves, 1)
	if s.ReplacementsHealing >= bound || (s.BricksOnNode == 0 && s.ReplacementsHealing > 0) {
		return wait(ReasonReplacementHealing, fmt.Sprintf("Waiting for %d replacement brick(s) to heal before moving the next one (drainPolicy.maxParallelMoves %d; %d brick(s) left on the node%s).", s.ReplacementsHealing, bound, s.BricksOnNode, fillingNote(s)), replacementPoll(s))
	}
	if s.BricksOnNode == 0 {
		if !s.PeerKnown || s.PeerAlive {
			return fire(NodeDetach, ReasonDrained, "Every brick has moved off the node and healed; removing its peer.")
		}
		return fire(NodeAbandon, ReasonDrainedPeerDead, "Every brick has moved off the node, but the peer is dead and GD2 cannot delete it.")
	}
	if s.NextBrickPath == "" && s.ReplacementsHealing > 0 {
		// Every brick left waits for a heal: a replica set takes no second
		// move, and a move beside others goes only to a healed set.
		return wait(ReasonReplacementHealing, fmt.Sprintf("Waiting for %d replacement brick(s) to heal: no other brick of the node may move beside them yet (%d left on the node%s).", s.ReplacementsHealing, s.BricksOnNode, fillingNote(s)), replacementPoll(s))
	}
	if d, blocked := drainBlocked(s); blocked {
		return d
	}
	if s.NextBrickPath == "" {
		return wait(ReasonDrainBlocked, "No brick on the node can be placed elsewhere yet.", pollLong)
	}
	msg := fmt.Sprintf("Moving brick %s of volume %s off the node (%d left).", s.NextBrickPath, s.NextBrickVolume, s.BricksOnNode)
	if s.ReplacementsHealing > 0 {
		msg = fmt.Sprintf("%d replacement brick(s) healing; moving brick %s of volume %s off the node beside them (%d left, drainPolicy.maxParallelMoves %d).", s.ReplacementsHealing, s.NextBrickPath, s.NextBrickVolume, s.BricksOnNode, bound)
	}
	after := pollShort
	if s.ReplacementsHealing+1 < bound && s.BricksOnNode > 1 {
		// Room for another move once this one is done: look again soon
		// rather than wait for a heal to wake the node.
		after = pollBeside
	}
	return step(NodeMoveBrick, ReasonMovingBrick, msg, after)
}

// fillingNote says how many of the replacements healing are still short of
// their siblings' data.
func fillingNote(s NodeSnapshot) string {
	if s.ReplacementsFilling == 0 {
		return ""
	}
	return fmt.Sprintf("; %d of them still short of their siblings' data, whatever heal-info says", s.ReplacementsFilling)
}

// replacementPoll is how soon a drain waiting for its replacements looks
// again: a replacement filling shows its progress only in bricks-status,
// which no volume report follows, and may need its heal sent again
// (ReplacementHealRetry).
func replacementPoll(s NodeSnapshot) time.Duration {
	if s.ReplacementsFilling > 0 {
		return ReplacementHealRetry
	}
	return pollLong
}

// decideNodeAbandoned finishes a drained node whose peer is dead. GD2
// cannot delete a peer that is not alive, so the peer stays in GD2's list
// as a tombstone: marked anthill-state=Abandoned, holding no bricks and no
// enabled device, ignored when anthill counts the pool. The node itself
// goes on to Deleting at once — its pod and PVC hold nothing a volume uses
// any more, which this sync has just re-checked against GD2's volumes.
func decideNodeAbandoned(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.BricksOnNode > 0 {
		return wait(ReasonBricksStillOnNode, fmt.Sprintf("The abandoned peer holds %d brick(s) again; refusing to delete the node's storage.", s.BricksOnNode), pollLong)
	}
	if s.Paused {
		return paused("removing the drained node", pollLong)
	}
	if s.PeerKnown && s.PeerAlive {
		return fire(NodeDetach, ReasonPeerRecovered, "The abandoned peer is alive again and holds no bricks; deleting it.")
	}
	if s.PeerKnown {
		return fire(NodeRemove, ReasonAbandoned, "Every brick has moved off the node; deleting the node's pod and PVC. Its dead peer stays in GD2's list, marked Abandoned, because GD2 cannot delete a peer that is not alive.")
	}
	if s.Deleting {
		return fire(NodeRemove, ReasonDeletionRequested, "Deleting the drained node; its peer is no longer in GD2's list.")
	}
	return wait(ReasonPeerMissing, "The peer is missing from GD2's list; a missing entry never triggers deleting storage. Delete the GlusterNode to finish.", pollLong)
}

func decideNodeDetaching(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.Paused {
		return paused("removing the drained node's peer from the pool", 0)
	}
	if !s.PeerKnown {
		return fire(NodeRemove, ReasonPeerDeleted, "The peer has left GD2; deleting the node's pod and PVC.")
	}
	if s.ClusterDeleting && s.OnlyPeer && s.BricksOnNode == 0 {
		return fire(NodeRemove, ReasonLastPeer, "The node is the last GD2 peer of a cluster being deleted; GD2 cannot remove its only peer, so the pool goes with the node's pod and PVC.")
	}
	if s.BricksOnNode > 0 {
		return wait(ReasonBricksStillOnNode, fmt.Sprintf("The peer still has %d brick(s); refusing to delete it.", s.BricksOnNode), pollLong)
	}
	if !s.PeerAlive {
		return wait(ReasonPeerNotAlive, "GD2 cannot delete a peer that is not alive; waiting for it to come back.", pollLong)
	}
	return step(NodeDeletePeer, ReasonDeletingPeer, "Deleting the node's GD2 peer.", pollShort)
}

func decideNodeDeleting(s NodeSnapshot) Decision {
	if !s.PodExists && !s.PVCExists {
		return fire(NodeFinish, ReasonWorkloadGone, "The node's pod and PVC are gone.")
	}
	if s.GD2Reachable && s.PeerKnown && s.BricksOnNode > 0 {
		return wait(ReasonBricksStillOnNode, fmt.Sprintf("The node's peer still has %d brick(s); refusing to delete its storage.", s.BricksOnNode), pollLong)
	}
	return step(NodeDeleteWorkload, ReasonDeletingWorkload, "Deleting the node's pod and PVC.", pollShort)
}

func decideNodeQuiescing(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.PeerKnown && !s.PeerAlive {
		return fire(NodePeerLost, ReasonPeerNotAlive, "The peer died while waiting to be upgraded.")
	}
	if s.Paused {
		return fire(NodeAbortUpgrade, ReasonPaused, "The cluster was paused (spec.paused) before the node was stopped; nothing was stopped.")
	}
	if !s.UpgradeSelected || s.RunsTarget() {
		return fire(NodeAbortUpgrade, ReasonUpgradeDeselected, "The node is no longer to be upgraded now; nothing was stopped.")
	}
	if len(s.UpgradeAhead) > 0 {
		return wait(ReasonBatchMemberFirst, fmt.Sprintf("Waiting for %s, earlier in the upgrade batch and sharing a replica set with this node, to be back Online and healed.", strings.Join(s.UpgradeAhead, ", ")), pollShort)
	}
	if s.SoleHealedCopies > 0 {
		return wait(ReasonSoleHealedCopy, fmt.Sprintf("%d brick(s) on the node hold the only healed copy of their replica set; waiting for heal before stopping the node.", s.SoleHealedCopies), pollLong)
	}
	if s.QuorumAtRisk > 0 {
		return wait(ReasonQuorumAtRisk, fmt.Sprintf("Stopping the node would drop %d brick(s)' replica sets below quorum.", s.QuorumAtRisk), pollLong)
	}
	// restart's action disables the node's devices: GD2's volume-create
	// planner reads device states, never the anthill-state mirror, so
	// without it a volume created during the restart could be given a
	// brick on a node about to stop. Online enables them again.
	return fire(NodeRestart, ReasonSafeToStop, "Stopping is safe; disabling the node's devices and restarting it at "+s.rollTarget()+".")
}

func stepTimedOut(s NodeSnapshot) bool {
	return s.UpgradeStepTimeout > 0 && s.Now.Sub(s.StateSince) > s.UpgradeStepTimeout
}

func decideNodeRestarting(s NodeSnapshot) Decision {
	if s.PodReady && s.RunsTarget() {
		return fire(NodeRejoin, ReasonPodReady, "The pod is ready at "+s.rollTarget()+".")
	}
	if stepTimedOut(s) {
		return fire(NodePeerLost, ReasonRestartTimedOut, fmt.Sprintf("The pod did not come back at %s within %s.", s.rollTarget(), s.UpgradeStepTimeout))
	}
	return step(NodeRollWorkload, ReasonRestarting, "Waiting for the pod to restart at "+s.rollTarget()+".", pollShort)
}

func decideNodeRejoining(s NodeSnapshot) Decision {
	if s.GD2Reachable && s.PeerKnown && s.PeerAlive && s.BricksOffline == 0 {
		return fire(NodeAwaitHeal, ReasonRejoined, "The peer and all its bricks are back online.")
	}
	if stepTimedOut(s) {
		return fire(NodePeerLost, ReasonRestartTimedOut, fmt.Sprintf("The peer or its bricks did not come back within %s.", s.UpgradeStepTimeout))
	}
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	return wait(ReasonBricksOffline, fmt.Sprintf("Waiting for the peer (alive: %t) and %d offline brick(s).", s.PeerAlive, s.BricksOffline), pollUpgrade)
}

func decideNodeHealWait(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.PeerKnown && !s.PeerAlive {
		return fire(NodePeerLost, ReasonPeerNotAlive, "The peer died while its replica sets were healing.")
	}
	if s.SplitBrainEntries > 0 {
		return wait(ReasonSplitBrain, fmt.Sprintf("%d entries are in split-brain; an admin must resolve them.", s.SplitBrainEntries), pollLong)
	}
	if !Healed(s.PendingHealEntries, s.SplitBrainEntries, s.BricksUnreachable) {
		if s.BricksUnreachable > 0 {
			return wait(ReasonBrickDown, fmt.Sprintf("%d brick(s) of the node's replica sets are offline or not reachable by heal-info (a restarted brick until its clients reconnect); "+
				"what they lack is not counted, so heal is not complete (%d entries pending).", s.BricksUnreachable, s.PendingHealEntries), pollHeal)
		}
		return wait(ReasonHealPending, fmt.Sprintf("%d entries are pending heal.", s.PendingHealEntries), healLookAgain(s))
	}
	// The devices restart disabled are enabled from Online (its
	// enableDevices step, after the admin's requests): not here, where
	// the step would hold the next batch for a write and a GD2 call.
	return fire(NodeUpgraded, ReasonHealComplete, fmt.Sprintf("Healed; the node runs %s.", s.RunningVersion))
}
