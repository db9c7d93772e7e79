// Package machinetest holds what the tests of several machine rooms share:
// a node's world of fake clientsets, informer stores and a GD2 simulator.
// Only tests import it.
package machinetest

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

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
)

// NodeName is the GlusterNode a NodeWorld holds, of cluster gc in
// namespace ns.
const NodeName = "gc-z1-a"

// NodeWorld is one Provisioning GlusterNode of cluster gc with its ready
// pod, bound claim and GD2 auth Secret, in fake clientsets and in the
// informer stores a syncer lists from, beside a GD2 simulator served over
// HTTP whose pool another node founded (so the node can go down while GD2
// stays reachable).
type NodeWorld struct {
	Kube                        *kubefake.Clientset
	Anthill                     *anthillfake.Clientset
	Nodes, Clusters, Pods, PVCs cache.Indexer
	Sim                         *sim.Simulator
	GD2                         *gd2.Client
	// Calls counts the requests the simulator served.
	Calls  *fixtures.RequestCounter
	Clock  *clocktesting.FakeClock
	Events *record.FakeRecorder
}

// NewNodeWorld builds a NodeWorld.
func NewNodeWorld(t *testing.T) *NodeWorld {
	t.Helper()
	s, err := sim.New(sim.Config{Secret: fixtures.GD2Secret, DevicesPerPeer: 1, DeviceSize: 100 << 30})
	if err != nil {
		t.Fatal(err)
	}
	calls := &fixtures.RequestCounter{}
	srv := httptest.NewServer(calls.Wrap(s.Handler()))
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtures.GD2Secret})
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
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: NodeName, Finalizers: []string{objects.FinalizerNode}, UID: "uid-1"},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: "zone-1",
			Storage: &operatorv1alpha1.NodeStorage{DeviceCount: ptr.To[int32](1)}},
		Status: operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeProvisioning)},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodePodName(node.Name), Annotations: map[string]string{objects.AnnotationVersion: "4.1.0"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.BrickClaimName(node.Name, 0)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	w := &NodeWorld{
		Kube: kubefake.NewClientset(pod, pvc, secret), Anthill: anthillfake.NewSimpleClientset(cluster, node),
		Nodes: fixtures.NewIndexer(), Clusters: fixtures.NewIndexer(), Pods: fixtures.NewIndexer(), PVCs: fixtures.NewIndexer(),
		Sim: s, GD2: g, Calls: calls, Clock: clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)),
		Events: record.NewFakeRecorder(100),
	}
	for _, add := range []struct {
		idx cache.Indexer
		obj runtime.Object
	}{{w.Nodes, node}, {w.Clusters, cluster}, {w.Pods, pod}, {w.PVCs, pvc}} {
		if err := add.idx.Add(add.obj); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.UpsertHost(sim.HostSpec{Name: "founder-0", Alive: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.UpsertHost(sim.HostSpec{Name: objects.NodePodName(node.Name), Address: objects.NodeAddress(node), Alive: true}); err != nil {
		t.Fatal(err)
	}
	return w
}

// NodeSyncerParts are the fields of the node machine's syncer the world
// supplies, for the test to set on its syncer.
type NodeSyncerParts struct {
	Nodes    listers.GlusterNodeLister
	Clusters listers.GlusterClusterLister
	Pods     corev1listers.PodLister
	PVCs     corev1listers.PersistentVolumeClaimLister
	Kube     *effects.Kube
	GD2      *effects.GD2Clients
	Log      *engine.TransitionLog
}

// SyncerParts are the listers, effects and transition log a node syncer
// over w runs on.
func (w *NodeWorld) SyncerParts() NodeSyncerParts {
	return NodeSyncerParts{
		Nodes: listers.NewGlusterNodeLister(w.Nodes), Clusters: listers.NewGlusterClusterLister(w.Clusters),
		Pods: corev1listers.NewPodLister(w.Pods), PVCs: corev1listers.NewPersistentVolumeClaimLister(w.PVCs),
		Kube: &effects.Kube{Client: w.Kube, Anthill: w.Anthill}, GD2: &effects.GD2Clients{Secrets: w.Kube.CoreV1()},
		Log: &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics(), Recorder: w.Events},
	}
}

// Node is the stored GlusterNode.
func (w *NodeWorld) Node(t *testing.T) *operatorv1alpha1.GlusterNode {
	t.Helper()
	n, err := w.Anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), NodeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Cluster is the stored GlusterCluster.
func (w *NodeWorld) Cluster(t *testing.T) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	c, err := w.Anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// Stored copies the stored node into the node store, as the informer
// would deliver it, and returns it.
func (w *NodeWorld) Stored(t *testing.T) *operatorv1alpha1.GlusterNode {
	t.Helper()
	n := w.Node(t)
	if err := w.Nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	return n
}
