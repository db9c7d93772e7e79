package states

import (
	"slices"
	"sort"
	"time"
)

// Wake is a report of another machine, or of another node, that ends a
// node's wait before its requeue: an informer delivers it, and the
// dispatcher turns it into a look at every node whose current wait it can
// end. Beside these, every wait ends on a change of the node's own objects
// (an admin's request, its deletion, its pod and claims), of its
// cluster's spec or upgrade batch, and, where the peer watch follows the
// cluster, of its peer's reading in GD2. A wait on a volume or another
// node that names no Wake looks again only on its timer
// (TestEveryNodeWaitSaysWhatWakesIt fails for one that waits longer than
// a second that way).
type Wake string

const (
	// WakeVolumes: the heal machine's record of a volume in the
	// cluster's status.volumes changed what it reports: the volume's heal
	// state, its brick count or bricks online, or the volume appeared or
	// went (wake.VolumeReportsChanged). Its progress (pending entries,
	// message) is not a report: a heal's progress wakes no node.
	WakeVolumes Wake = "VolumeReport"
	// WakePool: another node of the cluster changed state, or came or
	// went (a new node Online is a new place for bricks; a node back up
	// lets GD2 replace bricks again; a node ahead in an upgrade batch is
	// back).
	WakePool Wake = "PoolChange"
	// WakePeerBack: the peer watch saw the node's own peer alive, or its
	// bricks' devices change. While a node of the cluster waits for this,
	// the watch reads the cluster's peer list every PeerWatchFast instead
	// of its usual interval, so a restarted peer is seen back within that,
	// not at the node's next poll.
	WakePeerBack Wake = "PeerBack"
)

// PeerWatchFast is how often the peer watch reads a cluster's peer list
// while one of its nodes waits for its own peer to come back
// (WakePeerBack): one list read for the whole cluster, where each waiting
// node polling GD2 itself would read peers, devices, volumes and bricks.
const PeerWatchFast = 200 * time.Millisecond

// Wakes lists every Wake, in the order the generated table shows them.
var Wakes = []Wake{WakeVolumes, WakePool, WakePeerBack}

// NodeWait is what one wait of the node machine waits for, and which
// reports end it (the dispatcher reads this table to decide whom a
// report wakes; the node's wait is its conditions' reason).
type NodeWait struct {
	// For says in words what would end the wait.
	For string
	// Wakes are the reports that can end it; none means only its timer,
	// which is then a computed deadline or a short poll.
	Wakes []Wake
	// OnMovedVolumes: the wait names the volumes of the node's moved
	// bricks (status.movedBricks); a volume report wakes the node only
	// for one of those volumes. Otherwise a report of any of the
	// cluster's volumes does (the wait is on the node's own bricks, whose
	// volumes the node's status does not list).
	OnMovedVolumes bool
}

// WokenBy reports whether w ends on report k.
func (w NodeWait) WokenBy(k Wake) bool { return slices.Contains(w.Wakes, k) }

// nodeWaits is every reason a node decision waits with. A decision that
// waits with a reason missing here fails TestEveryNodeWaitSaysWhatWakesIt.
var nodeWaits = map[string]NodeWait{
	ReasonPaused:              {For: "spec.paused to be cleared"},
	ReasonSteady:              {For: "nothing: the node is Online (or Deleted) and settled"},
	ReasonNodeDisabled:        {For: "an admin's resume of a disabled node"},
	ReasonGD2Unreachable:      {For: "GD2 to answer (a short poll: no report says GD2 is back before a read does)"},
	ReasonWaitingForPod:       {For: "the node's claims to bind and its pod to be ready"},
	ReasonWaitingForPoolSeed:  {For: "the cluster's first node to join GD2, so that every node joins the pool it starts", Wakes: []Wake{WakePool}},
	ReasonWaitingForPeer:      {For: "GD2 to list the node's peer as alive", Wakes: []Wake{WakePeerBack}},
	ReasonPeerMissing:         {For: "an admin: the peer is missing from GD2's list"},
	ReasonPeerUnresponsive:    {For: "the offline grace to pass, or the peer to answer"},
	ReasonWithinDowntime:      {For: "the permissible downtime to pass, or the peer to come back"},
	ReasonPeerRecovering:      {For: "the recovery window to pass with the peer alive"},
	ReasonInMaintenance:       {For: "an admin's resume or decommission request"},
	ReasonBricksUnmovable:     {For: "the failed peer to come back, or an admin's maintenance mark"},
	ReasonLostPodStorageLocal: {For: "the lost Kubernetes node to return, or the permissible downtime to pass"},
	ReasonLostPodGrace:        {For: "the lost pod's force-delete deadline, or the node or peer to return"},
	ReasonVolumeNodeDown: {For: "the down node of a volume to come back (GD2 refuses every replace-brick of its volumes until then)",
		Wakes: []Wake{WakePool, WakeVolumes}},
	ReasonSoleHealedCopy: {For: "the other copies of the node's replica sets to heal", Wakes: []Wake{WakeVolumes}},
	ReasonQuorumAtRisk:   {For: "the node's replica sets' other bricks to come online", Wakes: []Wake{WakeVolumes}},
	ReasonDrainBlocked: {For: "a place for the node's bricks: a node Online with room in a zone the rules allow",
		Wakes: []Wake{WakePool, WakeVolumes}},
	ReasonReplacementHealing: {For: "the replica sets of the bricks the drain moved to heal", Wakes: []Wake{WakeVolumes},
		OnMovedVolumes: true},
	ReasonBricksStillOnNode: {For: "the bricks left on the node's peer to go (a volume deleted or moved off)", Wakes: []Wake{WakeVolumes}},
	ReasonPeerNotAlive:      {For: "the peer to be alive again, so that GD2 can delete it"},
	ReasonBatchMemberFirst: {For: "the nodes ahead in the upgrade batch that share a replica set to be Online and healed",
		Wakes: []Wake{WakePool, WakeVolumes}},
	ReasonBricksOffline: {For: "the restarted peer and its bricks to be online (a one-second poll: the node being upgraded holds the roll)",
		Wakes: []Wake{WakeVolumes, WakePeerBack}},
	ReasonSplitBrain: {For: "an admin to resolve the split-brain entries", Wakes: []Wake{WakeVolumes}},
	ReasonBrickDown: {For: "every brick of the node's replica sets to be reachable by heal-info (a one-second poll)",
		Wakes: []Wake{WakeVolumes}},
	ReasonHealPending: {For: "the node's replica sets to heal (looking again when the heal should end, at most a second apart)",
		Wakes: []Wake{WakeVolumes}},
}

// NodeWaitFor returns what a node waiting with reason waits for.
func NodeWaitFor(reason string) (NodeWait, bool) {
	w, ok := nodeWaits[reason]
	return w, ok
}

// NodeWaitReasons lists the reasons of nodeWaits, sorted.
func NodeWaitReasons() []string {
	out := make([]string, 0, len(nodeWaits))
	for r := range nodeWaits {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
