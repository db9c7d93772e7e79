package machines

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

func TestStateCollectorExportsWhatTheStatusesSay(t *testing.T) {
	ni := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	ci := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	since := metav1.NewTime(time.Unix(1700000000, 0))
	for _, n := range []*operatorv1alpha1.GlusterNode{
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "a"}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "c", Zone: "z1"},
			Status: operatorv1alpha1.GlusterNodeStatus{State: "Online", LastTransitionTime: &since}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "b"}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "c", Zone: "z2"},
			Status: operatorv1alpha1.GlusterNodeStatus{State: "Draining"}},
		{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "new"}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "c", Zone: "z3"}},
	} {
		if err := ni.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	total, free := resource.MustParse("300Gi"), resource.MustParse("100Gi")
	if err := ci.Add(&operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"},
		Status: operatorv1alpha1.GlusterClusterStatus{
			Phase:    "Ready",
			Volumes:  []operatorv1alpha1.VolumeStatus{{Name: "v1", State: "Healing", PendingEntries: 356, Bricks: 6, BricksOnline: 5}, {Name: "v2", State: "Healthy"}},
			Capacity: &operatorv1alpha1.CapacityStatus{Total: &total, Free: &free, Zones: []operatorv1alpha1.ZoneCapacityStatus{{Zone: "z1", Total: total, Free: free}}},
		}}); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewStateCollector(listers.NewGlusterNodeLister(ni), listers.NewGlusterClusterLister(ci)))

	counts := fixtures.Gathered(t, reg, "anthill_cluster_nodes")
	for state, want := range map[string]float64{"Online": 1, "Draining": 1, "Pending": 1, "Failed": 0} {
		if got, ok := counts["cluster=c,namespace=ns,state="+state+","]; !ok || got != want {
			t.Errorf("anthill_cluster_nodes{state=%s} = %v (present %t), want %v", state, got, ok, want)
		}
	}
	if got := fixtures.Gathered(t, reg, "anthill_node_state"); got["cluster=c,namespace=ns,node=b,state=Draining,zone=z2,"] != 1 || len(got) != 3 {
		t.Errorf("anthill_node_state = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_node_state_since_timestamp_seconds"); got["cluster=c,namespace=ns,node=a,"] != 1700000000 {
		t.Errorf("anthill_node_state_since_timestamp_seconds = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_cluster_volumes"); got["cluster=c,namespace=ns,state=Healing,"] != 1 || got["cluster=c,namespace=ns,state=SplitBrain,"] != 0 {
		t.Errorf("anthill_cluster_volumes = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_volume_heal_pending_entries"); got["cluster=c,namespace=ns,volume=v1,"] != 356 {
		t.Errorf("anthill_volume_heal_pending_entries = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_volume_bricks"); got["cluster=c,namespace=ns,state=offline,volume=v1,"] != 1 ||
		got["cluster=c,namespace=ns,state=online,volume=v1,"] != 5 || len(got) != 2 {
		t.Errorf("anthill_volume_bricks = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_upgrade_state"); got["cluster=c,namespace=ns,state=Idle,"] != 1 {
		t.Errorf("anthill_upgrade_state = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_cluster_capacity_free_bytes"); got["cluster=c,namespace=ns,"] != float64(100<<30) {
		t.Errorf("anthill_cluster_capacity_free_bytes = %v", got)
	}
	if got := fixtures.Gathered(t, reg, "anthill_zone_capacity_total_bytes"); got["cluster=c,namespace=ns,zone=z1,"] != float64(300<<30) {
		t.Errorf("anthill_zone_capacity_total_bytes = %v", got)
	}
}

// A node's uptime is its pod's glusterd2 container start: absent while the
// container is not running (or the node has no pod), moved by a restart.
func TestStateCollectorNodeUptimeIsTheGD2ContainerStart(t *testing.T) {
	ni := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	pi := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, name := range []string{"up", "waiting", "podless"} {
		if err := ni.Add(&operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "c"}}); err != nil {
			t.Fatal(err)
		}
	}
	started := metav1.NewTime(time.Unix(1700000100, 0))
	pod := func(node string, st corev1.ContainerState) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodePodName(node)},
			Status: corev1.PodStatus{ContainerStatuses: []corev1.ContainerStatus{
				{Name: "etcd", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(1, 0))}}},
				{Name: objects.ContainerGD2, State: st},
			}}}
	}
	for _, p := range []*corev1.Pod{
		pod("up", corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}),
		pod("waiting", corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}),
	} {
		if err := pi.Add(p); err != nil {
			t.Fatal(err)
		}
	}
	sc := NewStateCollector(listers.NewGlusterNodeLister(ni), listers.NewGlusterClusterLister(cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})))
	sc.Pods = corev1listers.NewPodLister(pi)
	reg := prometheus.NewRegistry()
	reg.MustRegister(sc)
	got := fixtures.Gathered(t, reg, "anthill_node_up_since_timestamp_seconds")
	if len(got) != 1 || got["cluster=c,namespace=ns,node=up,"] != 1700000100 {
		t.Fatalf("anthill_node_up_since_timestamp_seconds = %v, want only node up at 1700000100", got)
	}

	restarted := pod("up", corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(time.Unix(1700000500, 0))}})
	if err := pi.Update(restarted); err != nil {
		t.Fatal(err)
	}
	if got := fixtures.Gathered(t, reg, "anthill_node_up_since_timestamp_seconds"); got["cluster=c,namespace=ns,node=up,"] != 1700000500 {
		t.Fatalf("after a restart: %v", got)
	}
}
