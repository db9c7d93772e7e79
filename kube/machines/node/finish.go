package node

import (
	"context"
	"fmt"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// Finish mirrors the persisted state into the peer's GD2 metadata and
// removes a node that reached Deleted. After a transition there is no
// requeue: the informer delivers the status write as an update, and that
// sync reads the new state (requeueing now would read the cache from
// before the write and repeat the action for nothing).
func (s *Syncer) Finish(ctx context.Context, node *operatorv1alpha1.GlusterNode, outs []engine.Outcome[*nodeFacts], res engine.Result, err error) (engine.Result, error) {
	out := outs[0]
	if out.Kind == engine.Unknown || out.Kind == engine.Refused {
		return res, err
	}
	if out.To == states.NodeDeleted {
		return s.finishDeleted(ctx, node)
	}
	if f := out.Facts; f.ops != nil {
		s.mirror(ctx, node, f.ops, f.view.peer, out.To)
	}
	return res, err
}

// mirror writes the state into the peer's metadata when it differs; a
// failure is logged and repaired by the next sync, which compares the
// mirrored value. A dead peer marked Abandoned keeps that mark: it is the
// tombstone GD2 will not let anthill delete, and the mark is what tells
// anthill (and an admin reading GD2's peer list) to ignore it.
func (s *Syncer) mirror(ctx context.Context, node *operatorv1alpha1.GlusterNode, ops transitions.GD2Ops, peer *gd2.Peer, st fsm.State) {
	if !mirrorDue(peer, st) {
		return
	}
	ctx = engine.WithAction(ctx, engine.ActionContext{
		Machine: states.NodeMachine, Namespace: node.Namespace, Name: node.Name, State: string(st), Action: machinestatus.ActionMirror, Reason: machinestatus.ReasonMirror,
	})
	if err := transitions.MirrorNodeState(ctx, s.Audit.Ops(transitions.Ops{GD2: ops}).GD2, peer.ID, st); err != nil {
		s.log(node).Info("mirroring state into GD2 failed; retrying next sync", zap.Error(err))
	}
}

// mirrorDue reports whether peer's metadata should be told state st: a
// listed peer that shows another state, unless it is a dead peer marked
// Abandoned (see mirror).
func mirrorDue(peer *gd2.Peer, st fsm.State) bool {
	if peer == nil {
		return false
	}
	current := fsm.State(peer.Metadata[transitions.MetaState])
	return current != st && !(current == states.NodeAbandoned && !peer.Online)
}

// finishDeleted removes a node that reached Deleted: a decommissioned
// node's GlusterNode object is deleted (its record stays in the Events,
// the log and, copied there first, its cluster's ledger), and the
// finalizer is released so the object goes away. The delete carries the
// UID so a new node of the same name is never hit. While the cluster's
// ledger lacks some of the node's entries, the node waits: the cluster
// machine's write that copies them brings it back.
func (s *Syncer) finishDeleted(ctx context.Context, node *operatorv1alpha1.GlusterNode) (engine.Result, error) {
	cl, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster)
	switch {
	case err == nil && len(machinestatus.LedgerToCopy(cl.Status.Ledger, node.Name, node.Status.Ledger)) > 0:
		return engine.Result{RequeueAfter: machinestatus.PollWait}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return engine.Result{}, err
	}
	return engine.Result{}, s.removeDeleted(ctx, node)
}

// removeDeleted deletes the GlusterNode of a Deleted node and releases its
// finalizer.
func (s *Syncer) removeDeleted(ctx context.Context, node *operatorv1alpha1.GlusterNode) error {
	if node.DeletionTimestamp == nil {
		if err := effects.DeleteGlusterNode(ctx, s.Anthill, node); err != nil {
			return fmt.Errorf("delete GlusterNode of a deleted node: %w", err)
		}
	}
	return effects.RemoveFinalizer(ctx, node.DeepCopy(), objects.FinalizerNode, effects.UpdateGlusterNode(s.Anthill))
}
