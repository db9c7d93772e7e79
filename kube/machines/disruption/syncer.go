package disruption

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// The phases the runner finds on the syncer, said at compile time
// (SurfacesUnknown through machinestatus.OnCluster: an unknown state sets the
// cluster's Degraded condition).
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, *disruptionFacts] = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterCluster]                        = (*Syncer)(nil)
	_ engine.ReadsLive[*operatorv1alpha1.GlusterCluster, *disruptionFacts]     = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterCluster]                 = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterCluster, *disruptionFacts]      = (*Syncer)(nil)
)

var disruptionDef = states.DisruptionDefinition()

// Syncer runs the disruption machine of one GlusterCluster per
// sync (key: disruption, namespace, cluster). It reads the Gluster pods and
// the budgets live (an eviction is admitted by the API server between two
// informer deliveries), the GlusterNodes and Kubernetes Nodes from
// listers, the volumes and peers from GD2, and heal-info live for the one
// zone it might open; then it fires at most one transition, or repairs the
// budgets, or waits.
type Syncer struct {
	Clusters  listers.GlusterClusterLister
	Nodes     listers.GlusterNodeLister
	KubeNodes corev1listers.NodeLister
	// Client reads pods and budgets live.
	Client  kubernetes.Interface
	Anthill versioned.Interface
	Kube    transitions.DisruptionKube
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	GD2   *effects.GD2Clients
	Log   *engine.TransitionLog
	Clock clock.Clock

	machinestatus.OnCluster[*disruptionFacts]
}

// disruptionView is what one sync gathered: the snapshot, and the pod
// coverage and zones a budget action needs.
type disruptionView struct {
	snap  states.DisruptionSnapshot
	zones []string
	pods  []transitions.PodCoverage
}

// target is the budget set for a machine in state with zone.
func (v disruptionView) target(c *operatorv1alpha1.GlusterCluster, state fsm.State, zone string) transitions.DisruptionTarget {
	t := transitions.DisruptionTarget{Namespace: c.Namespace, Cluster: c.Name, Zones: v.zones, Pods: v.pods}
	if states.DisruptionMeaning(state).ZoneOpen {
		t.OpenZone = zone
	}
	return t
}

// Sync runs one decision of the disruption machine of the cluster in key.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.SyncWith(ctx, key, s, s.Anthill, s.Log, s.Clock, disruptionFields)
}

// disruptionFields are the status fields the disruption machine alone
// writes: status.disruption (beside its conditions and history records).
func disruptionFields(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.Disruption}
}

// disruptionFacts is what one disruption sync gathered.
type disruptionFacts struct {
	view disruptionView
	// zone is the persisted zone, since when the machine is in its state.
	zone  string
	since time.Time
	// liveRead: the GD2 lists were read live, not from the cluster's
	// shared view, because the decision on the view acted.
	liveRead bool
}

// Definition is the disruption machine.
func (s *Syncer) Definition() *fsm.Definition { return disruptionDef }

// Get reads the cluster from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Prepare stops the machine where there is nothing to protect: an
// external pool has no pods, a cluster being deleted has its budgets
// removed by the cluster machine, and a cluster not provisioned yet (or
// any more) has no servers (states.ClusterStateMeaning.HasServers).
func (s *Syncer) Prepare(_ context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	if c.Spec.Mode == operatorv1alpha1.ClusterModeExternal || c.DeletionTimestamp != nil {
		return true, engine.Result{}, nil
	}
	return !states.ClusterMeaning(fsm.State(c.Status.Phase)).HasServers, engine.Result{}, nil
}

// Instances is the disruption machine's one instance, at the state and
// zone in status.disruption.
func (s *Syncer) Instances(_ context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*disruptionFacts], error) {
	in := engine.Instance[*disruptionFacts]{Facts: &disruptionFacts{}}
	if st := c.Status.Disruption; st != nil {
		in.State, in.Facts.zone = fsm.State(st.State), st.Zone
		if st.LastTransitionTime != nil {
			in.Facts.since = st.LastTransitionTime.Time
		}
	}
	return []engine.Instance[*disruptionFacts]{in}, nil
}

// Gather reads the disruption facts: the pods and budgets (live), the
// nodes and GD2 from the cluster's shared view.
func (s *Syncer) Gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*disruptionFacts]) error {
	var err error
	in.Facts.view, err = s.gather(ctx, c, in.State, in.Facts.zone, in.Facts.since, false)
	return err
}

// GatherLive reads the facts again with GD2's lists read live
// (engine.ReadsLive). The shared view's (effects.PoolViews) are a little
// old (the volumes up to effects.ConfigListFactor intervals): good enough
// to keep a budget, never to change one, so a decision that opens or
// locks a zone, or applies budgets, is taken again on a live read.
func (s *Syncer) GatherLive(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*disruptionFacts], _ states.Decision) error {
	if !in.Facts.view.snap.GD2Reachable {
		return nil
	}
	view, err := s.gather(ctx, c, in.State, in.Facts.zone, in.Facts.since, true)
	if err != nil {
		return err
	}
	in.Facts.view, in.Facts.liveRead = view, true
	return nil
}

// Decide is the disruption machine's pure decision, about the zone it
// names (Decision.Subject), which Act and Record take from it.
func (s *Syncer) Decide(in engine.Instance[*disruptionFacts]) states.Decision {
	return states.DecideDisruption(in.Facts.view.snap)
}

// Act applies the budgets: an event's action those of the state it
// enters, a step's those of the current state.
func (s *Syncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*disruptionFacts], d states.Decision) (any, error) {
	a, ok := transitions.DisruptionActions.For(d)
	if !ok {
		return nil, nil
	}
	f := in.Facts
	t := f.view.target(c, in.State, f.zone)
	if d.Event != "" {
		to, _ := disruptionDef.Target(d.Event, in.State)
		t = f.view.target(c, to, d.Subject)
	}
	return nil, a(ctx, s.Audit.Disruption(s.Kube), t)
}

// Message is status.disruption's message.
func (s *Syncer) Message(c *operatorv1alpha1.GlusterCluster, _ string) string {
	if c.Status.Disruption == nil {
		return ""
	}
	return c.Status.Disruption.Message
}

// Record lands the outcome in status.disruption and, for a transition, the
// shared history (the record names the zone).
func (s *Syncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*disruptionFacts], now time.Time) {
	out := &outs[0]
	switch out.Kind {
	case engine.Fired:
		out.Committed.Subject = out.Decision.Subject
		c.Status.Disruption = &operatorv1alpha1.DisruptionStatus{
			State: string(out.To), Zone: out.Decision.Subject, LastTransitionTime: &metav1.Time{Time: now}, Message: engine.Truncate(out.Decision.Message, engine.MaxConditionMessage),
		}
		c.Status.History = machinestatus.AppendHealHistory(c.Status.History, out.Committed.Record())
	case engine.Waited, engine.Stepped:
		next := operatorv1alpha1.DisruptionStatus{State: string(out.To), Zone: out.Facts.zone, Message: engine.Truncate(out.Decision.Message, engine.MaxConditionMessage)}
		if old := c.Status.Disruption; old != nil {
			next.LastTransitionTime = old.LastTransitionTime
		}
		c.Status.Disruption = &next
	}
}

// Finish looks again after pollWait at the latest while the machine
// waits. A failed status write after budgets were applied is harmless: the
// budgets then match the new state, at least as protective as the decision
// wanted, and the next sync decides again and repairs them if needed.
func (s *Syncer) Finish(_ context.Context, _ *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*disruptionFacts], res engine.Result, err error) (engine.Result, error) {
	if k := outs[0].Kind; (k == engine.Waited || k == engine.Stepped) && res.RequeueAfter == 0 {
		res.RequeueAfter = machinestatus.PollWait
	}
	return res, err
}
