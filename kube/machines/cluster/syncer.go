package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
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

// The phases the runner finds on the syncer, said at compile time
// (SurfacesUnknown through machinestatus.OnCluster: an unknown state sets the
// cluster's Degraded condition).
var (
	_ engine.MachineSyncer[*operatorv1alpha1.GlusterCluster, *clusterFacts] = (*Syncer)(nil)
	_ engine.Forgets                                                        = (*Syncer)(nil)
	_ engine.Prepares[*operatorv1alpha1.GlusterCluster]                     = (*Syncer)(nil)
	_ engine.ReadsLive[*operatorv1alpha1.GlusterCluster, *clusterFacts]     = (*Syncer)(nil)
	_ engine.SurfacesUnknown[*operatorv1alpha1.GlusterCluster]              = (*Syncer)(nil)
	_ engine.Finishes[*operatorv1alpha1.GlusterCluster, *clusterFacts]      = (*Syncer)(nil)
)

// DefaultProvisionGrace is how long a new cluster may take to bring every
// node Online before it reports Degraded instead of Provisioning.
const DefaultProvisionGrace = 10 * time.Minute

// Syncer advances the cluster machine of one GlusterCluster per sync.
type Syncer struct {
	Clusters     listers.GlusterClusterLister
	Nodes        listers.GlusterNodeLister
	Secrets      corev1listers.SecretLister
	Services     corev1listers.ServiceLister
	StatefulSets appsv1listers.StatefulSetLister
	// PVs are every PersistentVolume, indexed by usesIndex (indexUses).
	PVs cache.Indexer
	CSI CSIListers
	// EndpointSlices are an external cluster's published addresses.
	EndpointSlices discoveryv1listers.EndpointSliceLister
	// Resolver looks up an external cluster's host names; nil is
	// net.DefaultResolver.
	Resolver objects.HostResolver
	Anthill  versioned.Interface
	Kube     transitions.KubeOps
	// Audit logs every configuration-altering call of the actions.
	Audit effects.Audit
	GD2   *effects.GD2Clients
	// TLS checks spec.caSecretRef and the certificates issued from it; nil
	// leaves TLS out of the facts (tests of other concerns).
	TLS *effects.TLS
	// Snapshots reads the snapshot API live for clusters with
	// spec.csi.snapshots.enabled; nil leaves snapshots out of the facts.
	Snapshots *effects.SnapshotAPI
	Log       *engine.TransitionLog
	Clock     clock.Clock

	machinestatus.OnCluster[*clusterFacts]
}

var clusterDef = states.ClusterDefinition()

// Sync runs one decision for the cluster named by key.
func (s *Syncer) Sync(ctx context.Context, key engine.Key) (engine.Result, error) {
	return s.SyncWith(ctx, key, s, s.Anthill, s.Log, s.Clock, clusterFields)
}

// clusterFields are the status fields the cluster machine alone writes:
// its phase, node counts, capacity, autoscaler decision and observed
// generation (beside its conditions and history records).
func clusterFields(st *operatorv1alpha1.GlusterClusterStatus) []any {
	return []any{&st.Phase, &st.Nodes, &st.Capacity, &st.Autoscaling, &st.ObservedGeneration}
}

// clusterFacts is what one cluster sync gathered: the snapshot, the
// capacity to record (nil: GD2 did not say), and in automatic mode the
// autoscaler's decision and the status.autoscaling it makes.
type clusterFacts struct {
	snap        states.ClusterSnapshot
	capacity    *operatorv1alpha1.CapacityStatus
	autoscale   states.AutoscaleDecision
	autoscaling *operatorv1alpha1.AutoscalingStatus
	// bricks counts each peer's bricks (nil: GD2 did not say); the
	// autoscaler, the scaleNodes ledger entries and the action all order
	// nodes for removal by it.
	bricks objects.BrickCounts
	// gd2Err is why GD2 did not answer (no client could be made, or its
	// peer list failed); nil when it answered.
	gd2Err error
	// nodeLedger is what the cluster's GlusterNodes put on record in
	// their own ledgers that the cluster's ledger lacks: Record copies it.
	nodeLedger []operatorv1alpha1.LedgerEntry
	// csiClash is what of the cluster's CSI objects another owner holds:
	// Record warns of it.
	csiClash csiClash
	// unresolved are the external nodes' host names that did not
	// resolve: Record warns of them.
	unresolved []string
	// snapshotClassTaken names the VolumeSnapshotClass the cluster wants
	// when an object anthill did not make for it holds the name.
	snapshotClassTaken string
}

// Definition is the cluster machine.
func (s *Syncer) Definition() *fsm.Definition { return clusterDef }

// Get reads the cluster from the cache.
func (s *Syncer) Get(key engine.Key) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
}

// Forget drops the GD2 client of a cluster that is gone.
func (s *Syncer) Forget(key engine.Key) { s.GD2.Forget(key.Namespace, key.Name) }

// Prepare releases a Deleted cluster and adds the finalizer to every other.
func (s *Syncer) Prepare(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (bool, engine.Result, error) {
	if fsm.State(c.Status.Phase) == states.ClusterDeleted {
		return true, engine.Result{}, effects.RemoveFinalizer(ctx, c, objects.FinalizerCluster, effects.UpdateGlusterCluster(s.Anthill))
	}
	if added, err := effects.AddFinalizer(ctx, c, objects.FinalizerCluster, effects.UpdateGlusterCluster(s.Anthill)); added || err != nil {
		return true, engine.Result{Requeue: err == nil}, err
	}
	return false, engine.Result{}, nil
}

// Instances is the cluster machine's one instance, at the persisted phase.
func (s *Syncer) Instances(_ context.Context, c *operatorv1alpha1.GlusterCluster) ([]engine.Instance[*clusterFacts], error) {
	return []engine.Instance[*clusterFacts]{{State: fsm.State(c.Status.Phase), Facts: &clusterFacts{}}}, nil
}

// Gather reads the cluster's facts, and its capacity from GD2's devices
// and each peer's brick count from its volumes when GD2 answers
// (status.capacity keeps the last reading otherwise).
func (s *Syncer) Gather(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*clusterFacts]) error {
	if err := s.snapshot(ctx, c, in.State, in.Facts); err != nil {
		return err
	}
	var err error
	if in.Facts.csiClash, err = s.CSI.readCSIClash(c); err != nil {
		return err
	}
	var reading *capacityReading
	if in.Facts.snap.GD2Reachable {
		if reading = s.capacity(ctx, c); reading != nil {
			in.Facts.capacity = reading.status
		}
		in.Facts.snap.OptionsDiffer = s.optionsDiffer(ctx, c)
		in.Facts.bricks = s.brickCounts(ctx, c)
	}
	return s.autoscale(c, in.State, reading, in.Facts)
}

// GatherLive reads, for a scaleNodes step about to run, the cluster and
// its GlusterNodes live and plans the scaling over them: the ledger puts
// on record what the action, which takes this plan, is about to do, and a
// step repeated while the cache lags plans (and records) nothing more
// (engine.ReadsLive).
func (s *Syncer) GatherLive(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in *engine.Instance[*clusterFacts], d states.Decision) error {
	if d.Step != states.ClusterScaleNodes || objects.IsExternal(c) {
		return nil
	}
	live, err := s.Anthill.OperatorV1alpha1().GlusterClusters(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("read the cluster to plan its scaling: %w", err)
	}
	list, err := s.Anthill.OperatorV1alpha1().GlusterNodes(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list GlusterNodes to plan the scaling: %w", err)
	}
	var nodes []*operatorv1alpha1.GlusterNode
	for i := range list.Items {
		if list.Items[i].Spec.Cluster == c.Name {
			nodes = append(nodes, &list.Items[i])
		}
	}
	in.Facts.snap.Scale = objects.ScalePlanOf(live, nodes, in.Facts.bricks).Order()
	return nil
}

// optionsToSet are the GD2 cluster options of spec.clusterOptions whose
// keys differ in GD2, with the spec's values.
func optionsToSet(c *operatorv1alpha1.GlusterCluster, differ []string) map[string]string {
	opts := map[string]string{}
	for _, k := range differ {
		opts[k] = c.Spec.ClusterOptions[k]
	}
	return opts
}

// optionsDiffer reads GD2's cluster options and names the keys of
// spec.clusterOptions whose value GD2 does not have (none when GD2 does
// not answer, or the spec sets none).
func (s *Syncer) optionsDiffer(ctx context.Context, c *operatorv1alpha1.GlusterCluster) []string {
	if len(c.Spec.ClusterOptions) == 0 || objects.IsExternal(c) {
		return nil
	}
	gc, err := s.GD2.For(ctx, c)
	if err != nil {
		return nil
	}
	opts, err := gc.ClusterOptions(ctx)
	if err != nil {
		s.Log.Log.Debug("reading GD2 cluster options failed", zap.String(engine.LogNamespace, c.Namespace), zap.String(engine.LogName, c.Name), zap.Error(err))
		return nil
	}
	have := make(map[string]string, len(opts))
	for _, o := range opts {
		have[o.Key] = o.Value
	}
	return states.OptionsDiffer(c.Spec.ClusterOptions, have)
}

// Decide is the cluster's pure decision.
func (s *Syncer) Decide(in engine.Instance[*clusterFacts]) states.Decision {
	return states.DecideCluster(in.Facts.snap)
}

// Act runs the cluster action of d.
func (s *Syncer) Act(ctx context.Context, c *operatorv1alpha1.GlusterCluster, in engine.Instance[*clusterFacts], d states.Decision) (any, error) {
	a, ok := transitions.ClusterActions.For(d)
	if !ok {
		return nil, nil
	}
	target := transitions.ClusterTarget{Namespace: c.Namespace, Name: c.Name, DesiredNodes: in.Facts.snap.DesiredNodes, Bricks: in.Facts.bricks, Scale: in.Facts.snap.Scale}
	ops := transitions.Ops{Kube: s.Kube, GD2: effects.NoGD2{}}
	if d.Step == states.ClusterApplyOptions {
		gc, err := s.GD2.For(ctx, c)
		if err != nil {
			return nil, err
		}
		ops.GD2 = &effects.GD2{Client: gc}
		target.Options = optionsToSet(c, in.Facts.snap.OptionsDiffer)
	}
	return nil, a(ctx, s.Audit.Ops(ops), target)
}

// Message is the message of the cluster's Ready condition.
func (s *Syncer) Message(c *operatorv1alpha1.GlusterCluster, _ string) string {
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionReady); cond != nil {
		return cond.Message
	}
	return ""
}

// Record copies the GlusterNodes' new ledger entries into the cluster's,
// warns of a CSI clash Gather read, and lands the outcome in the phase,
// the conditions and the history.
func (s *Syncer) Record(c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*clusterFacts], now time.Time) {
	out := &outs[0]
	s.warnCSIClash(c, out.Facts.csiClash)
	s.warnUnresolved(c, out.Facts.unresolved)
	s.warnSnapshotClassTaken(c, out.Facts.snapshotClassTaken)
	for _, e := range out.Facts.nodeLedger {
		c.Status.Ledger = machinestatus.AppendBounded(c.Status.Ledger, e, operatorv1alpha1.MaxLedger)
	}
	switch out.Kind {
	case engine.Unknown, engine.Refused, engine.Failed:
		return
	case engine.Fired:
		c.Status.History = engine.AppendHistory(c.Status.History, out.Committed.Record())
	}
	c.Status.Phase = operatorv1alpha1.ClusterPhase(out.To)
	if out.Facts.capacity != nil {
		c.Status.Capacity = out.Facts.capacity
	}
	c.Status.Autoscaling = out.Facts.autoscaling
	setAutoscalingCondition(c, out.Facts.autoscaling)
	s.fillStatus(c, out.To, out.Decision, out.Facts.snap, now)
}

// Finish forgets a cluster that reached Deleted and releases it. A wait
// looks again after pollWait at the latest: node transitions re-enqueue
// the cluster, but it must also notice GD2 becoming unreachable without
// any Kubernetes event.
func (s *Syncer) Finish(ctx context.Context, c *operatorv1alpha1.GlusterCluster, outs []engine.Outcome[*clusterFacts], res engine.Result, err error) (engine.Result, error) {
	switch out := outs[0]; out.Kind {
	case engine.Fired:
		if out.To == states.ClusterDeleted {
			s.GD2.Forget(c.Namespace, c.Name)
			return engine.Result{}, effects.RemoveFinalizer(ctx, c.DeepCopy(), objects.FinalizerCluster, effects.UpdateGlusterCluster(s.Anthill))
		}
	case engine.Waited, engine.Stepped:
		if res.RequeueAfter == 0 {
			res.RequeueAfter = machinestatus.PollWait
		}
	}
	// A step held by the cooldown is looked at again when it ends.
	if at := outs[0].Facts.autoscale.RetryAt; !at.IsZero() && !res.Requeue {
		if left := max(at.Sub(s.Clock.Now()), time.Second); res.RequeueAfter == 0 || left < res.RequeueAfter {
			res.RequeueAfter = left
		}
	}
	return res, err
}

// snapshot gathers the cluster's facts into f.snap from listers and one
// GD2 read. Why GD2 did not answer goes to f.gd2Err: the snapshot then
// has GD2Reachable false, which is not an error.
func (s *Syncer) snapshot(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State, f *clusterFacts) error {
	f.snap = states.ClusterSnapshot{
		State: state, Now: s.Clock.Now(), Deleting: c.DeletionTimestamp != nil, Paused: c.Spec.Paused, Off: objects.AutomationOff(c),
		DesiredNodes: states.DesiredNodes(objects.TemplateFacts(c)), ProvisionGrace: DefaultProvisionGrace,
		ClusterOptions: c.Spec.ClusterOptions,
	}
	snap := &f.snap
	if t := lastTransition(c.Status.History); t != nil {
		snap.StateSince = t.Time
	} else {
		snap.StateSince = c.CreationTimestamp.Time
	}
	if objects.IsExternal(c) {
		// No etcd, secret or headless Service: the management Service and
		// its EndpointSlices are all the infrastructure there is.
		names := objects.ResolveExternalNames(ctx, s.resolver(), c)
		v, err := ObserveEndpoints(c, names, s.Services, s.EndpointSlices)
		if err != nil {
			return err
		}
		f.unresolved = names.Unresolved
		snap.External = true
		snap.InfraCreated, snap.InfraReady, snap.InfraExists = v.ServiceExists, v.ServiceExists, v.AnyExists
		snap.EndpointsInSync, snap.EndpointsDiff = v.InSync, v.Diff
	} else {
		infra, err := s.infra(c)
		if err != nil {
			return err
		}
		snap.InfraCreated, snap.InfraReady, snap.InfraExists = infra.created, infra.ready, infra.exists
	}
	if err := s.CSI.fillCSI(c, &snap.DriversMissing, &snap.InfraExists); err != nil {
		return err
	}
	if err := s.readSnapshotClass(ctx, c, f); err != nil {
		return err
	}
	nodes, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return err
	}
	states.CountNodes(objects.ClusterNodeFacts(nodes, c), "").FillCluster(snap)
	f.nodeLedger = copyNodeLedgers(c.Status.Ledger, c.Name, nodes)
	if s.TLS != nil && objects.TLSEnabled(c) && !snap.Deleting {
		check, err := s.TLS.Check(ctx, c, nodes)
		if err != nil {
			return err
		}
		snap.CAProblem, snap.CertificatesDue = check.Problem, check.Due
	}
	for _, v := range c.Status.Volumes {
		if v.State != string(states.HealHealthy) {
			snap.VolumesUnhealthy++
		}
	}
	snap.GlusterPVNames, err = gather.IndexedPVNames(s.PVs, c)
	if err != nil {
		return err
	}
	snap.GlusterPVs = len(snap.GlusterPVNames)
	if up := c.Status.Upgrade; up != nil {
		snap.UpgradeActive = up.State != "" && up.State != string(states.UpgradeIdle) && up.State != string(states.UpgradeComplete)
	}
	gc, err := s.GD2.For(ctx, c)
	if err == nil {
		// The shared peer list (effects.PoolViews) answers too: a list
		// read within the interval shows GD2 reachable, and a failure is
		// never kept, so an unreachable GD2 shows on the next read.
		_, err = s.GD2.Shared(c, gc).ListPeers(ctx, gd2.Filter{})
		snap.GD2Reachable = err == nil
		var certErr *tls.CertificateVerificationError
		if errors.As(err, &certErr) {
			// The verification error names certificates and issuers,
			// never key material.
			snap.GD2Untrusted = fmt.Sprintf("GD2 at %s presented a certificate the cluster's CA (spec.caSecretRef) does not verify: %v.", objects.ManagementEndpoint(c), certErr.Err)
		}
	}
	f.gd2Err = err
	return nil
}

// infraState is what exists of a cluster's shared infrastructure.
type infraState struct {
	// created: every object exists; ready: and etcd is ready; exists: any
	// object still exists (for deletion).
	created, ready, exists bool
}

// infra reads the shared infrastructure from the listers.
func (s *Syncer) infra(c *operatorv1alpha1.GlusterCluster) (infraState, error) {
	st := infraState{created: true}
	found := func(err error) (bool, error) {
		switch {
		case err == nil:
			st.exists = true
			return true, nil
		case apierrors.IsNotFound(err):
			st.created = false
			return false, nil
		}
		return false, err
	}
	// Only the secret anthill creates is infrastructure; a secret the admin
	// references is theirs, and GD2 reachability shows whether it works.
	if secretName, _ := objects.AuthSecretRef(c); secretName == objects.AuthSecretName(c.Name) {
		_, err := s.Secrets.Secrets(c.Namespace).Get(secretName)
		if _, err := found(err); err != nil {
			return infraState{}, err
		}
	}
	for _, name := range []string{objects.HeadlessServiceName(c.Name), objects.ManagementServiceName(c.Name), objects.EtcdName(c.Name)} {
		_, err := s.Services.Services(c.Namespace).Get(name)
		if _, err := found(err); err != nil {
			return infraState{}, err
		}
	}
	sts, err := s.StatefulSets.StatefulSets(c.Namespace).Get(objects.EtcdName(c.Name))
	ok, ferr := found(err)
	if ferr != nil {
		return infraState{}, ferr
	}
	st.ready = st.created && ok && sts.Status.ReadyReplicas >= 1
	return st, nil
}

func lastTransition(h []operatorv1alpha1.TransitionRecord) *metav1.Time {
	for i := len(h) - 1; i >= 0; i-- {
		if h[i].Machine == "" || h[i].Machine == states.ClusterMachine {
			return &h[i].Time
		}
	}
	return nil
}

func (s *Syncer) fillStatus(c *operatorv1alpha1.GlusterCluster, st fsm.State, d states.Decision, snap states.ClusterSnapshot, now time.Time) {
	c.Status.ObservedGeneration = c.Generation
	c.Status.Nodes = operatorv1alpha1.NodeCounts{Desired: int32(snap.DesiredNodes), Total: int32(snap.NodesTotal), Online: int32(snap.NodesOnline)}
	machinestatus.PhaseConditionsOf(states.ClusterMeaning(st).Condition).Set(&c.Status.Conditions, d, c.Generation, now)
}

// LiveGD2 is what the facts of a live decision (`kubectl gluster explain`)
// in state st show of GD2: whether the decision depends on GD2 answering
// (needed: in every phase but the first, where nothing runs GD2 yet, and
// the teardown, which waits on PersistentVolumes and nodes), whether GD2
// answered (read), and why not (err).
func (s *Syncer) LiveGD2(st fsm.State, f *clusterFacts) (needed, read bool, err error) {
	if f.snap.GD2Reachable {
		return true, true, nil
	}
	return !slices.Contains([]fsm.State{states.ClusterPending, states.ClusterDeleting, states.ClusterDeleted}, st), false, f.gd2Err
}
