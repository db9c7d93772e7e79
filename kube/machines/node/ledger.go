package node

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// drainCause is the reason of the node's latest transition into Draining,
// from its history; "" when the window no longer holds it.
func drainCause(node *operatorv1alpha1.GlusterNode) string {
	h := node.Status.History
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].To == string(states.NodeDraining) && h[i].From != string(states.NodeDraining) {
			return h[i].Reason
		}
	}
	return ""
}

// nodeLedgerEntry is the ledger entry of decision d, if its action makes
// a lasting change: a step or an event states records as one
// (states.LedgerActionOf).
// state is where the node is after the action (the event's target, or the
// state a step runs in). Device changes on a dead peer change nothing (the
// action skips them) and are not recorded. A brick move names the brick
// and the peers GD2 may place its replacement on.
func nodeLedgerEntry(node *operatorv1alpha1.GlusterNode, d states.Decision, state string, f *nodeFacts, now time.Time) (operatorv1alpha1.LedgerEntry, bool) {
	snap := f.snap
	action := states.LedgerActionOf(states.NodeMachine, d)
	if action == "" {
		return operatorv1alpha1.LedgerEntry{}, false
	}
	if (action == operatorv1alpha1.LedgerActionDisableDevices || action == operatorv1alpha1.LedgerActionEnableDevices) && !(snap.PeerKnown && snap.PeerAlive) {
		return operatorv1alpha1.LedgerEntry{}, false
	}
	e := operatorv1alpha1.LedgerEntry{
		Time: metav1.Time{Time: now}, Action: action, Node: node.Name, Peer: node.Status.PeerID,
		State: state, Reason: d.Reason,
	}
	switch {
	case d.Event == states.NodeDrain:
		e.Cause = d.Reason
	case action == operatorv1alpha1.LedgerActionReplaceBrick:
		e.Volume, e.Brick, e.TargetPeers, e.Cause = snap.NextBrickVolume, snap.NextBrickPath, f.view.move.Targets, drainCause(node)
	case action == operatorv1alpha1.LedgerActionHealReplacement:
		e.Volume, e.Brick, e.Options, e.Cause = snap.HealReplacementVolume, snap.HealReplacementBrick, effects.ReplacementHealOptions(), drainCause(node)
	case action == operatorv1alpha1.LedgerActionDeletePeer || action == operatorv1alpha1.LedgerActionDeleteWorkload:
		e.Cause = drainCause(node)
	case action == operatorv1alpha1.LedgerActionRollWorkload:
		e.Version = snap.TargetVersion
	}
	return e, true
}

// recordRollAhead puts the rollWorkload step Restarting runs first on
// record in the write that commits restart: that write already comes
// before anything is stopped, so the step acts in the next sync instead of
// writing its own record first, and a zone batch's pods stop one write
// sooner. Nothing is added when the latest entry already is that roll.
func recordRollAhead(node *operatorv1alpha1.GlusterNode, f *nodeFacts, now time.Time) {
	d := states.Decision{Step: states.NodeRollWorkload, Reason: states.ReasonRestarting}
	e, ok := nodeLedgerEntry(node, d, string(states.NodeRestarting), f, now)
	if !ok || machinestatus.LedgerHas(node.Status.Ledger, e) {
		return
	}
	node.Status.Ledger = machinestatus.AppendBounded(node.Status.Ledger, e, operatorv1alpha1.MaxNodeLedger)
}

// RecordAhead puts the lasting change d's action makes on record in the
// node's status.ledger before the action runs (engine.RecordsAhead): the
// runner writes it, and the action runs in the next sync. Nothing is
// recorded when the node's latest entry already is the change (a step
// repeated until GD2 or Kubernetes shows it done, an action retried after
// it failed), or, for a brick move, when the brick's move is on record.
func (s *Syncer) RecordAhead(node *operatorv1alpha1.GlusterNode, in engine.Instance[*nodeFacts], d states.Decision, to fsm.State, now time.Time) bool {
	e, ok := nodeLedgerEntry(node, d, string(to), in.Facts, now)
	if !ok || machinestatus.LedgerHas(node.Status.Ledger, e) {
		return false
	}
	node.Status.Ledger = machinestatus.AppendBounded(node.Status.Ledger, e, operatorv1alpha1.MaxNodeLedger)
	return true
}
