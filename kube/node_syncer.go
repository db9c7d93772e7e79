package kube

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// NodeSyncer advances the node machine of one GlusterNode per sync.
type NodeSyncer struct {
	fence writeFence

	Nodes    listers.GlusterNodeLister
	Clusters listers.GlusterClusterLister
	Pods     corev1listers.PodLister
	PVCs     corev1listers.PersistentVolumeClaimLister
	Anthill  versioned.Interface
	Kube     transitions.KubeOps
	GD2      *GD2Clients
	Log      *TransitionLog
	Clock    clock.Clock
	// Live reads what must not come from a cache (a lost pod's Kubernetes
	// node and storage, see lostPodSide); nil disables lost-pod eviction.
	Live kubernetes.Interface
}

var nodeDef = states.NodeDefinition()

func (s *NodeSyncer) log(node *operatorv1alpha1.GlusterNode) *zap.Logger {
	return s.Log.Log.With(zap.String(LogMachine, states.NodeMachine), zap.String(LogNamespace, node.Namespace), zap.String(LogName, node.Name))
}

// Sync runs one decision for the node named by key.
func (s *NodeSyncer) Sync(ctx context.Context, key Key) (Result, error) {
	cached, err := s.Nodes.GlusterNodes(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		if s.GD2 != nil {
			s.GD2.ForgetNode(key.Namespace, key.Name)
		}
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if s.fence.behind(key, cached.ResourceVersion) {
		return Result{RequeueAfter: fenceRetry}, nil
	}
	node := cached.DeepCopy()
	state := fsm.State(node.Status.State)
	if state == "" {
		state = nodeDef.Initial
	}
	if state == states.NodeDeleted {
		return Result{}, s.finishDeleted(ctx, node)
	}
	if cl, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster); err == nil && IsExternal(cl) {
		return s.externalClusterNode(ctx, node)
	}
	if added, err := addFinalizer(ctx, node, FinalizerNode, s.update); added || err != nil {
		return Result{Requeue: err == nil}, err
	}
	m, err := nodeDef.NewMachine(state)
	if err != nil {
		return Result{}, s.unknownState(ctx, node, err)
	}
	cluster, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return s.wait(ctx, node, states.Decision{Reason: "ClusterNotFound", Message: fmt.Sprintf("GlusterCluster %q does not exist.", node.Spec.Cluster), RequeueAfter: pollWait})
		}
		return Result{}, err
	}
	var reads gd2Reads
	var ops transitions.GD2Ops
	var g2 *GD2Ops
	if gc, err := s.GD2.For(ctx, cluster); err == nil {
		g2 = &GD2Ops{Client: gc}
		reads, ops = gc, g2
	} else {
		s.log(node).Debug("no GD2 client yet", zap.Error(err))
	}
	snap, view, err := s.nodeSnapshot(ctx, node, cluster, state, reads)
	if err != nil {
		return Result{}, err
	}
	if changed, err := s.recordLiveness(ctx, node, &snap); changed || err != nil {
		// The informer delivers the write; that sync decides from it.
		return Result{}, err
	}
	s.mirror(ctx, node, ops, view.peer, state)
	d := states.DecideNode(snap)
	if d.Step == states.NodeMoveBrick && g2 != nil {
		// Only a brick move needs the node's own GD2 (GD2 sizes the new
		// brick on the node serving the request).
		local, err := s.GD2.ForNode(ctx, cluster, node)
		if err != nil {
			return s.actionFailed(ctx, node, d, err)
		}
		g2.Local = local
	}
	target := s.target(node, snap, view)
	all := transitions.Ops{Kube: s.Kube, GD2: ops}
	switch {
	case d.Event != "":
		if !m.Can(d.Event) {
			return Result{}, &PermanentError{Err: fmt.Errorf("decision %s is not allowed in state %s", d.Event, state)}
		}
		res, err := s.runAction(ctx, d, all, target)
		if err != nil {
			return s.actionFailed(ctx, node, d, err)
		}
		tr, err := m.Fire(ctx, d.Event)
		if err != nil {
			return Result{}, err
		}
		return s.commit(ctx, node, tr, d, res, snap, view, ops)
	case d.Step != "":
		if !m.CanStep(d.Step) {
			return Result{}, &PermanentError{Err: fmt.Errorf("step %s is not allowed in state %s", d.Step, state)}
		}
		if _, err := s.runAction(ctx, d, all, target); err != nil {
			return s.actionFailed(ctx, node, d, err)
		}
		if d.Step == states.NodeEvictLostPod {
			return s.recordStep(ctx, node, state, d)
		}
		if d.Step == states.NodeMoveBrick {
			ref := operatorv1alpha1.BrickRef{Volume: target.MoveVolume, Path: target.MovePath}
			if !slices.Contains(node.Status.MovedBricks, ref) {
				node.Status.MovedBricks = append(node.Status.MovedBricks, ref)
			}
			if !slices.Contains(node.Status.LeftBricks, ref) {
				node.Status.LeftBricks = append(node.Status.LeftBricks, ref)
			}
		}
		return s.wait(ctx, node, d)
	default:
		return s.wait(ctx, node, d)
	}
}

// runAction runs the action of event or step e, if it has one. Actions that
// need GD2 fail cleanly when the cluster has no GD2 client yet.
func (s *NodeSyncer) runAction(ctx context.Context, d states.Decision, ops transitions.Ops, n transitions.NodeTarget) (transitions.NodeResult, error) {
	a, ok := lookup(transitions.NodeActions, d.Event, d.Step)
	if !ok {
		return transitions.NodeResult{}, nil
	}
	if ops.GD2 == nil {
		ops.GD2 = noGD2{}
	}
	return a(ctx, ops, n)
}

// target builds the action target from the node, its snapshot and view.
func (s *NodeSyncer) target(node *operatorv1alpha1.GlusterNode, snap states.NodeSnapshot, view nodeView) transitions.NodeTarget {
	t := transitions.NodeTarget{
		Namespace: node.Namespace, Name: node.Name, Cluster: node.Spec.Cluster,
		Address: NodeAddress(node), Zone: node.Spec.Zone, Devices: NodeDevicePaths(node),
		PeerID: snap.PeerID, PeerAlive: snap.PeerAlive, TargetVersion: snap.TargetVersion,
		MoveVolume: snap.NextBrickVolume, MovePath: snap.NextBrickPath,
		MoveTo:     transitions.MoveTo{Peers: view.move.Targets, SameZone: view.move.SameZone},
		LostPodUID: snap.LostPod.UID,
	}
	if t.PeerID == "" {
		t.PeerID = node.Status.PeerID
	}
	return t
}

// commit persists transition tr in status with one write, then announces it.
func (s *NodeSyncer) commit(ctx context.Context, node *operatorv1alpha1.GlusterNode, tr fsm.Transition, d states.Decision, res transitions.NodeResult, snap states.NodeSnapshot, view nodeView, ops transitions.GD2Ops) (Result, error) {
	now := s.Clock.Now()
	st := &node.Status
	from := tr.From[0]
	st.State = string(tr.To)
	st.LastTransitionTime = &metav1.Time{Time: now}
	st.Message = d.Message
	st.ObservedGeneration = node.Generation
	if res.PeerID != "" {
		st.PeerID = res.PeerID
	}
	st.Address = NodeAddress(node)
	switch tr.To {
	case states.NodeOffline:
		if st.DownSince == nil {
			st.DownSince = &metav1.Time{Time: now}
		}
	case states.NodeOnline:
		st.DownSince = nil
		st.AliveSince = nil
		st.MovedBricks = nil
		st.RefusedPeers = nil
		if snap.RunningVersion != "" {
			st.Version = snap.RunningVersion
		}
	case states.NodeDetaching, states.NodeDeleting, states.NodeDeleted:
		st.DownSince = nil
	}
	if tr.To != states.NodeOffline && tr.To != states.NodeFailed {
		st.AliveSince = nil
	}
	c := Committed{
		Machine: states.NodeMachine, Namespace: node.Namespace, Name: node.Name,
		From: from, To: tr.To, Event: tr.Event, Reason: d.Reason, Message: d.Message, Time: now,
	}
	st.History = AppendHistory(st.History, c.Record())
	setNodeConditions(node, tr.To, d, now)
	replaced := node.ResourceVersion
	updated, err := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).UpdateStatus(ctx, node, metav1.UpdateOptions{})
	if err != nil {
		return Result{}, fmt.Errorf("persist transition %s -> %s: %w", from, tr.To, err)
	}
	s.fence.committed(nodeKey(node.Namespace, node.Name), replaced)
	s.Log.Announce(updated, c)
	if tr.To != states.NodeDeleted {
		s.mirror(ctx, node, ops, view.peer, tr.To)
	}
	if tr.To == states.NodeDeleted {
		return Result{}, s.finishDeleted(ctx, updated)
	}
	// No requeue: the informer delivers our own status write as an update,
	// and that sync reads the new state. Requeueing now would read the
	// cache from before the write and repeat the action for nothing.
	return Result{}, nil
}

// mirror writes the state into the peer's metadata when it differs; a
// failure is logged and repaired by the next sync, which compares the
// mirrored value. A dead peer marked Abandoned keeps that mark: it is the
// tombstone GD2 will not let anthill delete, and the mark is what tells
// anthill (and an admin reading GD2's peer list) to ignore it.
func (s *NodeSyncer) mirror(ctx context.Context, node *operatorv1alpha1.GlusterNode, ops transitions.GD2Ops, peer *gd2.Peer, st fsm.State) {
	if peer == nil || ops == nil {
		return
	}
	current := fsm.State(peer.Metadata[transitions.MetaState])
	if current == st || (current == states.NodeAbandoned && !peer.Online) {
		return
	}
	if err := transitions.MirrorNodeState(ctx, ops, peer.ID, st); err != nil {
		s.log(node).Info("mirroring state into GD2 failed; retrying next sync", zap.Error(err))
	}
}

// recordLiveness applies this sync's liveness observation to the outage
// clocks (states.LivenessClocks) and persists them at once when they
// changed, so that neither an operator restart nor a later wait loses
// them. It reports whether it wrote.
func (s *NodeSyncer) recordLiveness(ctx context.Context, node *operatorv1alpha1.GlusterNode, snap *states.NodeSnapshot) (bool, error) {
	down, alive := states.LivenessClocks(*snap)
	if down.Equal(snap.DownSince) && alive.Equal(snap.AliveSince) {
		return false, nil
	}
	node.Status.DownSince, node.Status.AliveSince = optTime(down), optTime(alive)
	if _, err := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
		return false, fmt.Errorf("record peer liveness: %w", err)
	}
	return true, nil
}

func optTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

// wait records why the machine stays put (d's message and conditions) —
// written only when something changed, so a steady node causes no writes —
// records a Warning Event for a warning wait each time it changes, and
// requeues after the decision's wait.
func (s *NodeSyncer) wait(ctx context.Context, node *operatorv1alpha1.GlusterNode, d states.Decision) (Result, error) {
	reason, message := d.Reason, d.Message
	before := node.Status.DeepCopy()
	node.Status.Message = message
	node.Status.ObservedGeneration = node.Generation
	state := fsm.State(node.Status.State)
	if state == "" {
		state = nodeDef.Initial
		node.Status.State = string(state)
	}
	setNodeConditions(node, state, d, s.Clock.Now())
	if d.Warning && (before.Message != node.Status.Message || conditionReason(before.Conditions) != reason) {
		// A wait an admin must act on: one Warning Event per change.
		s.Log.Warn(node, reason, message)
	}
	if !equality.Semantic.DeepEqual(before, &node.Status) {
		if _, err := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).UpdateStatus(ctx, node, metav1.UpdateOptions{}); err != nil {
			return Result{}, err
		}
	}
	return Result{RequeueAfter: d.RequeueAfter}, nil
}

// actionFailed leaves the state unchanged, says why in a condition and a
// Warning Event, and returns the error so the dispatcher backs off.
func (s *NodeSyncer) actionFailed(ctx context.Context, node *operatorv1alpha1.GlusterNode, d states.Decision, err error) (Result, error) {
	what := string(d.Event)
	if what == "" {
		what = string(d.Step)
	}
	msg := fmt.Sprintf("%s failed: %v", what, err)
	reason := refusalReason(err)
	s.Log.Warn(node, reason, msg)
	apimeta.SetStatusCondition(&node.Status.Conditions, metav1.Condition{
		Type: operatorv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: reason,
		Message: truncate(msg, 1024), ObservedGeneration: node.Generation,
	})
	if d.Step == states.NodeMoveBrick {
		// GD2 began preparing the new brick on these peers and failed
		// there, leaving an unusable brick behind: never offer them again.
		for _, id := range preparedOn(err) {
			if !slices.Contains(node.Status.RefusedPeers, id) {
				node.Status.RefusedPeers = append(node.Status.RefusedPeers, id)
			}
		}
	}
	if _, uerr := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).UpdateStatus(ctx, node, metav1.UpdateOptions{}); uerr != nil {
		return Result{}, errors.Join(err, uerr)
	}
	return Result{}, err
}

// unknownState surfaces a persisted state the machine does not know: it is
// never reset, an admin must look.
func (s *NodeSyncer) unknownState(ctx context.Context, node *operatorv1alpha1.GlusterNode, err error) error {
	s.Log.Warn(node, states.ReasonUnknownState, err.Error())
	setUnknownStateCondition(&node.Status.Conditions, err, node.Generation)
	_, uerr := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).UpdateStatus(ctx, node, metav1.UpdateOptions{})
	return errors.Join(&PermanentError{Err: err}, uerr)
}

// finishDeleted removes a node that reached Deleted: a decommissioned
// node's GlusterNode object is deleted (its record stays in the Events and
// the log), and the finalizer is released so the object goes away. The
// delete carries the UID so a new node of the same name is never hit.
func (s *NodeSyncer) finishDeleted(ctx context.Context, node *operatorv1alpha1.GlusterNode) error {
	if node.DeletionTimestamp == nil {
		uid := node.UID
		err := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).Delete(ctx, node.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete GlusterNode of a deleted node: %w", err)
		}
	}
	return removeFinalizer(ctx, node.DeepCopy(), FinalizerNode, s.update)
}

func (s *NodeSyncer) update(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
	return s.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Update(ctx, n, metav1.UpdateOptions{})
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// externalClusterNode handles a GlusterNode (made by hand) that names an
// external cluster: anthill manages no server of an external pool, so the
// node machine never runs for it — no pod, no peer add, no drain, no peer
// delete. Its status says why; if it is deleted, the finalizer (added by
// an earlier version, or by hand) is released at once.
func (s *NodeSyncer) externalClusterNode(ctx context.Context, node *operatorv1alpha1.GlusterNode) (Result, error) {
	if node.DeletionTimestamp != nil {
		return Result{}, removeFinalizer(ctx, node, FinalizerNode, s.update)
	}
	return s.wait(ctx, node, states.Decision{Reason: states.ReasonExternalCluster, Message: fmt.Sprintf("GlusterCluster %q is external: anthill runs and changes none of its servers, so this node is left alone.", node.Spec.Cluster)})
}
