package node

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The phases the runner finds on the syncer, said at compile time.
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterNode, *nodeFacts] = (*Syncer)(nil)
	_ engine.Forgets                                                  = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterNode]                  = (*Syncer)(nil)
	_ engine.ReadsLive[*operatorv1alpha1.GlusterNode, *nodeFacts]     = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterNode]           = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterNode, *nodeFacts]      = (*Syncer)(nil)
)

// Syncer is the node machine's syncer (engine.MachineSyncer): one instance per GlusterNode,
// persisted in its whole status. Its Sync runs the engine's protocol.
type Syncer struct {
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
	runner *engine.Runner[*operatorv1alpha1.GlusterNode, *nodeFacts]
	heals  healReadings
}

var nodeDef = states.NodeDefinition()

// syncRounds is how many decisions one node sync may take in a row
// (engine.Runner.Rounds, in the states NodeStateMeaning.Prompt names):
// enough for a node the upgrade machine picked to go Quiescing, put its
// restart on record, restart and delete its pod without waiting for the
// informer between them.
const syncRounds = 4

// nodeFacts is what one node sync gathered.
type nodeFacts struct {
	// clusterName names the node's GlusterCluster; cluster is it, nil
	// when it does not exist.
	clusterName string
	cluster     *operatorv1alpha1.GlusterCluster
	snap        states.NodeSnapshot
	view        nodeGD2Side
	// ops acts on the cluster's GD2; nil when there is no client yet.
	ops *effects.GD2
	// live reads the cluster's GD2 live; nil when there is no client yet.
	// liveRead: the GD2 side was read live, not from the cluster's shared
	// view (the node is on its way somewhere, or the decision acts).
	live     effects.GD2Reader
	liveRead bool
	// gd2Err is why no GD2 client could be made (no auth secret, or one
	// that cannot be read); the decision then goes without GD2.
	gd2Err error
	// version is what Gather learned of the node's own GD2 version; nil
	// when it gathered nothing (no cluster, an external cluster).
	version *gd2Version
}

// Sync runs one decision for the node named by key.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	s.once.Do(func() {
		s.runner = &engine.Runner[*operatorv1alpha1.GlusterNode, *nodeFacts]{
			Machine: s, Log: s.Log, Clock: s.Clock, Refusal: effects.RefusalReason, Writer: machinestatus.NodeStatusWriter(s.Anthill),
			Ledger: machinestatus.NodeLedger{},
			Rounds: syncRounds, Prompt: func(st fsm.State) bool { return states.NodeMeaning(st).Prompt },
		}
	})
	return s.runner.Sync(ctx, key)
}

// Definition is the node machine.
func (s *Syncer) Definition() *fsm.Definition { return nodeDef }

// Get reads the node from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterNode, error) {
	return s.Nodes.GlusterNodes(key.Namespace).Get(key.Name)
}

// Forget drops the GD2 client of a node that is gone.
func (s *Syncer) Forget(key engine.Key) {
	s.heals.forget(types.NamespacedName{Namespace: key.Namespace, Name: key.Name})
	if s.GD2 != nil {
		s.GD2.ForgetNode(key.Namespace, key.Name)
	}
}

func (s *Syncer) log(node *operatorv1alpha1.GlusterNode) *zap.Logger {
	return s.Log.Log.With(zap.String(engine.LogMachine, states.NodeMachine), zap.String(engine.LogNamespace, node.Namespace), zap.String(engine.LogName, node.Name))
}

// Prepare finishes a Deleted node, releases a node of an external cluster
// being deleted, and adds the finalizer to every other node.
func (s *Syncer) Prepare(ctx context.Context, node *operatorv1alpha1.GlusterNode) (bool, engine.Result, error) {
	if fsm.State(node.Status.State) == states.NodeDeleted {
		res, err := s.finishDeleted(ctx, node)
		return true, res, err
	}
	if cl, err := s.Clusters.GlusterClusters(node.Namespace).Get(node.Spec.Cluster); err == nil && objects.IsExternal(cl) {
		if node.DeletionTimestamp != nil {
			return true, engine.Result{}, effects.RemoveFinalizer(ctx, node, objects.FinalizerNode, effects.UpdateGlusterNode(s.Anthill))
		}
		return false, engine.Result{}, nil
	}
	if added, err := effects.AddFinalizer(ctx, node, objects.FinalizerNode, effects.UpdateGlusterNode(s.Anthill)); added || err != nil {
		return true, engine.Result{Requeue: err == nil}, err
	}
	return false, engine.Result{}, nil
}

// Instances is the node's one instance, at the persisted state.
func (s *Syncer) Instances(_ context.Context, node *operatorv1alpha1.GlusterNode) ([]engine.Instance[*nodeFacts], error) {
	return []engine.Instance[*nodeFacts]{{State: fsm.State(node.Status.State), Facts: &nodeFacts{clusterName: node.Spec.Cluster}}}, nil
}

// Gather reads the node's facts: its cluster, the Kubernetes side from
// listers and the GD2 side live, and applies this sync's liveness
// observation to the outage clocks (states.LivenessClocks), so that the
// decision and the status write use the same clocks.
func (s *Syncer) Gather(ctx context.Context, node *operatorv1alpha1.GlusterNode, in *engine.Instance[*nodeFacts]) error {
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
	var reads effects.GD2Reader
	if gc, err := s.GD2.For(ctx, cluster); err == nil {
		f.ops, f.live, reads, f.liveRead = &effects.GD2{Client: gc}, gc, gc, true
		if restsOnSharedView(in.State) {
			_, grace, recovery := gather.FailureWindows(cluster)
			reads, f.liveRead = s.GD2.SharedWithin(cluster, gc, states.LivenessListAge(grace, recovery)), false
		}
	} else {
		f.gd2Err = err
		s.log(node).Debug("no GD2 client yet", zap.Error(err))
	}
	if err := s.gatherFrom(ctx, node, cluster, in, reads); err != nil {
		return err
	}
	if f.gd2Err == nil {
		v := s.readGD2Version(ctx, node, cluster, f.snap.Now)
		f.version = &v
	}
	return nil
}

// GatherLive reads the GD2 side again, live, when Gather read it from the
// cluster's shared view (engine.ReadsLive). The cluster's peer and device
// lists may be a few seconds old there (shared between its node syncs,
// see effects.PoolViews; the peers never older than half the shorter
// liveness window): good enough to wait on, never to act on, above all to
// move a brick or delete a peer.
func (s *Syncer) GatherLive(ctx context.Context, node *operatorv1alpha1.GlusterNode, in *engine.Instance[*nodeFacts], _ states.Decision) error {
	f := in.Facts
	if f.cluster == nil || f.live == nil || f.liveRead || !f.snap.GD2Reachable {
		return nil
	}
	f.liveRead = true
	return s.gatherFrom(ctx, node, f.cluster, in, f.live)
}

// gatherFrom fills in's snapshot and view from the listers and reads.
func (s *Syncer) gatherFrom(ctx context.Context, node *operatorv1alpha1.GlusterNode, cluster *operatorv1alpha1.GlusterCluster, in *engine.Instance[*nodeFacts], reads effects.GD2Reader) error {
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
func (s *Syncer) Decide(in engine.Instance[*nodeFacts]) states.Decision {
	f := in.Facts
	switch {
	case f.cluster == nil:
		return states.Decision{Reason: states.ReasonClusterNotFound, Message: fmt.Sprintf("GlusterCluster %q does not exist.", f.clusterName), RequeueAfter: machinestatus.PollWait}
	case objects.IsExternal(f.cluster):
		return states.Decision{Reason: states.ReasonExternalCluster, Message: fmt.Sprintf("GlusterCluster %q is external: anthill runs and changes none of its servers, so this node is left alone.", f.cluster.Name)}
	}
	return states.DecideNode(f.snap)
}

// Act runs the node action of d and returns its transitions.NodeResult
// (the peer a join added), which Record keeps. A brick move needs the
// node's own GD2 (GD2 sizes the new brick on the node serving the
// request), a join and a peer delete a GD2 of the pool (joinVia,
// deleteVia); actions that need GD2 fail cleanly while the cluster has no
// client yet.
func (s *Syncer) Act(ctx context.Context, node *operatorv1alpha1.GlusterNode, in engine.Instance[*nodeFacts], d states.Decision) (any, error) {
	f := in.Facts
	a, ok := transitions.NodeActions.For(d)
	if !ok {
		return nil, nil
	}
	ops := transitions.Ops{Kube: s.Kube, GD2: effects.NoGD2{}}
	if f.ops != nil {
		g2 := *f.ops
		if d.Event == states.NodeJoin {
			via, err := s.joinVia(ctx, f.cluster, node)
			if err != nil {
				return nil, err
			}
			g2.Client = via
		}
		if d.Step == states.NodeDeletePeer {
			via, err := s.deleteVia(ctx, f.cluster, node)
			if err != nil {
				return nil, err
			}
			g2.Client = via
		}
		if d.Step == states.NodeMoveBrick {
			local, err := s.GD2.ForNode(ctx, f.cluster, node)
			if err != nil {
				return nil, err
			}
			g2.Local = local
		}
		ops.GD2 = &g2
	}
	return a(ctx, s.Audit.Ops(ops), s.target(node, f))
}

// target builds the action target from the node and its facts.
func (s *Syncer) target(node *operatorv1alpha1.GlusterNode, f *nodeFacts) transitions.NodeTarget {
	snap, view := f.snap, f.view
	t := transitions.NodeTarget{
		Namespace: node.Namespace, Name: node.Name, Cluster: node.Spec.Cluster,
		Address: objects.NodeAddress(node), Zone: node.Spec.Zone, Devices: objects.NodeDevicePaths(node),
		DeviceProvisioner: objects.NodeProvisioner(node),
		PeerID:            snap.PeerID, PeerAlive: snap.PeerAlive, TargetVersion: snap.TargetVersion,
		MoveVolume: snap.NextBrickVolume, MovePath: snap.NextBrickPath,
		HealVolume: snap.HealReplacementVolume, HealBrick: snap.HealReplacementBrick,
		MoveTo:     transitions.MoveTo{Peers: snap.NextBrickPlan.Targets, SameZone: snap.NextBrickPlan.SameZone},
		LostPodUID: snap.LostPod.UID, RegisteredDevices: view.registered,
	}
	if t.PeerID == "" {
		t.PeerID = node.Status.PeerID
	}
	return t
}

// Conditions are the node's conditions.
func (s *Syncer) Conditions(node *operatorv1alpha1.GlusterNode) *[]metav1.Condition {
	return &node.Status.Conditions
}

// Message is the node's persisted message.
func (s *Syncer) Message(node *operatorv1alpha1.GlusterNode, _ string) string {
	return node.Status.Message
}
