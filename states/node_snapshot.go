package states

import (
	"time"

	"github.com/gluster/anthill/fsm"
)

// NodeRequest is the admin's pending request on a GlusterNode, read from its
// request annotation. Requests are explicit and one-shot in effect: the
// machine acts on a request only in the states where it means something, and
// nothing else (a cordon, a missing list entry) stands in for one.
type NodeRequest string

const (
	RequestNone         NodeRequest = ""
	RequestMaintenance  NodeRequest = "maintenance"
	RequestDecommission NodeRequest = "decommission"
	RequestResume       NodeRequest = "resume"
)

// NodeSnapshot is everything DecideNode needs, gathered by the dispatcher
// from listers and GD2 reads just before deciding. It holds plain data only.
//
// Brick counts are computed by the dispatcher from the volumes' brick lists
// and heal-info, per replica set (a subvolume): see each field for the exact
// meaning. A count the dispatcher could not compute must make it skip the
// sync rather than report zero, because zero is the "safe" value.
type NodeSnapshot struct {
	// State is the persisted state; StateSince is when it was entered.
	State      fsm.State
	StateSince time.Time
	// Now is the only clock Decide functions read.
	Now time.Time
	// Name is the GlusterNode's name, and RecordedPeerID the GD2 peer id
	// its status records (status.peerID): what its ledger entries name.
	Name, RecordedPeerID string
	// DrainCause is the reason of the node's latest transition into
	// Draining, from its history ("" when the window no longer holds it):
	// the cause the ledger entries of its drain name.
	DrainCause string

	// Kubernetes side.

	// Deleting: the GlusterNode has a deletion timestamp (finalizer held).
	Deleting bool
	// Request: the admin's request annotation, RequestNone if absent.
	Request NodeRequest
	// Disabled: spec.desiredState is disabled: the node keeps serving its
	// bricks and takes no new ones.
	Disabled bool
	// PVCExists / PVCBound: the node's state PVC.
	PVCExists bool
	PVCBound  bool
	// PodExists / PodReady: the node's Gluster server pod.
	PodExists bool
	PodReady  bool
	// RunningVersion: the Gluster version of the running pod ("" if none).
	RunningVersion string
	// TargetVersion: the version the cluster wants ("" when the cluster
	// names none: the version is then never rolled).
	TargetVersion string
	// RunningRevision: the template revision of the running pod ("" if
	// none); TargetRevision: the revision the cluster's spec gives the node
	// now. They differ after a change to the image, resources, env,
	// tolerations or affinity, which rolls out like a version.
	RunningRevision, TargetRevision string
	// UpgradeSelected: the upgrade machine is RollingServers and names this
	// node as the one to upgrade now.
	UpgradeSelected bool
	// JoinAfter names the node of the cluster that joins GD2 before this
	// one: while no node of the cluster has a peer, every node but the
	// first by name, whose GD2 becomes the pool, waits for it. Then each
	// joins through a node of the pool, never through the management
	// Service, whose endpoints include pods that have not joined, each a
	// pool of its own. "" when this node may join.
	JoinAfter string
	// PermissibleDowntime: how long the peer may be down outside
	// maintenance before the node is Failed.
	PermissibleDowntime time.Duration
	// OfflineGrace: how long GD2 must report an Online node's peer not
	// alive before the node goes Offline (hysteresis against short drops).
	OfflineGrace time.Duration
	// RecoveryWindow: how long an Offline or Failed node's peer must stay
	// alive before the node is Online again (hysteresis against flapping).
	RecoveryWindow time.Duration
	// UpgradeStepTimeout: how long Restarting and Rejoining may take.
	UpgradeStepTimeout time.Duration
	// UpgradeAhead: the members of the upgrade batch before this node
	// that share a replica set with it and are not back Online at the
	// target yet (UpgradeTurnsAhead); only gathered in Quiescing.
	UpgradeAhead []string

	// GD2 side.

	// GD2Reachable: the management API answered this sync. When false, no
	// field below is meaningful and the decision is to wait.
	GD2Reachable bool
	// PeerKnown: GD2's peer list has this node's peer (matched by the
	// anthill metadata set when it joined). PeerID is its id if known.
	PeerKnown bool
	PeerID    string
	// PeerAlive: GD2 reports the peer online.
	PeerAlive bool
	// DevicesEnabled and DevicesDisabled: the node's devices GD2 lists
	// with state enabled, and with state disabled.
	DevicesEnabled, DevicesDisabled int
	// PeerWatched: the operator's peer watch reads the cluster's peer and
	// device lists at least every LivenessListAge and brings the node
	// back whenever what it reads of them (reachable, peer listed, alive,
	// device counts) changes, so the node needs no liveness timer of its
	// own (see livenessPoll).
	PeerWatched bool
	// ClusterDeleting: the node's GlusterCluster is being deleted.
	ClusterDeleting bool
	// Paused: the node's GlusterCluster has spec.paused set. The machine
	// then starts nothing that changes the pool (see NodeDefinition).
	Paused bool
	// Off: what spec.automation switched off (LostPodEviction and
	// MarkFailed are the node machine's).
	Off AutomationOff
	// OnlyPeer: this node's peer is the only member left in GD2's pool.
	OnlyPeer bool
	// DownSince: when the current outage began (see LivenessClocks). Zero
	// means unknown, and counts as "just now".
	DownSince time.Time
	// AliveSince: when an Offline or Failed node's peer was first seen
	// alive again (see LivenessClocks). Zero counts as "just now".
	AliveSince time.Time

	// Bricks.

	// BricksOnNode: bricks of any volume placed on this node's peer.
	BricksOnNode int
	// BricksOffline: of those, bricks whose process GD2 reports not online.
	BricksOffline int
	// SoleHealedCopies: bricks on this node whose replica set has no other
	// brick that is online and fully healed; moving or stopping one could
	// lose the only good copy of some data.
	SoleHealedCopies int
	// QuorumAtRisk: bricks on this node whose replica set would drop below
	// quorum if this node's bricks stopped now. Bricks already offline do
	// not count: stopping them changes nothing.
	QuorumAtRisk int
	// ReplacementsHealing: bricks this node's drain moved elsewhere whose
	// replica set is not healed yet (the dispatcher tracks moves in
	// status): the drain's moves in flight.
	ReplacementsHealing int
	// ReplacementsFilling: of those, the replacements not yet shown to
	// hold their set's data (SubvolFacts.Filling), whatever heal-info
	// says: GD2 reports nothing pending while a replacement is empty.
	ReplacementsFilling int
	// HealReplacementVolume / HealReplacementBrick: the moved brick whose
	// replacement anthill should make GD2 heal now
	// (ReplacementHealDue); empty when none.
	HealReplacementVolume, HealReplacementBrick string
	// HealReplacementDue are the moved bricks of HealReplacementVolume
	// whose replacement the heal serves: one heal of the volume serves
	// them all.
	HealReplacementDue []BrickRef
	// HealReplacementOptions are the volume options the heal sets, as
	// "key=value", sorted (what its ledger entry names).
	HealReplacementOptions []string
	// HealReplacementNodeDown names the down peers of the pool
	// (PoolNodesDown): GD2 sets no volume option while any peer is down,
	// and the heal sets options first. "" when all are up.
	HealReplacementNodeDown string
	// MaxParallelMoves: the cluster's drainPolicy.maxParallelMoves, the
	// most moves a drain has in flight at once (0 counts as 1).
	MaxParallelMoves int
	// PendingHealEntries / SplitBrainEntries: heal-info totals over the
	// replica sets that include a brick of this node.
	PendingHealEntries int64
	SplitBrainEntries  int64
	// LastHealReading: in HealWait, the reading of PendingHealEntries
	// before this one whose count differed, kept in the operator's
	// memory (zero after it restarts). It only tells when to look again
	// (healLookAgain), never what to decide.
	LastHealReading HealReading
	// BricksUnreachable: bricks of those replica sets (started volumes)
	// that are offline or that heal-info could not reach, this node's own
	// included. While any is, the sets are not healed, however clean the
	// counts look (Healed).
	BricksUnreachable int
	// NextBrickVolume / NextBrickPath: the brick the dispatcher would move
	// next while draining, "" if it found none it could place, or none
	// that may move beside the moves in flight (states.NextMoves).
	NextBrickVolume string
	NextBrickPath   string
	// NextBrickPlan is where that brick's replacement may go.
	NextBrickPlan MovePlan
	// DrainBlockedReason: why bricks cannot be moved off this node at all
	// right now (no device with room in an unused zone, ...), "" if none.
	DrainBlockedReason string
	// VolumeNodeDown names the node(s), other than a brick's target, whose
	// being down stops a move: GD2's transaction engine replaces no brick
	// of a volume while a node holding one of its bricks (this node
	// included) is down. "" when every such node is up.
	VolumeNodeDown string

	// LostPod: the pod stuck on a lost Kubernetes node (Offline only).
	LostPod LostPod
}

// removalRequested reports whether the admin asked for the node to go,
// either by decommission request or by deleting the GlusterNode.
func (s NodeSnapshot) removalRequested() bool {
	return s.Deleting || s.Request == RequestDecommission
}

// RunsTarget reports whether the node's ready pod runs what the cluster
// wants: the target version, if the cluster names one, and the target
// template revision.
func (s NodeSnapshot) RunsTarget() bool {
	return (s.TargetVersion == "" || s.RunningVersion == s.TargetVersion) && s.RunningRevision == s.TargetRevision
}

// rollTarget names what a roll takes the node to: the target version,
// with the template revision when the template changed too.
func (s NodeSnapshot) rollTarget() string {
	return s.describe(s.TargetVersion, s.TargetRevision)
}

// runningName names what the node runs now, for messages.
func (s NodeSnapshot) runningName() string {
	return s.describe(s.RunningVersion, s.RunningRevision)
}

// describe names a version and template revision: the version alone when
// the revisions agree, the revision alone when the cluster names no
// version.
func (s NodeSnapshot) describe(version, revision string) string {
	switch {
	case s.TargetVersion == "":
		return "template revision " + revision
	case s.RunningRevision != s.TargetRevision:
		return version + " (template revision " + revision + ")"
	}
	return version
}
