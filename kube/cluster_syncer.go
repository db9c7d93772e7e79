package kube

import (
	"context"
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// DefaultProvisionGrace is how long a new cluster may take to bring every
// node Online before it reports Degraded instead of Provisioning.
const DefaultProvisionGrace = 10 * time.Minute

// ClusterSyncer advances the cluster machine of one GlusterCluster per sync.
type ClusterSyncer struct {
	fence writeFence

	Clusters     listers.GlusterClusterLister
	Nodes        listers.GlusterNodeLister
	Secrets      corev1listers.SecretLister
	Services     corev1listers.ServiceLister
	StatefulSets appsv1listers.StatefulSetLister
	PVs          corev1listers.PersistentVolumeLister
	CSI          csiListers
	// EndpointSlices are an external cluster's published addresses.
	EndpointSlices discoveryv1listers.EndpointSliceLister
	Anthill        versioned.Interface
	Kube           transitions.KubeOps
	GD2            *GD2Clients
	Log            *TransitionLog
	Clock          clock.Clock
}

var clusterDef = states.ClusterDefinition()

// Sync runs one decision for the cluster named by key.
func (s *ClusterSyncer) Sync(ctx context.Context, key Key) (Result, error) {
	cached, err := s.Clusters.GlusterClusters(key.Namespace).Get(key.Name)
	if apierrors.IsNotFound(err) {
		s.GD2.Forget(key.Namespace, key.Name)
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if s.fence.behind(key, cached.ResourceVersion) {
		return Result{RequeueAfter: fenceRetry}, nil
	}
	c := cached.DeepCopy()
	state := fsm.State(c.Status.Phase)
	if state == "" {
		state = clusterDef.Initial
	}
	if state == states.ClusterDeleted {
		return Result{}, removeFinalizer(ctx, c, FinalizerCluster, s.update)
	}
	if added, err := addFinalizer(ctx, c, FinalizerCluster, s.update); added || err != nil {
		return Result{Requeue: err == nil}, err
	}
	m, err := clusterDef.NewMachine(state)
	if err != nil {
		return Result{}, clusterStateUnknown(ctx, s.Anthill, s.Log, c, err)
	}
	snap, err := s.snapshot(ctx, c, state)
	if err != nil {
		return Result{}, err
	}
	d := states.DecideCluster(snap)
	target := transitions.ClusterTarget{Namespace: c.Namespace, Name: c.Name, DesiredNodes: snap.DesiredNodes}
	ops := transitions.Ops{Kube: s.Kube, GD2: noGD2{}}
	run := func(e fsm.Event, st fsm.Step) error {
		if a, ok := lookup(transitions.ClusterActions, e, st); ok {
			return a(ctx, ops, target)
		}
		return nil
	}
	did, tr, err := applyDecision(ctx, m, d, run, func(reason, msg string) { s.Log.Warn(c, reason, msg) })
	switch {
	case err != nil:
		return Result{}, err
	case did == appliedEvent:
		return s.commit(ctx, c, tr, d, snap)
	}
	return s.wait(ctx, c, state, d, snap)
}

// snapshot gathers the cluster's facts from listers and one GD2 read.
func (s *ClusterSyncer) snapshot(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State) (states.ClusterSnapshot, error) {
	snap := states.ClusterSnapshot{
		State: state, Now: s.Clock.Now(), Deleting: c.DeletionTimestamp != nil,
		DesiredNodes: states.DesiredNodes(templateFacts(c.Spec.NodeTemplates)), ProvisionGrace: DefaultProvisionGrace,
	}
	if t := lastTransition(c.Status.History); t != nil {
		snap.StateSince = t.Time
	} else {
		snap.StateSince = c.CreationTimestamp.Time
	}
	if IsExternal(c) {
		// No etcd, secret or headless Service: the management Service and
		// its EndpointSlices are all the infrastructure there is.
		v, err := ObserveEndpoints(c, s.Services, s.EndpointSlices)
		if err != nil {
			return snap, err
		}
		snap.External = true
		snap.InfraCreated, snap.InfraReady, snap.InfraExists = v.ServiceExists, v.ServiceExists, v.AnyExists
		snap.EndpointsInSync, snap.EndpointsDiff = v.InSync, v.Diff
	} else {
		infra, err := s.infra(c)
		if err != nil {
			return snap, err
		}
		snap.InfraCreated, snap.InfraReady, snap.InfraExists = infra.created, infra.ready, infra.exists
	}
	if err := s.CSI.fillCSI(c, &snap.DriversMissing, &snap.InfraExists); err != nil {
		return snap, err
	}
	nodes, err := s.Nodes.GlusterNodes(c.Namespace).List(labels.Everything())
	if err != nil {
		return snap, err
	}
	states.CountNodes(clusterNodeFacts(nodes, c.Name), "").FillCluster(&snap)
	for _, v := range c.Status.Volumes {
		if v.State != string(states.HealHealthy) {
			snap.VolumesUnhealthy++
		}
	}
	pvs, err := s.PVs.List(labels.Everything())
	if err != nil {
		return snap, err
	}
	for _, pv := range pvs {
		if usesCluster(pv, c) {
			snap.GlusterPVs++
			snap.GlusterPVNames = append(snap.GlusterPVNames, pv.Name)
		}
	}
	slices.Sort(snap.GlusterPVNames)
	if up := c.Status.Upgrade; up != nil {
		snap.UpgradeActive = up.State != "" && up.State != string(states.UpgradeIdle) && up.State != string(states.UpgradeComplete)
	}
	if gc, err := s.GD2.For(ctx, c); err == nil {
		_, err := gc.ListPeers(ctx, gd2.Filter{})
		snap.GD2Reachable = err == nil
	}
	return snap, nil
}

// infraState is what exists of a cluster's shared infrastructure.
type infraState struct {
	// created: every object exists; ready: and etcd is ready; exists: any
	// object still exists (for deletion).
	created, ready, exists bool
}

// infra reads the shared infrastructure from the listers.
func (s *ClusterSyncer) infra(c *operatorv1alpha1.GlusterCluster) (infraState, error) {
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
	if secretName, _ := AuthSecretRef(c); secretName == AuthSecretName(c.Name) {
		_, err := s.Secrets.Secrets(c.Namespace).Get(secretName)
		if _, err := found(err); err != nil {
			return infraState{}, err
		}
	}
	for _, name := range []string{HeadlessServiceName(c.Name), ManagementServiceName(c.Name), EtcdName(c.Name)} {
		_, err := s.Services.Services(c.Namespace).Get(name)
		if _, err := found(err); err != nil {
			return infraState{}, err
		}
	}
	sts, err := s.StatefulSets.StatefulSets(c.Namespace).Get(EtcdName(c.Name))
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

func (s *ClusterSyncer) commit(ctx context.Context, c *operatorv1alpha1.GlusterCluster, tr fsm.Transition, d states.Decision, snap states.ClusterSnapshot) (Result, error) {
	now := s.Clock.Now()
	cm := Committed{
		Machine: states.ClusterMachine, Namespace: c.Namespace, Name: c.Name,
		From: tr.From[0], To: tr.To, Event: tr.Event, Reason: d.Reason, Message: d.Message, Time: now,
	}
	c.Status.Phase = operatorv1alpha1.ClusterPhase(tr.To)
	c.Status.History = AppendHistory(c.Status.History, cm.Record())
	s.fillStatus(c, tr.To, d, snap, now)
	updated, err := s.fence.commitClusterStatus(ctx, s.Anthill, clusterKey(c.Namespace, c.Name), c)
	if err != nil {
		return Result{}, fmt.Errorf("persist transition %s -> %s: %w", cm.From, cm.To, err)
	}
	s.Log.Announce(updated, cm)
	if tr.To == states.ClusterDeleted {
		s.GD2.Forget(c.Namespace, c.Name)
		return Result{}, removeFinalizer(ctx, updated.DeepCopy(), FinalizerCluster, s.update)
	}
	// The informer delivers this write as an update; that sync continues.
	return Result{}, nil
}

// wait writes status only if something a user can see changed.
func (s *ClusterSyncer) wait(ctx context.Context, c *operatorv1alpha1.GlusterCluster, state fsm.State, d states.Decision, snap states.ClusterSnapshot) (Result, error) {
	before := c.Status.DeepCopy()
	if c.Status.Phase == "" {
		c.Status.Phase = operatorv1alpha1.ClusterPhase(state)
	}
	s.fillStatus(c, state, d, snap, s.Clock.Now())
	if d.Reason == states.ReasonPVsExist {
		// A held deletion is something an admin must act on: say which
		// PersistentVolumes hold it in a Warning Event, once per change.
		if old := apimeta.FindStatusCondition(before.Conditions, operatorv1alpha1.ConditionReady); old == nil || old.Reason != d.Reason || old.Message != truncate(d.Message, 1024) {
			s.Log.Warn(c, d.Reason, d.Message)
		}
	}
	if !equality.Semantic.DeepEqual(before, &c.Status) {
		if _, err := s.Anthill.OperatorV1alpha1().GlusterClusters(c.Namespace).UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
			return Result{}, err
		}
	}
	after := d.RequeueAfter
	if after == 0 {
		// Node transitions re-enqueue the cluster, but a cluster must also
		// notice GD2 becoming unreachable without any Kubernetes event.
		after = pollWait
	}
	return Result{RequeueAfter: after}, nil
}

func (s *ClusterSyncer) fillStatus(c *operatorv1alpha1.GlusterCluster, st fsm.State, d states.Decision, snap states.ClusterSnapshot, now time.Time) {
	c.Status.ObservedGeneration = c.Generation
	c.Status.Nodes = operatorv1alpha1.NodeCounts{Desired: int32(snap.DesiredNodes), Total: int32(snap.NodesTotal), Online: int32(snap.NodesOnline)}
	var p phaseConditions
	switch st {
	case states.ClusterReady:
		p.ready = true
	case states.ClusterDegraded:
		p.degraded = true
	case states.ClusterDeleted:
	default:
		p.progressing = true
	}
	p.set(&c.Status.Conditions, d, c.Generation, now)
}

func (s *ClusterSyncer) update(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
	return s.Anthill.OperatorV1alpha1().GlusterClusters(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
}
