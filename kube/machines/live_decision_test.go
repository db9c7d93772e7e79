package machines

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines/cluster"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/internal/machinetest"
	"github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// liveFixture is a node's world with the operator's node syncer over it.
type liveFixture struct {
	*machinetest.NodeWorld
	t      *testing.T
	syncer *node.Syncer
}

func newLiveFixture(t *testing.T) *liveFixture {
	t.Helper()
	w := machinetest.NewNodeWorld(t)
	p := w.SyncerParts()
	return &liveFixture{NodeWorld: w, t: t, syncer: &node.Syncer{
		Nodes: p.Nodes, Clusters: p.Clusters, Pods: p.Pods, PVCs: p.PVCs,
		Anthill: w.Anthill, Kube: p.Kube, GD2: p.GD2, Clock: w.Clock, Log: p.Log,
	}}
}

// sync runs one sync of the operator's node syncer and delivers the
// stored node to its store, as the informer would.
func (f *liveFixture) sync() (engine.Result, error) {
	f.t.Helper()
	res, err := f.syncer.Sync(context.Background(), gather.NodeKey("ns", machinetest.NodeName))
	f.Stored(f.t)
	return res, err
}

func (f *liveFixture) node() *operatorv1alpha1.GlusterNode { return f.Node(f.t) }

func (f *liveFixture) clusterObj() *operatorv1alpha1.GlusterCluster { return f.Cluster(f.t) }

// operatorTook checks that the sync from before to after took decision d
// of the live read: the transition it fired, or the wait or step whose
// message it persisted.
func operatorTook(t *testing.T, before fsm.State, after operatorv1alpha1.GlusterNodeStatus, live LiveDecision) {
	t.Helper()
	d := live.Decision
	if live.State != before {
		t.Fatalf("live decision taken in %s, the node was in %s", live.State, before)
	}
	if d.Event != "" {
		last := after.History[len(after.History)-1]
		if last.Event != string(d.Event) || last.Reason != d.Reason || last.Message != d.Message || last.To != string(live.To) {
			t.Fatalf("operator fired %s -> %s (%s: %s); live decision was %s -> %s (%s: %s)",
				last.Event, last.To, last.Reason, last.Message, d.Event, live.To, d.Reason, d.Message)
		}
		return
	}
	if fsm.State(after.State) != before || after.Message != d.Message {
		t.Fatalf("operator stayed in %s saying %q; live decision was %s/%s in %s saying %q", after.State, after.Message, d.Step, d.Reason, before, d.Message)
	}
}

// TestLiveNodeDecisionIsTheOperatorsDecision: read through the clients an
// admin has (informers over them, GD2 through the cluster's endpoint and
// auth Secret), the live decision is the one the operator's own sync then
// takes, at every step from Provisioning to Online and into Offline; and
// with the auth Secret unreadable it says GD2 is unavailable instead of
// deciding without it.
func TestLiveNodeDecisionIsTheOperatorsDecision(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	// The operator watches only what anthill labels.
	for _, kind := range []string{"pod", "pvc"} {
		labelled := map[string]string{objects.LabelManagedBy: objects.ManagedByAnthill}
		switch kind {
		case "pod":
			p, err := f.Kube.CoreV1().Pods("ns").Get(ctx, objects.NodePodName("gc-z1-a"), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			p.Labels = labelled
			if _, err := f.Kube.CoreV1().Pods("ns").Update(ctx, p, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		case "pvc":
			c, err := f.Kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, objects.BrickClaimName("gc-z1-a", 0), metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c.Labels = labelled
			if _, err := f.Kube.CoreV1().PersistentVolumeClaims("ns").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	r := LiveReads{Kube: f.Kube, Anthill: f.Anthill, Clock: f.Clock, SyncTimeout: 10 * time.Second}
	step := func() LiveDecision {
		t.Helper()
		before := f.node()
		live, err := LiveNodeDecision(ctx, r, "ns", "gc-z1-a")
		if err != nil {
			t.Fatal(err)
		}
		if !live.Known() || live.Refused != "" {
			t.Fatalf("live decision in %s not known: GD2 %s (%v), refused %q", live.State, live.GD2, live.GD2Error, live.Refused)
		}
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
		operatorTook(t, fsm.State(before.Status.State), f.node().Status, live)
		return live
	}
	var seen []string
	for range 4 {
		l := step()
		seen = append(seen, string(l.State)+":"+string(l.Decision.Event)+string(l.Decision.Step)+"/"+l.GD2)
	}
	if f.node().Status.State != string(states.NodeOnline) {
		t.Fatalf("after %v the node is %s, want Online", seen, f.node().Status.State)
	}
	// The node's GD2 dies: the live decision sees it before the operator.
	if err := f.Sim.SetPeerAlive(f.node().Status.PeerID, false); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if i == 1 {
			f.Clock.Step(gather.DefaultOfflineGrace) // past the offline grace
		}
		l := step()
		seen = append(seen, string(l.State)+":"+string(l.Decision.Event)+string(l.Decision.Step)+"/"+l.GD2)
	}
	if f.node().Status.State != string(states.NodeOffline) {
		t.Fatalf("after %v the node is %s, want Offline", seen, f.node().Status.State)
	}
	t.Logf("live decisions: %v", seen)

	// Without the auth Secret GD2 cannot be reached: no guess.
	if err := f.Kube.CoreV1().Secrets("ns").Delete(ctx, "auth", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	live, err := LiveNodeDecision(ctx, r, "ns", "gc-z1-a")
	if err != nil {
		t.Fatal(err)
	}
	if live.Known() || live.GD2 != LiveGD2Unavailable || live.GD2Error == nil || !strings.Contains(live.GD2Error.Error(), "auth") {
		t.Fatalf("without the auth Secret: GD2 %s (%v), known %t", live.GD2, live.GD2Error, live.Known())
	}
}

// TestLiveClusterDecisionIsTheOperatorsDecision: the cluster machine's
// live decision, read in the cluster's namespace with the admin's
// clients, is the one its sync then takes, wired from the same informer
// factories as the operator's (every namespace), through provisioning.
func TestLiveClusterDecisionIsTheOperatorsDecision(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	r := LiveReads{Kube: f.Kube, Anthill: f.Anthill, Clock: f.Clock, SyncTimeout: 10 * time.Second}
	operatorSync := func() {
		t.Helper()
		fs, err := newFactories(f.Kube, f.Anthill, 0, metav1.NamespaceAll)
		if err != nil {
			t.Fatal(err)
		}
		v1 := fs.anthill.Operator().V1alpha1()
		core, apps := fs.managed.Core().V1(), fs.managed.Apps().V1()
		csi := csiInformers(fs.managed, fs.all)
		pvIndex, err := gather.IndexUses(fs.all.Core().V1().PersistentVolumes().Informer(), gather.PVUses)
		if err != nil {
			t.Fatal(err)
		}
		cs := &cluster.Syncer{
			Clusters: v1.GlusterClusters().Lister(), Nodes: v1.GlusterNodes().Lister(), Secrets: core.Secrets().Lister(),
			Services: core.Services().Lister(), StatefulSets: apps.StatefulSets().Lister(), PVs: pvIndex,
			CSI: csi.listers(), EndpointSlices: fs.managed.Discovery().V1().EndpointSlices().Lister(),
			Anthill: f.Anthill, Kube: f.syncer.Kube, GD2: f.syncer.GD2, Log: f.syncer.Log, Clock: f.Clock,
		}
		// The listers registered their informers: start them as Wire's caller does.
		stop := make(chan struct{})
		defer close(stop)
		fs.managed.Start(stop)
		fs.all.Start(stop)
		fs.anthill.Start(stop)
		fs.managed.WaitForCacheSync(stop)
		fs.all.WaitForCacheSync(stop)
		fs.anthill.WaitForCacheSync(stop)
		if _, err := cs.Sync(ctx, gather.ClusterKey("ns", "gc")); err != nil {
			t.Fatal(err)
		}
	}
	var seen []string
	for range 3 {
		before, err := f.Anthill.OperatorV1alpha1().GlusterClusters("ns").Get(ctx, "gc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		live, err := LiveClusterDecision(ctx, r, "ns", "gc")
		if err != nil {
			t.Fatal(err)
		}
		if !live.Known() || live.Refused != "" {
			t.Fatalf("live decision in %s not known: GD2 %s (%v), refused %q", live.State, live.GD2, live.GD2Error, live.Refused)
		}
		operatorSync()
		after, err := f.Anthill.OperatorV1alpha1().GlusterClusters("ns").Get(ctx, "gc", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(after.Finalizers) > len(before.Finalizers) {
			// The first sync only adds the finalizer: decide again.
			operatorSync()
			if after, err = f.Anthill.OperatorV1alpha1().GlusterClusters("ns").Get(ctx, "gc", metav1.GetOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		d := live.Decision
		seen = append(seen, string(live.State)+":"+string(d.Event)+string(d.Step)+"/"+d.Reason+"/"+live.GD2)
		if d.Event != "" {
			last := after.Status.History[len(after.Status.History)-1]
			if last.Event != string(d.Event) || last.Reason != d.Reason || last.Message != d.Message || last.To != string(live.To) {
				t.Fatalf("operator fired %s -> %s (%s: %s); live decision was %s -> %s (%s: %s)", last.Event, last.To, last.Reason, last.Message, d.Event, live.To, d.Reason, d.Message)
			}
			continue
		}
		ready := apimeta.FindStatusCondition(after.Status.Conditions, operatorv1alpha1.ConditionReady)
		if string(after.Status.Phase) != string(live.State) || ready == nil || ready.Message != d.Message {
			t.Fatalf("operator stayed in %s with Ready %+v; live decision was %s/%s saying %q", after.Status.Phase, ready, d.Step, d.Reason, d.Message)
		}
	}
	t.Logf("live decisions: %v", seen)
}

// TestLiveDecisionRefusesANewerStatusAsTheRunnerDoes: a node whose status
// a newer operator wrote is refused before anything is gathered, as the
// operator's runner refuses it; the refusal is the live answer.
func TestLiveDecisionRefusesANewerStatusAsTheRunnerDoes(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	n := f.node()
	n.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel + 1
	if _, err := f.Anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(ctx, n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	live, err := LiveNodeDecision(ctx, LiveReads{Kube: f.Kube, Anthill: f.Anthill, Clock: f.Clock}, "ns", "gc-z1-a")
	if err != nil {
		t.Fatal(err)
	}
	if !live.Known() || !strings.Contains(live.Refused, "newer") || !live.Decision.Waiting() || live.Decision.Reason != "" {
		t.Fatalf("live decision of a newer status: %+v", live)
	}
}

// TestLiveClusterDecisionPlansAScalingStepLive: a cluster whose next step
// creates GlusterNodes is explained from the same live plan its sync
// reads (GatherLive, through the admin's clients), not refused or failed.
func TestLiveClusterDecisionPlansAScalingStepLive(t *testing.T) {
	f := newLiveFixture(t)
	ctx := context.Background()
	c := f.clusterObj()
	c.Finalizers = []string{objects.FinalizerCluster}
	c.Spec.NodeTemplates = []operatorv1alpha1.NodeTemplate{{Name: "z1", Zone: "zone-1", Nodes: ptr.To[int32](3)}}
	c, err := f.Anthill.OperatorV1alpha1().GlusterClusters("ns").Update(ctx, c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Status.Phase = operatorv1alpha1.ClusterPhase(states.ClusterProvisioning)
	if _, err := f.Anthill.OperatorV1alpha1().GlusterClusters("ns").UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	managed := map[string]string{objects.LabelManagedBy: objects.ManagedByAnthill}
	for _, name := range []string{objects.HeadlessServiceName("gc"), objects.ManagementServiceName("gc"), objects.EtcdName("gc")} {
		svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Labels: managed}}
		if _, err := f.Kube.CoreV1().Services("ns").Create(ctx, svc, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	etcd := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.EtcdName("gc"), Labels: managed}, Status: appsv1.StatefulSetStatus{ReadyReplicas: 1}}
	if _, err := f.Kube.AppsV1().StatefulSets("ns").Create(ctx, etcd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	live, err := LiveClusterDecision(ctx, LiveReads{Kube: f.Kube, Anthill: f.Anthill, Clock: f.Clock, SyncTimeout: 10 * time.Second}, "ns", "gc")
	if err != nil {
		t.Fatal(err)
	}
	if live.Refused != "" || live.Decision.Step != states.ClusterScaleNodes {
		t.Fatalf("live decision %s/%s %s: %s (refused %q), want the scaleNodes step", live.Decision.Event, live.Decision.Step, live.Decision.Reason, live.Decision.Message, live.Refused)
	}
}
