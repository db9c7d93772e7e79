package disruption

import (
	"context"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// disruptionFixture is a Syncer over fake clientsets and a real
// GD2 simulator on a fake clock: three zones with one node each (node
// gc-zone-N on the simulator's peer in zone-N, pod gc-zone-N-0 on
// Kubernetes node kn-zone-N), a replica-3 volume "data" with a brick in
// every zone, and effects.Kube writing the budgets into the fake clientset.
type disruptionFixture struct {
	t         *testing.T
	kube      *kubefake.Clientset
	anthill   *anthillfake.Clientset
	clusters  cache.Indexer
	nodes     cache.Indexer
	kubeNodes cache.Indexer
	sim       *sim.Simulator
	gd2       *gd2.Client
	peerOf    map[string]string // zone -> peer id
	clock     *clocktesting.FakeClock
	events    *record.FakeRecorder
	syncer    *Syncer
	calls     *fixtures.RequestCounter
}

func newDisruptionFixture(t *testing.T) *disruptionFixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s, err := sim.New(sim.Config{Secret: fixtures.GD2Secret, Peers: 3, Zones: 3, DevicesPerPeer: 1, DeviceSize: 100 << 30, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	calls := &fixtures.RequestCounter{}
	srv := httptest.NewServer(calls.Wrap(s.Handler()))
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtures.GD2Secret, Retry: &gd2.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc", UID: "gc-uid"},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode:       operatorv1alpha1.ClusterModeManual,
			Gluster:    &operatorv1alpha1.GlusterServerSpec{Image: "gluster/gd2"},
			Management: &operatorv1alpha1.ManagementSpec{Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}},
		},
		Status: operatorv1alpha1.GlusterClusterStatus{
			Phase:   operatorv1alpha1.ClusterPhase(states.ClusterReady),
			Volumes: []operatorv1alpha1.VolumeStatus{{Name: "data", State: string(states.HealHealthy)}},
		},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	f := &disruptionFixture{
		t: t, kube: kubefake.NewClientset(secret), clusters: fixtures.NewIndexer(), nodes: fixtures.NewIndexer(), kubeNodes: fixtures.NewIndexer(),
		sim: s, gd2: g, peerOf: map[string]string{}, clock: clk, events: record.NewFakeRecorder(100), calls: calls,
	}
	ctx := context.Background()
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil || len(peers) != 3 {
		t.Fatalf("peers: %v, %v", peers, err)
	}
	ops := &effects.GD2{Client: g}
	for _, p := range peers {
		if err := ops.RegisterDevice(ctx, p.ID, "/dev/sdb", ""); err != nil {
			t.Fatal(err)
		}
		zone := p.Zone()
		f.peerOf[zone] = p.ID
		cluster.Spec.NodeTemplates = append(cluster.Spec.NodeTemplates, operatorv1alpha1.NodeTemplate{Name: zone, Zone: zone})
		f.addNode("gc-"+zone, zone, p.ID)
	}
	f.anthill = anthillfake.NewSimpleClientset(cluster)
	if err := f.clusters.Add(cluster); err != nil {
		t.Fatal(err)
	}
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: "data", Size: 1 << 30, Replica: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := g.StartVolume(ctx, "data", false); err != nil {
		t.Fatal(err)
	}
	if _, err := g.SetVolumeOptions(ctx, "data", gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true,
	}); err != nil {
		t.Fatal(err)
	}
	f.syncer = &Syncer{
		Clusters: listers.NewGlusterClusterLister(f.clusters), Nodes: listers.NewGlusterNodeLister(f.nodes),
		KubeNodes: corev1listers.NewNodeLister(f.kubeNodes), Client: f.kube, Anthill: f.anthill,
		Kube: &effects.Kube{Client: f.kube, Anthill: f.anthill}, GD2: &effects.GD2Clients{Secrets: f.kube.CoreV1()},
		Log: &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics(), Recorder: f.events}, Clock: clk,
	}
	return f
}

// addNode adds an Online GlusterNode with a ready pod on its own
// Kubernetes node in zone.
func (f *disruptionFixture) addNode(name, zone, peer string) {
	f.t.Helper()
	n := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
		Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: zone},
		Status:     operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeOnline), PeerID: peer},
	}
	if err := f.nodes.Add(n); err != nil {
		f.t.Fatal(err)
	}
	kn := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kn-" + name}}
	if err := f.kubeNodes.Add(kn); err != nil {
		f.t.Fatal(err)
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodePodName(name), Labels: objects.NodeLabels("gc", name),
			CreationTimestamp: metav1.NewTime(f.clock.Now().Add(-time.Hour))},
		Spec:   corev1.PodSpec{NodeName: kn.Name},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	if _, err := f.kube.CoreV1().Pods("ns").Create(context.Background(), pod, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *disruptionFixture) cluster() *operatorv1alpha1.GlusterCluster {
	f.t.Helper()
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// sync runs one sync, feeds the stored cluster back into the lister, and
// checks the invariants after every step.
func (f *disruptionFixture) sync() (engine.Result, error) {
	f.t.Helper()
	res, err := f.syncer.Sync(context.Background(), disruptionKey("ns", "gc"))
	if uerr := f.clusters.Update(f.cluster()); uerr != nil {
		f.t.Fatal(uerr)
	}
	f.checkInvariants()
	return res, err
}

func (f *disruptionFixture) mustSync() {
	f.t.Helper()
	if _, err := f.sync(); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
}

// budgets returns maxUnavailable per zone.
func (f *disruptionFixture) budgets() map[string]int {
	f.t.Helper()
	l, err := f.kube.PolicyV1().PodDisruptionBudgets("ns").List(context.Background(), metav1.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	out := map[string]int{}
	for _, p := range l.Items {
		out[p.Labels[objects.LabelZone]] = p.Spec.MaxUnavailable.IntValue()
	}
	return out
}

// checkInvariants: at most one budget is open, and only the zone status
// says is Open; a state outside Open has every budget locked; the
// simulator recorded no violation.
func (f *disruptionFixture) checkInvariants() {
	f.t.Helper()
	st := f.cluster().Status.Disruption
	open := ""
	for z, v := range f.budgets() {
		if v > 1 || (v == 1 && open != "") {
			f.t.Fatalf("budgets %v: more than one eviction allowed", f.budgets())
		}
		if v == 1 {
			open = z
		}
	}
	if open != "" && (st == nil || st.State != string(states.DisruptionOpen) || st.Zone != open) {
		f.t.Fatalf("zone %s is open but status is %+v", open, st)
	}
	if v := f.sim.Violations(); len(v) > 0 {
		f.t.Fatalf("simulator violations: %+v", v)
	}
}

func (f *disruptionFixture) wantState(state fsm.State, zone string) {
	f.t.Helper()
	st := f.cluster().Status.Disruption
	if st == nil || st.State != string(state) || st.Zone != zone {
		f.t.Fatalf("disruption status %+v, want %s in %q", st, state, zone)
	}
}

func (f *disruptionFixture) pod(name string) *corev1.Pod {
	f.t.Helper()
	p, err := f.kube.CoreV1().Pods("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return p
}

func (f *disruptionFixture) updatePod(p *corev1.Pod) {
	f.t.Helper()
	if _, err := f.kube.CoreV1().Pods("ns").Update(context.Background(), p, metav1.UpdateOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func TestDisruptionOpensOneZoneAndLocksTheRest(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync()
	f.wantState(states.DisruptionOpen, "zone-1")
	if got := f.budgets(); len(got) != 3 || got["zone-1"] != 1 || got["zone-2"] != 0 || got["zone-3"] != 0 {
		t.Fatalf("budgets %v, want zone-1 open and zone-2, zone-3 locked", got)
	}
	p := f.pod("gc-zone-2-0")
	if p.Labels[objects.LabelZone] != "zone-2" || p.Labels[objects.LabelHoldsBricks] != "true" {
		t.Fatalf("pod labels %v", p.Labels)
	}
	pdb, err := f.kube.PolicyV1().PodDisruptionBudgets("ns").Get(context.Background(), objects.DisruptionBudgetName("gc", "zone-2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(pdb.OwnerReferences) != 1 || pdb.OwnerReferences[0].Name != "gc" || pdb.Labels[objects.LabelManagedBy] != objects.ManagedByAnthill {
		t.Fatalf("budget metadata %+v", pdb.ObjectMeta)
	}
	h := f.cluster().Status.History
	if len(h) != 1 || h[0].Machine != states.DisruptionMachine || h[0].To != string(states.DisruptionOpen) || h[0].Subject != "zone-1" {
		t.Fatalf("history %+v", h)
	}
	if ev := <-f.events.Events; !strings.Contains(ev, "disruption zone-1: Locked -> Open (open)") {
		t.Fatalf("event %q", ev)
	}
	// A calm cluster writes nothing more.
	before := f.cluster().ResourceVersion
	f.mustSync()
	if f.cluster().ResourceVersion != before {
		t.Fatal("a sync with nothing to do wrote status")
	}
}

func TestDisruptionEvictionLocksEverythingUntilHealed(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync() // Open zone-1
	// The eviction: the pod is being deleted.
	p := f.pod("gc-zone-1-0")
	now := metav1.NewTime(f.clock.Now())
	p.DeletionTimestamp = &now
	f.updatePod(p)
	f.mustSync()
	f.wantState(states.DisruptionRecovering, "zone-1")
	for z, v := range f.budgets() {
		if v != 0 {
			t.Fatalf("zone %s open during recovery", z)
		}
	}
	// The peer went down while the pod was away, data was written, and
	// the pod is back: GlusterNode Online, pod ready (recreated), but the
	// volume still needs heal although the heal machine has not noticed.
	peer := f.peerOf["zone-1"]
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.Write("data", 20); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	if err := f.kube.CoreV1().Pods("ns").Delete(context.Background(), p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	p = p.DeepCopy()
	p.ResourceVersion, p.DeletionTimestamp, p.CreationTimestamp = "", nil, metav1.NewTime(f.clock.Now())
	if _, err := f.kube.CoreV1().Pods("ns").Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	f.wantState(states.DisruptionRecovering, "zone-1")
	if msg := f.cluster().Status.Disruption.Message; !strings.Contains(msg, "heal-info shows volume(s) not healed in zone zone-1: data") {
		t.Fatalf("message %q", msg)
	}
	// Heal completes (the simulator heals as its clock moves).
	f.clock.Step(time.Hour)
	f.mustSync()
	f.wantState(states.DisruptionOpen, "zone-1")
}

func TestDisruptionPodRecreatedWhileOpenIsADisruption(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync() // Open zone-1
	f.clock.Step(time.Minute)
	p := f.pod("gc-zone-1-0")
	p.CreationTimestamp = metav1.NewTime(f.clock.Now())
	f.updatePod(p)
	f.mustSync()
	f.wantState(states.DisruptionRecovering, "zone-1")
	if msg := f.cluster().Status.Disruption.Message; !strings.Contains(msg, "recreated after the zone opened") {
		t.Fatalf("message %q", msg)
	}
}

func TestDisruptionEmptyNodeIsLabelledOutOfEveryBudget(t *testing.T) {
	f := newDisruptionFixture(t)
	// A fourth node in zone-2 whose peer holds no brick.
	ctx := context.Background()
	if err := f.sim.UpsertHost(sim.HostSpec{Name: "gd2-4", Address: "gd2-4:24008", Alive: true}); err != nil {
		t.Fatal(err)
	}
	peer, err := f.gd2.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{"gd2-4:24008"}, Zone: "zone-2"})
	if err != nil {
		t.Fatal(err)
	}
	f.addNode("gc-zone-2b", "zone-2", peer.ID)
	// Even while it is not Online, it holds nothing and blocks nothing.
	n, _, _ := f.nodes.GetByKey("ns/gc-zone-2b")
	nn := n.(*operatorv1alpha1.GlusterNode).DeepCopy()
	nn.Status.State = string(states.NodeOffline)
	if err := f.nodes.Update(nn); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	f.wantState(states.DisruptionOpen, "zone-1")
	if got := f.pod("gc-zone-2b-0").Labels[objects.LabelHoldsBricks]; got != objects.HoldsBricksFalse {
		t.Fatalf("empty node's pod holds-bricks=%q", got)
	}
	pdb, err := f.kube.PolicyV1().PodDisruptionBudgets("ns").Get(ctx, objects.DisruptionBudgetName("gc", "zone-2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sel, err := metav1.LabelSelectorAsSelector(pdb.Spec.Selector)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Matches(labels.Set(f.pod("gc-zone-2b-0").Labels)) {
		t.Fatal("zone-2's budget selects the empty node's pod")
	}
	if !sel.Matches(labels.Set(f.pod("gc-zone-2-0").Labels)) {
		t.Fatal("zone-2's budget does not select the pod holding a brick")
	}
	// A pod without the label (just recreated) is protected by default.
	if !sel.Matches(labels.Set(map[string]string{objects.LabelCluster: "gc", objects.LabelComponent: objects.ComponentGlusterNode, objects.LabelZone: "zone-2"})) {
		t.Fatal("a pod not yet labelled is not protected")
	}
}

func TestDisruptionHandsOverToAZoneBeingDrained(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync() // Open zone-1
	kn := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "kn-gc-zone-3"}, Spec: corev1.NodeSpec{Unschedulable: true}}
	if err := f.kubeNodes.Update(kn); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	f.wantState(states.DisruptionLocked, "zone-1")
	f.mustSync()
	f.wantState(states.DisruptionOpen, "zone-3")
	if got := f.budgets(); got["zone-3"] != 1 || got["zone-1"] != 0 {
		t.Fatalf("budgets %v", got)
	}
}

func TestDisruptionLocksWhenGD2IsUnreachable(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync() // Open zone-1
	c := f.cluster()
	c.Spec.Management.Endpoint = "http://127.0.0.1:1"
	if _, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	f.syncer.GD2.Timeout = time.Second
	f.mustSync()
	f.wantState(states.DisruptionLocked, "zone-1")
	// The labels stay as GD2 last said: nothing is relabelled blind.
	if got := f.pod("gc-zone-1-0").Labels[objects.LabelHoldsBricks]; got != "true" {
		t.Fatalf("holds-bricks=%q", got)
	}
	f.mustSync()
	f.wantState(states.DisruptionLocked, "zone-1")
}

func TestDisruptionRepairsADriftedBudget(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync() // Open zone-1
	ctx := context.Background()
	pdbs := f.kube.PolicyV1().PodDisruptionBudgets("ns")
	p, err := pdbs.Get(ctx, objects.DisruptionBudgetName("gc", "zone-2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p.Spec.MaxUnavailable = objects.MaxUnavailable(true) // an admin's edit opens a second zone
	if _, err := pdbs.Update(ctx, p, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.syncer.Sync(ctx, disruptionKey("ns", "gc")); err != nil {
		t.Fatal(err)
	}
	if got := f.budgets(); got["zone-2"] != 0 || got["zone-1"] != 1 {
		t.Fatalf("budgets after repair %v", got)
	}
}

func TestDisruptionDeleteClusterInfraRemovesTheBudgets(t *testing.T) {
	f := newDisruptionFixture(t)
	f.mustSync()
	ops := &effects.Kube{Client: f.kube, Anthill: f.anthill}
	if err := ops.DeleteClusterInfra(context.Background(), transitions.ClusterTarget{Namespace: "ns", Name: "gc"}); err != nil {
		t.Fatal(err)
	}
	if got := f.budgets(); len(got) != 0 {
		t.Fatalf("budgets left: %v", got)
	}
}

func TestDisruptionSurfacesAnUnknownStateWithoutResettingIt(t *testing.T) {
	f := newDisruptionFixture(t)
	c := f.cluster()
	c.Status.Disruption = &operatorv1alpha1.DisruptionStatus{State: "Ajar", Zone: "zone-1"}
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").UpdateStatus(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	_, err = f.syncer.Sync(context.Background(), disruptionKey("ns", "gc"))
	var perm *engine.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("sync error %v, want a permanent error", err)
	}
	got := f.cluster()
	if got.Status.Disruption.State != "Ajar" {
		t.Errorf("unknown state reset to %q", got.Status.Disruption.State)
	}
	cond := apimeta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionDegraded)
	if cond == nil || cond.Reason != states.ReasonUnknownState || !strings.Contains(cond.Message, "disruption") {
		t.Errorf("Degraded condition %+v, want one naming the disruption machine's unknown state", cond)
	}
}

// With the cluster's shared GD2 view, a disruption sync that keeps the
// budgets reads the peer and volume lists from the view; one that opens a
// zone or repairs a budget reads them live first and acts on that.
func TestDisruptionActsOnlyOnALiveRead(t *testing.T) {
	f := newDisruptionFixture(t)
	f.syncer.GD2.Views = &effects.PoolViews{TTL: 5 * time.Second, Clock: f.clock}
	const volumesList = "GET /v1/volumes"
	count := func() (int, int) { return f.calls.Count(fixtures.PeersList), f.calls.Count(volumesList) }
	p0, v0 := count()
	f.mustSync() // Locked -> Open zone-1: the view, then live
	f.wantState(states.DisruptionOpen, "zone-1")
	if p, v := count(); p-p0 != 2 || v-v0 != 2 {
		t.Fatalf("opening a zone made %d peers.list and %d volumes.list, want 2 each (the view's, then the live confirmation)", p-p0, v-v0)
	}
	p0, v0 = count()
	f.mustSync() // at rest, within the interval
	if p, v := count(); p != p0 || v != v0 {
		t.Fatalf("a sync at rest made %d peers.list and %d volumes.list, want none (the view serves them)", p-p0, v-v0)
	}
	f.clock.Step(6 * time.Second)
	f.mustSync() // at rest, the peer list has expired, the volume list not
	if p, v := count(); p-p0 != 1 || v-v0 != 0 {
		t.Fatalf("a sync at rest after the peer list's interval made %d peers.list and %d volumes.list, want 1 and 0", p-p0, v-v0)
	}
	f.clock.Step(effects.ConfigListFactor * 5 * time.Second)
	f.mustSync() // at rest, both have expired
	if p, v := count(); p-p0 != 2 || v-v0 != 1 {
		t.Fatalf("a sync at rest after the volume list's interval made %d peers.list and %d volumes.list in all, want 2 and 1", p-p0, v-v0)
	}
	// An admin's edit opens a second zone: the repair is decided again live.
	ctx := context.Background()
	pdbs := f.kube.PolicyV1().PodDisruptionBudgets("ns")
	pdb, err := pdbs.Get(ctx, objects.DisruptionBudgetName("gc", "zone-2"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pdb.Spec.MaxUnavailable = objects.MaxUnavailable(true)
	if _, err := pdbs.Update(ctx, pdb, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	p0, v0 = count()
	f.mustSync()
	if p, v := count(); p-p0 != 1 || v-v0 != 1 {
		t.Fatalf("repairing a budget made %d peers.list and %d volumes.list, want 1 each (live; the view was fresh)", p-p0, v-v0)
	}
	if got := f.budgets(); got["zone-2"] != 0 || got["zone-1"] != 1 {
		t.Fatalf("budgets after repair %v", got)
	}
}
