package kube

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// nodeFixture is a NodeSyncer over fake clientsets whose listers are fed
// from indexers the test controls (as an informer would), a fake clock, and
// a real GD2 simulator over HTTP.
type nodeFixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	anthill  *anthillfake.Clientset
	nodes    cache.Indexer
	clusters cache.Indexer
	pods     cache.Indexer
	pvcs     cache.Indexer
	sim      *sim.Simulator
	gd2      *gd2.Client
	clock    *clocktesting.FakeClock
	events   *record.FakeRecorder
	syncer   *NodeSyncer
}

const fixtureSecret = "4f1c2e3d5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d"

func newIndexer() cache.Indexer {
	return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
}

func newNodeFixture(t *testing.T) *nodeFixture {
	t.Helper()
	s, err := sim.New(sim.Config{Secret: fixtureSecret, DevicesPerPeer: 1, DeviceSize: 100 << 30})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtureSecret})
	if err != nil {
		t.Fatal(err)
	}
	cluster := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Gluster:    &operatorv1alpha1.GlusterServerSpec{Image: "gluster/gd2", Version: "4.1.0"},
			Management: &operatorv1alpha1.ManagementSpec{Endpoint: srv.URL, AuthSecretRef: &operatorv1alpha1.SecretReference{Name: "auth"}},
		},
	}
	node := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc-z1-a", Finalizers: []string{FinalizerNode}, UID: "uid-1"},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: "zone-1",
			Storage: &operatorv1alpha1.NodeStorage{DeviceCount: ptr.To[int32](1)}},
		Status: operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeProvisioning)},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: NodePodName(node.Name), Annotations: map[string]string{AnnotationVersion: "4.1.0"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: BrickClaimName(node.Name, 0)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtureSecret)}}
	f := &nodeFixture{
		t: t, kube: kubefake.NewClientset(pod, pvc, secret), anthill: anthillfake.NewSimpleClientset(cluster, node),
		nodes: newIndexer(), clusters: newIndexer(), pods: newIndexer(), pvcs: newIndexer(),
		sim: s, gd2: g, clock: clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)),
		events: record.NewFakeRecorder(100),
	}
	for _, add := range []struct {
		idx cache.Indexer
		obj runtime.Object
	}{{f.nodes, node}, {f.clusters, cluster}, {f.pods, pod}, {f.pvcs, pvc}} {
		if err := add.idx.Add(add.obj); err != nil {
			t.Fatal(err)
		}
	}
	// Another GD2 node founded the pool and serves requests, so that the
	// node under test can go down while GD2 stays reachable; the node's own
	// host is alive and joins by peer add.
	if err := s.UpsertHost(sim.HostSpec{Name: "founder-0", Alive: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertHost(sim.HostSpec{Name: NodePodName(node.Name), Address: NodeAddress(node), Alive: true}); err != nil {
		t.Fatal(err)
	}
	f.syncer = &NodeSyncer{
		Nodes: listers.NewGlusterNodeLister(f.nodes), Clusters: listers.NewGlusterClusterLister(f.clusters),
		Pods: corev1listers.NewPodLister(f.pods), PVCs: corev1listers.NewPersistentVolumeClaimLister(f.pvcs),
		Anthill: f.anthill, Kube: &KubeOps{Client: f.kube, Anthill: f.anthill},
		GD2: &GD2Clients{Secrets: f.kube.CoreV1()}, Clock: f.clock,
		Log: &TransitionLog{Log: zap.NewNop(), Metrics: NewMetrics(), Recorder: f.events},
	}
	return f
}

// sync runs one sync, then copies the stored node into the indexer, as the
// informer would deliver it, and checks the invariants every sync keeps.
func (f *nodeFixture) sync() (Result, error) {
	f.t.Helper()
	res, err := f.syncer.Sync(context.Background(), nodeKey("ns", "gc-z1-a"))
	n, gerr := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), "gc-z1-a", metav1.GetOptions{})
	if gerr != nil {
		f.t.Fatal(gerr)
	}
	if err := f.nodes.Update(n); err != nil {
		f.t.Fatal(err)
	}
	f.checkInvariants(n)
	return res, err
}

func (f *nodeFixture) checkInvariants(n *operatorv1alpha1.GlusterNode) {
	f.t.Helper()
	if !states.NodeDefinition().HasState(fsm.State(n.Status.State)) {
		f.t.Fatalf("status holds unknown state %q", n.Status.State)
	}
	if len(n.Status.History) > operatorv1alpha1.MaxHistory {
		f.t.Fatalf("history has %d entries, more than %d", len(n.Status.History), operatorv1alpha1.MaxHistory)
	}
	for i, h := range n.Status.History {
		if i > 0 && h.From != n.Status.History[i-1].To {
			f.t.Fatalf("history is not a path: entry %d starts at %s after %s", i, h.From, n.Status.History[i-1].To)
		}
	}
	if v := f.sim.Violations(); len(v) > 0 {
		f.t.Fatalf("simulator violations: %+v", v)
	}
}

func (f *nodeFixture) node() *operatorv1alpha1.GlusterNode {
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), "gc-z1-a", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func TestNodeSyncerJoinsAndActivatesOneTransitionPerSync(t *testing.T) {
	f := newNodeFixture(t)
	if _, err := f.sync(); err != nil {
		t.Fatalf("join: %v", err)
	}
	n := f.node()
	if n.Status.State != string(states.NodeJoining) || n.Status.PeerID == "" {
		t.Fatalf("after one sync: state %s, peer %q; want Joining with a peer id", n.Status.State, n.Status.PeerID)
	}
	if len(n.Status.History) != 1 {
		t.Fatalf("one sync must commit one transition, history has %d", len(n.Status.History))
	}
	if _, err := f.sync(); err != nil {
		t.Fatalf("activate: %v", err)
	}
	n = f.node()
	if n.Status.State != string(states.NodeOnline) {
		t.Fatalf("after two syncs: state %s, want Online", n.Status.State)
	}
	devs, err := f.gd2.ListDevices(context.Background(), n.Status.PeerID)
	if err != nil || len(devs) != 1 {
		t.Fatalf("devices of the peer: %v, %v; want the node's one device registered", devs, err)
	}
	// A steady node writes nothing: the first sync after the transition
	// records the steady message, later ones find nothing to change.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	before := len(f.anthill.Actions())
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.anthill.Actions()[before:] {
		if a.GetVerb() == "update" {
			t.Fatalf("a sync of a steady Online node wrote %s", a.GetSubresource())
		}
	}
	select {
	case e := <-f.events.Events:
		t.Logf("event: %s", e)
	default:
		t.Fatal("no Kubernetes Event was recorded for the transitions")
	}
}

func TestNodeSyncerRetriesAFailedStatusWriteWithoutRepeatingTheJoin(t *testing.T) {
	f := newNodeFixture(t)
	failed := false
	f.anthill.PrependReactor("update", "glusternodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" && !failed {
			failed = true
			return true, nil, errors.New("injected: etcd timeout")
		}
		return false, nil, nil
	})
	if _, err := f.sync(); err == nil {
		t.Fatal("a failed status write must fail the sync")
	}
	if n := f.node(); n.Status.State != string(states.NodeProvisioning) {
		t.Fatalf("state moved to %s although the write failed", n.Status.State)
	}
	if _, err := f.sync(); err != nil {
		t.Fatalf("retry: %v", err)
	}
	peers, err := f.gd2.ListPeers(context.Background(), gd2.Filter{Key: transitions.MetaNode, Value: "ns/gc-z1-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || f.node().Status.PeerID != peers[0].ID {
		t.Fatalf("after a retried join: %d peers tagged for the node, status peer %q", len(peers), f.node().Status.PeerID)
	}
}

func TestNodeSyncerSurfacesAnUnknownStateWithoutResettingIt(t *testing.T) {
	f := newNodeFixture(t)
	n := f.node()
	n.Status.State = "Levitating"
	if _, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	_, err := f.syncer.Sync(context.Background(), nodeKey("ns", "gc-z1-a"))
	var perm *PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("want a permanent error, got %v", err)
	}
	got := f.node()
	if got.Status.State != "Levitating" {
		t.Fatalf("unknown state was reset to %q", got.Status.State)
	}
	found := false
	for _, c := range got.Status.Conditions {
		found = found || (c.Reason == states.ReasonUnknownState && c.Status == metav1.ConditionTrue)
	}
	if !found {
		t.Fatalf("no condition names the unknown state: %+v", got.Status.Conditions)
	}
}

func TestNodeSyncerWaitsForDowntimeOnTheInjectedClock(t *testing.T) {
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	peer := f.node().Status.PeerID
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeOffline) {
		t.Fatalf("peer down: state %s, want Offline", s)
	}
	res, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > DefaultPermissibleDowntime {
		t.Fatalf("an Offline node must wait with AddAfter within the downtime, got %v", res.RequeueAfter)
	}
	f.clock.Step(DefaultPermissibleDowntime + time.Second)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeFailed) {
		t.Fatalf("after the permissible downtime: state %s, want Failed", s)
	}
}

func TestClusterSyncerSurfacesAnUnknownPhaseWithoutResettingIt(t *testing.T) {
	f := newNodeFixture(t)
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.Finalizers = []string{FinalizerCluster}
	c.Status.Phase = "Melting"
	if err := f.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	if _, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	cs := &ClusterSyncer{Clusters: listers.NewGlusterClusterLister(f.clusters), Anthill: f.anthill, GD2: f.syncer.GD2, Log: f.syncer.Log, Clock: f.clock}
	_, err = cs.Sync(context.Background(), clusterKey("ns", "gc"))
	var perm *PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("want a permanent error, got %v", err)
	}
	got, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Status.Phase != "Melting" {
		t.Fatalf("unknown phase was reset to %q", got.Status.Phase)
	}
	found := false
	for _, cond := range got.Status.Conditions {
		found = found || (cond.Reason == states.ReasonUnknownState && cond.Status == metav1.ConditionTrue)
	}
	if !found {
		t.Fatalf("no condition names the unknown phase: %+v", got.Status.Conditions)
	}
}
