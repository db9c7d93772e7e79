package states

import "github.com/gluster/anthill/fsm"

// NodeClass groups node states the way the cluster and upgrade machines
// count them. The class alone decides whether a node counts toward its
// cluster's size and whether it is leaving (NodeStateMeaning.Counts,
// NodeStateMeaning.Leaving).
type NodeClass string

// The node classes.
const (
	// NodeClassUnknown is the class of a state the node definition does
	// not know. Such a node counts, as nothing says it left, but is in no
	// other class, so a cluster holding one is not healthy.
	NodeClassUnknown NodeClass = ""
	// NodeClassJoining: not yet Online (Pending, Provisioning, Joining).
	// Such a node has never held a brick, so scale-down takes it first.
	NodeClassJoining NodeClass = "Joining"
	// NodeClassOnline: Online, serving its bricks.
	NodeClassOnline NodeClass = "Online"
	// NodeClassUpgrading: picked by the upgrade machine (Quiescing,
	// Restarting, Rejoining, HealWait). The cluster counts these as Online,
	// so that a rolling upgrade does not degrade it; the upgrade machine
	// counts them apart, as the nodes it waits for.
	NodeClassUpgrading NodeClass = "Upgrading"
	// NodeClassMaintenance: held by an admin.
	NodeClassMaintenance NodeClass = "Maintenance"
	// NodeClassUnhealthy: down (Offline, Failed). Such a node still counts:
	// GD2 cannot rebuild a dead peer's bricks anywhere
	// (docs/design/failure-recovery.md), so a replacement could not take
	// them, and the node is expected back as the same peer.
	NodeClassUnhealthy NodeClass = "Unhealthy"
	// NodeClassLeaving: being emptied or removed (Draining, Abandoned,
	// Detaching, Deleting). It no longer counts, and a scaling cluster waits
	// for it (ClusterSnapshot.NodesLeaving).
	NodeClassLeaving NodeClass = "Leaving"
	// NodeClassGone: Deleted. It does not count and is not leaving either:
	// it has left. DecideCluster waits on NodesLeaving only while scaling,
	// for work still in progress, and a Deleted node has none left (its
	// finalizer is released in the sync that records Deleted); a deleting
	// cluster waits for every GlusterNode object through NodesAll, which
	// does include it. So a Deleted node is not leaving, as the cluster's
	// count always had it; the kube list of "leaving" states that included
	// Deleted only ever served the rule that such nodes do not count.
	NodeClassGone NodeClass = "Gone"
)

// GD2Use says when a node's decision depends on GD2 at all.
type GD2Use string

// When a node state reads GD2.
const (
	// GD2Never: decided from Kubernetes alone.
	GD2Never GD2Use = "Never"
	// GD2WhenWorkloadReady: only once the node's claims are bound and its
	// pod is ready; before that there is no peer to ask about.
	GD2WhenWorkloadReady GD2Use = "WhenWorkloadReady"
	// GD2Always: every sync.
	GD2Always GD2Use = "Always"
)

// NodeCursor names a field of a node's status that carries state across
// syncs (a clock or a record of progress), as spelled in the API.
type NodeCursor string

// The node status cursors that entering a state may reset or stamp.
const (
	// CursorDownSince: the start of the peer's current outage.
	CursorDownSince NodeCursor = "downSince"
	// CursorAliveSince: since when the peer of a down node is alive again.
	CursorAliveSince NodeCursor = "aliveSince"
	// CursorMovedBricks: the bricks a drain moved off the node.
	CursorMovedBricks NodeCursor = "movedBricks"
	// CursorRefusedPeers: peers GD2 refused as targets of a brick move.
	CursorRefusedPeers NodeCursor = "refusedPeers"
)

// NodeStateMeaning is what one node state means outside its own machine:
// how the cluster counts a node in it, what the conditions say, what the
// gatherer reads, and what the status writer does on entry.
type NodeStateMeaning struct {
	// Class is how the cluster and upgrade machines count the node.
	Class NodeClass
	// MayReceiveBricks: a peer of a node in this state may be the target
	// of a moved brick. Its devices may be disabled too, but a disable
	// that has not happened yet must not let a brick land there.
	MayReceiveBricks bool
	// Condition is the phase condition the state sets True.
	Condition PhaseCondition
	// GD2 is when the decision reads GD2 (peers and devices).
	GD2 GD2Use
	// ReadsBricks: the decision uses volumes, brick status and heal-info.
	// States that only watch liveness and requests skip those reads: they
	// re-read GD2 every few seconds, and a node that does nothing must stay
	// cheap. Their brick counts stay zero, which no decision there reads.
	ReadsBricks bool
	// ResetOnEntry are the cursors cleared when a transition enters the
	// state.
	ResetOnEntry []NodeCursor
	// StampOnEntry are the cursors set to the transition's time on entry
	// when they are unset (a set one keeps its older time).
	StampOnEntry []NodeCursor
	// Prompt: a sync that commits a transition into the state, or puts an
	// action on record in it, decides again at once from the object its
	// write returned (engine.Runner.Rounds), instead of waiting for the
	// informer to deliver the write. The states an upgrade batch stops
	// and brings back its nodes through: every delay there stretches the
	// whole batch, and the batch after it waits.
	Prompt bool
	// RecordsVersion: entering the state records the version the node's
	// pod runs (when known) as the node's version.
	RecordsVersion bool
	// RecordsAhead is the step the state runs first whose change the
	// transition into it puts on record in its own write: that write
	// already comes before anything is stopped, so the step acts in the
	// next round instead of writing its own record first (a zone batch's
	// pods stop one write sooner). Zero for none.
	RecordsAhead AheadStep
}

// Counts reports whether a node in the state counts toward its cluster's
// size; NodeCounts adds the requests that stop a node counting.
func (m NodeStateMeaning) Counts() bool {
	return m.Class != NodeClassLeaving && m.Class != NodeClassGone
}

// Leaving reports whether a node in the state is being emptied or removed.
func (m NodeStateMeaning) Leaving() bool { return m.Class == NodeClassLeaving }

// NeverOnline reports whether a node in the state has never been Online,
// and so holds no bricks.
func (m NodeStateMeaning) NeverOnline() bool { return m.Class == NodeClassJoining }

// clearAlive is the reset of every state but Offline and Failed: a
// recovery window is only ever measured for a down node.
var clearAlive = []NodeCursor{CursorAliveSince}

// clearOutage is the reset of the states past a node's last outage that
// matters: nothing measures its downtime any more.
var clearOutage = []NodeCursor{CursorDownSince, CursorAliveSince}

// nodeMeanings holds one entry per state of NodeDefinition.
var nodeMeanings = map[fsm.State]NodeStateMeaning{
	NodePending: {Class: NodeClassJoining, MayReceiveBricks: true, Condition: PhaseProgressing,
		GD2: GD2Never, ResetOnEntry: clearAlive},
	NodeProvisioning: {Class: NodeClassJoining, MayReceiveBricks: true, Condition: PhaseProgressing,
		GD2: GD2WhenWorkloadReady, ResetOnEntry: clearAlive},
	NodeJoining: {Class: NodeClassJoining, MayReceiveBricks: true, Condition: PhaseProgressing,
		GD2: GD2Always, ResetOnEntry: clearAlive},
	// A node back Online starts afresh: no outage, no drain in progress.
	NodeOnline: {Class: NodeClassOnline, MayReceiveBricks: true, Condition: PhaseReady, GD2: GD2Always,
		ResetOnEntry:   []NodeCursor{CursorDownSince, CursorAliveSince, CursorMovedBricks, CursorRefusedPeers},
		RecordsVersion: true},
	// The outage clock runs from the first not-alive report, which may
	// have stamped downSince while the node was still Online.
	NodeOffline: {Class: NodeClassUnhealthy, Condition: PhaseDegraded, GD2: GD2Always,
		StampOnEntry: []NodeCursor{CursorDownSince}},
	NodeMaintenance: {Class: NodeClassMaintenance, Condition: PhaseNone, GD2: GD2Always, ResetOnEntry: clearAlive},
	// Failed keeps both clocks: the recovery window may already be running.
	NodeFailed:   {Class: NodeClassUnhealthy, Condition: PhaseDegraded, GD2: GD2Always},
	NodeDraining: {Class: NodeClassLeaving, Condition: PhaseProgressing, GD2: GD2Always, ReadsBricks: true, ResetOnEntry: clearAlive},
	NodeAbandoned: {Class: NodeClassLeaving, Condition: PhaseDegraded, GD2: GD2Always, ReadsBricks: true,
		ResetOnEntry: clearAlive},
	NodeDetaching: {Class: NodeClassLeaving, Condition: PhaseProgressing, GD2: GD2Always, ReadsBricks: true,
		ResetOnEntry: clearOutage},
	NodeDeleting: {Class: NodeClassLeaving, Condition: PhaseProgressing, GD2: GD2Always, ReadsBricks: true,
		ResetOnEntry: clearOutage},
	// Deleted decides nothing: the syncer only releases the finalizer.
	NodeDeleted: {Class: NodeClassGone, Condition: PhaseNone, GD2: GD2Never, ResetOnEntry: clearOutage},
	NodeQuiescing: {Class: NodeClassUpgrading, MayReceiveBricks: true, Condition: PhaseProgressing, GD2: GD2Always,
		ReadsBricks: true, Prompt: true, ResetOnEntry: clearAlive},
	NodeRestarting: {Class: NodeClassUpgrading, MayReceiveBricks: true, Condition: PhaseProgressing, GD2: GD2Always,
		ReadsBricks: true, Prompt: true, ResetOnEntry: clearAlive,
		RecordsAhead: AheadStep{Step: NodeRollWorkload, Reason: ReasonRestarting}},
	NodeRejoining: {Class: NodeClassUpgrading, MayReceiveBricks: true, Condition: PhaseProgressing, GD2: GD2Always,
		ReadsBricks: true, ResetOnEntry: clearAlive},
	NodeHealWait: {Class: NodeClassUpgrading, MayReceiveBricks: true, Condition: PhaseProgressing, GD2: GD2Always,
		ReadsBricks: true, Prompt: true, ResetOnEntry: clearAlive},
}

// unknownNodeMeaning is the meaning of a state NodeDefinition does not
// know: a peer's mirrored state written by someone else, or by a newer
// operator. It counts and its decision reads everything (and will say the
// state is unknown), and it shows as Progressing. It receives no moved
// brick: the state may be a newer operator's way of saying the node is
// leaving, and a drain then lists the peer among those it refused. A peer
// with no recorded state at all (not yet mirrored, or not anthill's) is
// Pending and may receive bricks.
var unknownNodeMeaning = NodeStateMeaning{
	Class: NodeClassUnknown, Condition: PhaseProgressing, GD2: GD2Always, ReadsBricks: true,
}

// NodeMeaning returns what node state s means. The empty state is Pending
// (a GlusterNode not synced yet); a state the definition does not know gets
// unknownNodeMeaning. The slices of the result are shared: do not modify.
func NodeMeaning(s fsm.State) NodeStateMeaning {
	return meaningOf(nodeMeanings, NodePending, s, unknownNodeMeaning)
}

// NodeStateMayReceiveBricks reports whether a peer whose node is in state s
// may receive a moved brick (NodeStateMeaning.MayReceiveBricks). A node
// that is leaving, held by an admin or down may not, nor one in a state
// this operator does not know. A peer with no recorded state (not yet
// mirrored, or not anthill's) may.
func NodeStateMayReceiveBricks(s fsm.State) bool { return NodeMeaning(s).MayReceiveBricks }

// NodeReadsGD2 reports whether the node's decision can depend on GD2 in
// its state, given the Kubernetes facts of s: a Pending node, or a
// Provisioning node whose claims or pod are not ready yet, is decided
// from Kubernetes alone. Skipping the reads there keeps a cluster of new
// nodes from queueing on GD2 calls (and, before the first pod serves, on
// their retries) for answers nobody uses.
func NodeReadsGD2(s NodeSnapshot) bool {
	switch NodeMeaning(s.State).GD2 {
	case GD2Never:
		return false
	case GD2WhenWorkloadReady:
		return s.PVCBound && s.PodReady
	}
	return true
}
