package machines

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
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
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// NodeSyncer is the node machine's syncer (engine.MachineSyncer): one instance per GlusterNode,
// persisted in its whole status. Its Sync runs the engine's protocol.
type NodeSyncer struct {
	Nodes    listers.GlusterNodeLister
	Clusters listers.GlusterClusterLister
	Pods     corev1listers.PodLister
	PVCs     corev1listers.PersistentVolumeClaimLister
	Anthill  versioned.Interface
	Kube     transitions.KubeOps
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	GD2   *effects.GD2Clients
	Log   *engine.TransitionLog
	Clock clock.Clock
	// Live reads what must not come from a cache (a lost pod's Kubernetes
	// node and storage, see lostPodSide); nil disables lost-pod eviction.
	Live kubernetes.Interface
	// PeerWatched: a PeerWatch runs beside the dispatcher and brings a
	// node back when its peer's liveness changes, so a node's liveness
	// waits set no timer of their own (states.NodeSnapshot.PeerWatched).
	PeerWatched bool
	// LostNodeGrace is how long a Kubernetes node must have been lost
	// before a Gluster pod stuck on it is force-deleted; 0 is
	// DefaultLostNodeGrace.
	LostNodeGrace time.Duration

	once   sync.Once
	runner *engine.Runner[*operatorv1alpha1.GlusterNode, *nodeSync]
}

var nodeDef = states.NodeDefinition()

// nodeSync is what one node sync gathered.
type nodeSync struct {
	// clusterName names the node's GlusterCluster; cluster is it, nil
	// when it does not exist.
	clusterName string
	cluster     *operatorv1alpha1.GlusterCluster
	snap        states.NodeSnapshot
	view        nodeView
	// ops acts on the cluster's GD2; nil when there is no client yet.
	ops *effects.GD2
	// peerID is the peer a join action added (Act fills it in).
	peerID string
	// live reads the cluster's GD2 live; nil when there is no client yet.
	// liveRead: the GD2 side was read live, not from the cluster's shared
	// view (the node is on its way somewhere, or the decision acts).
	live     gd2Reads
	liveRead bool
	// gd2Err is why no GD2 client could be made (no auth secret, or one
	// that cannot be read); the decision then goes without GD2.
	gd2Err error
}

// Sync runs one decision for the node named by key.
func (s *NodeSyncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	s.once.Do(func() {
		s.runner = &engine.Runner[*operatorv1alpha1.GlusterNode, *nodeSync]{
			Machine: s, Log: s.Log, Clock: s.Clock, Refusal: effects.RefusalReason, Writer: nodeStatusWriter(s.Anthill),
		}
	})
	return s.runner.Sync(ctx, key)
}

// Definition is the node machine.
func (s *NodeSyncer) Definition() *fsm.Definition { return nodeDef }

// Get reads the node from the cache.
func (s *NodeSyncer) Get(key engine.Key) (*operatorv1alpha1.GlusterNode, error) {
	return s.Nodes.GlusterNodes(key.Namespace).Get(key.Name)
}

// Forget drops the GD2 client of a node that is gone.
func (s *NodeSyncer) Forget(key engine.Key) {
	if s.GD2 != nil {
		s.GD2.ForgetNode(key.Namespace, key.Name)
	}
}

func (s *NodeSyncer) log(node *operatorv1alpha1.GlusterNode) *zap.Logger {
	return s.Log.Log.With(zap.String(engine.LogMachine, states.NodeMachine), zap.String(engine.LogNamespace, node.Namespace), zap.String(engine.LogName, node.Name))
}

// Prepare finishes a Deleted node, releases a node of an external cluster
// being deleted, and adds the finalizer to every other node.
func (s *NodeSyncer) Prepare(ctx context.Context, node *operatorv1alpha1.GlusterNode) (bool, engine.Result, error) {
	if fsm.State(node.Status.State) == states.NodeDeleted {
		res, err := s.finishDeleted(ctx, node)
		return true, res, err
	}
	if cl, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster); err == nil && objects.IsExternal(cl) {
		if node.DeletionTimestamp != nil {
			return true, engine.Result{}, effects.RemoveFinalizer(ctx, node, objects.FinalizerNode, s.update)
		}
		return false, engine.Result{}, nil
	}
	if added, err := effects.AddFinalizer(ctx, node, objects.FinalizerNode, s.update); added || err != nil {
		return true, engine.Result{Requeue: err == nil}, err
	}
	return false, engine.Result{}, nil
}

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

// nodeLedgerActions are the node's events and steps whose action makes a
// lasting change, by the ledger action that records it.
var nodeLedgerActions = map[fsm.Event]string{
	fsm.Event(states.NodeMoveBrick):      operatorv1alpha1.LedgerActionReplaceBrick,
	fsm.Event(states.NodeDeletePeer):     operatorv1alpha1.LedgerActionDeletePeer,
	fsm.Event(states.NodeDeleteWorkload): operatorv1alpha1.LedgerActionDeleteWorkload,
	fsm.Event(states.NodeRollWorkload):   operatorv1alpha1.LedgerActionRollWorkload,
	fsm.Event(states.NodeDisableDevices): operatorv1alpha1.LedgerActionDisableDevices,
	states.NodeDrain:                     operatorv1alpha1.LedgerActionDisableDevices,
	states.NodeEnterMaintenance:          operatorv1alpha1.LedgerActionDisableDevices,
	fsm.Event(states.NodeEnableDevices):  operatorv1alpha1.LedgerActionEnableDevices,
	states.NodeResume:                    operatorv1alpha1.LedgerActionEnableDevices,
	fsm.Event(states.NodeEvictLostPod):   operatorv1alpha1.LedgerActionEvictLostPod,
}

// nodeLedgerEntry is the ledger entry of decision d, if its action makes
// a lasting change: a step or an event with one of nodeLedgerActions.
// state is where the node is after the action (the event's target, or the
// state a step runs in). Device changes on a dead peer change nothing (the
// action skips them) and are not recorded. A brick move names the brick
// and the peers GD2 may place its replacement on.
func nodeLedgerEntry(node *operatorv1alpha1.GlusterNode, d states.Decision, state string, f *nodeSync, now time.Time) (operatorv1alpha1.LedgerEntry, bool) {
	snap := f.snap
	what := d.Event
	if d.Step != "" {
		what = fsm.Event(d.Step)
	}
	action, ok := nodeLedgerActions[what]
	if !ok {
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
	case what == states.NodeDrain:
		e.Cause = d.Reason
	case action == operatorv1alpha1.LedgerActionReplaceBrick:
		e.Volume, e.Brick, e.TargetPeers, e.Cause = snap.NextBrickVolume, snap.NextBrickPath, f.view.move.Targets, drainCause(node)
	case action == operatorv1alpha1.LedgerActionDeletePeer || action == operatorv1alpha1.LedgerActionDeleteWorkload:
		e.Cause = drainCause(node)
	case action == operatorv1alpha1.LedgerActionRollWorkload:
		e.Version = snap.TargetVersion
	}
	return e, true
}

// RecordAhead puts the lasting change d's action makes on record in the
// node's status.ledger before the action runs (engine.RecordsAhead): the
// runner writes it, and the action runs in the next sync. Nothing is
// recorded when the node's latest entry already is the change (a step
// repeated until GD2 or Kubernetes shows it done, an action retried after
// it failed), or, for a brick move, when the brick's move is on record.
func (s *NodeSyncer) RecordAhead(node *operatorv1alpha1.GlusterNode, in engine.Instance[*nodeSync], d states.Decision, to fsm.State, now time.Time) bool {
	e, ok := nodeLedgerEntry(node, d, string(to), in.Facts, now)
	if !ok || ledgerHas(node.Status.Ledger, e) {
		return false
	}
	node.Status.Ledger = appendBounded(node.Status.Ledger, e, operatorv1alpha1.MaxNodeLedger)
	return true
}

// Instances is the node's one instance, at the persisted state.
func (s *NodeSyncer) Instances(_ context.Context, node *operatorv1alpha1.GlusterNode) ([]engine.Instance[*nodeSync], error) {
	return []engine.Instance[*nodeSync]{{State: fsm.State(node.Status.State), Facts: &nodeSync{clusterName: node.Spec.Cluster}}}, nil
}

// Gather reads the node's facts: its cluster, the Kubernetes side from
// listers and the GD2 side live, and applies this sync's liveness
// observation to the outage clocks (states.LivenessClocks), so that the
// decision and the status write use the same clocks.
func (s *NodeSyncer) Gather(ctx context.Context, node *operatorv1alpha1.GlusterNode, in *engine.Instance[*nodeSync]) error {
	f := in.Facts
	cluster, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster)
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return err
	}
	f.cluster = cluster
	if objects.IsExternal(cluster) {
		return nil
	}
	var reads gd2Reads
	if gc, err := s.GD2.For(ctx, cluster); err == nil {
		f.ops, f.live, reads, f.liveRead = &effects.GD2{Client: gc}, gc, gc, true
		if restsOnSharedView(in.State) {
			_, grace, recovery := failureWindows(cluster)
			reads, f.liveRead = s.GD2.SharedWithin(cluster, gc, states.LivenessListAge(grace, recovery)), false
		}
	} else {
		f.gd2Err = err
		s.log(node).Debug("no GD2 client yet", zap.Error(err))
	}
	return s.gatherFrom(ctx, node, cluster, in, reads)
}

// GatherLive reads the GD2 side again, live, when Gather read it from the
// cluster's shared view (engine.ReadsLive). The cluster's peer and device
// lists may be a few seconds old there (shared between its node syncs,
// see effects.PoolViews; the peers never older than half the shorter
// liveness window): good enough to wait on, never to act on, above all to
// move a brick or delete a peer.
func (s *NodeSyncer) GatherLive(ctx context.Context, node *operatorv1alpha1.GlusterNode, in *engine.Instance[*nodeSync], _ states.Decision) error {
	f := in.Facts
	if f.cluster == nil || f.live == nil || f.liveRead || !f.snap.GD2Reachable {
		return nil
	}
	f.liveRead = true
	return s.gatherFrom(ctx, node, f.cluster, in, f.live)
}

// gatherFrom fills in's snapshot and view from the listers and reads.
func (s *NodeSyncer) gatherFrom(ctx context.Context, node *operatorv1alpha1.GlusterNode, cluster *operatorv1alpha1.GlusterCluster, in *engine.Instance[*nodeSync], reads gd2Reads) error {
	f := in.Facts
	var err error
	f.snap, f.view, err = s.nodeSnapshot(ctx, node, cluster, in.State, reads)
	if err != nil {
		return err
	}
	f.snap.DownSince, f.snap.AliveSince = states.LivenessClocks(f.snap)
	return nil
}

// restsOnSharedView reports whether a node in state st gathers from its
// cluster's shared GD2 view: the states nodes rest in (Online,
// Maintenance, Offline, Failed), whose syncs are the fleet's steady cost
// and whose waits a few seconds' lag does not hurt. A node on its way
// somewhere (joining, upgrading, leaving) reads live, so that it never
// waits out the view's interval for a change GD2 already shows.
func restsOnSharedView(st fsm.State) bool {
	switch states.NodeMeaning(st).Class {
	case states.NodeClassOnline, states.NodeClassMaintenance, states.NodeClassUnhealthy:
		return true
	}
	return false
}

// Decide is the node's pure decision; a node without its cluster, or of an
// external cluster, waits.
func (s *NodeSyncer) Decide(in engine.Instance[*nodeSync]) states.Decision {
	f := in.Facts
	switch {
	case f.cluster == nil:
		return states.Decision{Reason: states.ReasonClusterNotFound, Message: fmt.Sprintf("GlusterCluster %q does not exist.", f.clusterName), RequeueAfter: pollWait}
	case objects.IsExternal(f.cluster):
		return states.Decision{Reason: states.ReasonExternalCluster, Message: fmt.Sprintf("GlusterCluster %q is external: anthill runs and changes none of its servers, so this node is left alone.", f.cluster.Name)}
	}
	return states.DecideNode(f.snap)
}

// Act runs the node action of d. Only a brick move needs the node's own
// GD2 (GD2 sizes the new brick on the node serving the request); actions
// that need GD2 fail cleanly while the cluster has no client yet.
func (s *NodeSyncer) Act(ctx context.Context, node *operatorv1alpha1.GlusterNode, in engine.Instance[*nodeSync], d states.Decision) error {
	f := in.Facts
	a, ok := transitions.NodeActions.For(d)
	if !ok {
		return nil
	}
	ops := transitions.Ops{Kube: s.Kube, GD2: effects.NoGD2{}}
	if f.ops != nil {
		g2 := *f.ops
		if d.Step == states.NodeMoveBrick {
			local, err := s.GD2.ForNode(ctx, f.cluster, node)
			if err != nil {
				return err
			}
			g2.Local = local
		}
		ops.GD2 = &g2
	}
	res, err := a(ctx, s.Audit.Ops(ops), s.target(node, f))
	f.peerID = res.PeerID
	return err
}

// target builds the action target from the node and its facts.
func (s *NodeSyncer) target(node *operatorv1alpha1.GlusterNode, f *nodeSync) transitions.NodeTarget {
	snap, view := f.snap, f.view
	t := transitions.NodeTarget{
		Namespace: node.Namespace, Name: node.Name, Cluster: node.Spec.Cluster,
		Address: objects.NodeAddress(node), Zone: node.Spec.Zone, Devices: objects.NodeDevicePaths(node),
		PeerID: snap.PeerID, PeerAlive: snap.PeerAlive, TargetVersion: snap.TargetVersion,
		MoveVolume: snap.NextBrickVolume, MovePath: snap.NextBrickPath,
		MoveTo:     transitions.MoveTo{Peers: view.move.Targets, SameZone: view.move.SameZone},
		LostPodUID: snap.LostPod.UID, RegisteredDevices: view.registered,
	}
	if t.PeerID == "" {
		t.PeerID = node.Status.PeerID
	}
	return t
}

// Conditions are the node's conditions.
func (s *NodeSyncer) Conditions(node *operatorv1alpha1.GlusterNode) *[]metav1.Condition {
	return &node.Status.Conditions
}

// Message is the node's persisted message.
func (s *NodeSyncer) Message(node *operatorv1alpha1.GlusterNode, _ string) string {
	return node.Status.Message
}

// Record lands one outcome in the node's status.
func (s *NodeSyncer) Record(node *operatorv1alpha1.GlusterNode, outs []engine.Outcome[*nodeSync], now time.Time) {
	out := &outs[0]
	st := &node.Status
	f := out.Facts
	if f.snap.State != "" {
		// The snapshot was gathered: persist its outage clocks.
		st.DownSince, st.AliveSince = optTime(f.snap.DownSince), optTime(f.snap.AliveSince)
	}
	d := out.Decision
	switch out.Kind {
	case engine.Unknown, engine.Refused:
		return
	case engine.Failed:
		apimeta.SetStatusCondition(&st.Conditions, metav1.Condition{
			Type: operatorv1alpha1.ConditionProgressing, Status: metav1.ConditionFalse, Reason: out.Reason,
			Message: engine.Truncate(out.Message, engine.MaxConditionMessage), ObservedGeneration: node.Generation,
		})
		// A failed brick move leaves an unusable brick on the peers GD2
		// began preparing it on: they are never offered again.
		st.RefusedPeers = states.RefuseAfterFailure(st.RefusedPeers, d.Step, effects.PreparedOn(out.Err))
		return
	case engine.Fired:
		s.enter(node, out, now)
		return
	case engine.Stepped:
		switch d.Step {
		case states.NodeMoveBrick:
			ref := operatorv1alpha1.BrickRef{Volume: f.snap.NextBrickVolume, Path: f.snap.NextBrickPath}
			if !slices.Contains(st.MovedBricks, ref) {
				st.MovedBricks = append(st.MovedBricks, ref)
			}
			if !slices.Contains(st.LeftBricks, ref) {
				st.LeftBricks = append(st.LeftBricks, ref)
			}
		case states.NodeEvictLostPod:
			// A forced pod deletion must be found later: it is recorded
			// like a transition from the state to itself.
			st.History = engine.AppendHistory(st.History, out.RecordStep(states.NodeMachine, node, now).Record())
		}
	}
	st.Message = d.Message
	st.ObservedGeneration = node.Generation
	st.State = string(out.To)
	setNodeConditions(node, out.To, d, now)
}

// enter applies a transition's entry effects: the new state and its time,
// the peer a join added, the outage clocks and cursor fields the state
// resets, the history entry and the conditions.
func (s *NodeSyncer) enter(node *operatorv1alpha1.GlusterNode, out *engine.Outcome[*nodeSync], now time.Time) {
	st := &node.Status
	d := out.Decision
	st.State = string(out.To)
	st.LastTransitionTime = &metav1.Time{Time: now}
	st.Message = d.Message
	st.ObservedGeneration = node.Generation
	if out.Facts.peerID != "" {
		st.PeerID = out.Facts.peerID
	}
	st.Address = objects.NodeAddress(node)
	meaning := states.NodeMeaning(out.To)
	for _, c := range meaning.ResetOnEntry {
		resetCursor(st, c)
	}
	for _, c := range meaning.StampOnEntry {
		stampCursor(st, c, now)
	}
	if snap := out.Facts.snap; meaning.RecordsVersion {
		// Both are read from the ready pod only.
		if snap.RunningVersion != "" {
			st.Version = snap.RunningVersion
		}
		if snap.PodReady {
			st.Revision = snap.RunningRevision
		}
	}
	st.History = engine.AppendHistory(st.History, out.Committed.Record())
	setNodeConditions(node, out.To, d, now)
}

// Finish mirrors the persisted state into the peer's GD2 metadata and
// removes a node that reached Deleted. After a transition there is no
// requeue: the informer delivers the status write as an update, and that
// sync reads the new state (requeueing now would read the cache from
// before the write and repeat the action for nothing).
func (s *NodeSyncer) Finish(ctx context.Context, node *operatorv1alpha1.GlusterNode, outs []engine.Outcome[*nodeSync], res engine.Result, err error) (engine.Result, error) {
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
func (s *NodeSyncer) mirror(ctx context.Context, node *operatorv1alpha1.GlusterNode, ops transitions.GD2Ops, peer *gd2.Peer, st fsm.State) {
	if !mirrorDue(peer, st) {
		return
	}
	ctx = engine.WithAction(ctx, engine.ActionContext{
		Machine: states.NodeMachine, Namespace: node.Namespace, Name: node.Name, State: string(st), Action: ActionMirror, Reason: ReasonMirror,
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

// resetCursor clears the status field cursor c names.
func resetCursor(st *operatorv1alpha1.GlusterNodeStatus, c states.NodeCursor) {
	switch c {
	case states.CursorDownSince:
		st.DownSince = nil
	case states.CursorAliveSince:
		st.AliveSince = nil
	case states.CursorMovedBricks:
		st.MovedBricks = nil
	case states.CursorRefusedPeers:
		st.RefusedPeers = nil
	}
}

// stampCursor sets the clock cursor c names to now unless it is set.
func stampCursor(st *operatorv1alpha1.GlusterNodeStatus, c states.NodeCursor, now time.Time) {
	var t **metav1.Time
	switch c {
	case states.CursorDownSince:
		t = &st.DownSince
	case states.CursorAliveSince:
		t = &st.AliveSince
	default:
		return
	}
	if *t == nil {
		*t = &metav1.Time{Time: now}
	}
}

func optTime(t time.Time) *metav1.Time {
	if t.IsZero() {
		return nil
	}
	return &metav1.Time{Time: t}
}

// finishDeleted removes a node that reached Deleted: a decommissioned
// node's GlusterNode object is deleted (its record stays in the Events,
// the log and, copied there first, its cluster's ledger), and the
// finalizer is released so the object goes away. The delete carries the
// UID so a new node of the same name is never hit. While the cluster's
// ledger lacks some of the node's entries, the node waits: the cluster
// machine's write that copies them brings it back.
func (s *NodeSyncer) finishDeleted(ctx context.Context, node *operatorv1alpha1.GlusterNode) (engine.Result, error) {
	cl, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster)
	switch {
	case err == nil && len(ledgerToCopy(cl.Status.Ledger, node.Name, node.Status.Ledger)) > 0:
		return engine.Result{RequeueAfter: pollWait}, nil
	case err != nil && !apierrors.IsNotFound(err):
		return engine.Result{}, err
	}
	return engine.Result{}, s.removeDeleted(ctx, node)
}

// removeDeleted deletes the GlusterNode of a Deleted node and releases its
// finalizer.
func (s *NodeSyncer) removeDeleted(ctx context.Context, node *operatorv1alpha1.GlusterNode) error {
	if node.DeletionTimestamp == nil {
		uid := node.UID
		err := s.Anthill.OperatorV1alpha1().GlusterNodes(node.Namespace).Delete(ctx, node.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
		if err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete GlusterNode of a deleted node: %w", err)
		}
	}
	return effects.RemoveFinalizer(ctx, node.DeepCopy(), objects.FinalizerNode, s.update)
}

func (s *NodeSyncer) update(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
	return s.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Update(ctx, n, metav1.UpdateOptions{})
}
