package machines

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corev1informers "k8s.io/client-go/informers/core/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	anthillv1alpha1informers "github.com/gluster/anthill/kube/client/informers/externalversions/operator/v1alpha1"
	anthilllisters "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// An operator that watches some namespaces reads, through one lister per
// kind, the objects of those namespaces and of no other; a read of a
// namespace it does not watch finds nothing; an index over several
// namespaces answers from all of them.
func TestListersOverWatchedNamespacesSeeOnlyThoseNamespaces(t *testing.T) {
	managed := map[string]string{objects.LabelManagedBy: objects.ManagedByAnthill}
	pod := func(ns, name string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: managed}}
	}
	cluster := func(ns, name string) *operatorv1alpha1.GlusterCluster {
		return &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}}
	}
	kube := kubefake.NewClientset(pod("a", "p1"), pod("b", "p2"), pod("c", "p3"))
	anthill := anthillfake.NewSimpleClientset(cluster("a", "one"), cluster("b", "two"), cluster("c", "three"))
	all, err := newFactories(kube, anthill, 0, metav1.NamespaceAll)
	if err != nil {
		t.Fatal(err)
	}
	watched, err := watchedFactories(all, []string{"a", "b"}, func(ns string) (factories, error) { return newFactories(kube, anthill, 0, ns) })
	if err != nil {
		t.Fatal(err)
	}
	pods := spreadOver(watched, func(f factories) corev1informers.PodInformer { return f.managed.Core().V1().Pods() })
	clusters := spreadOver(watched, func(f factories) anthillv1alpha1informers.GlusterClusterInformer {
		return f.anthill.Operator().V1alpha1().GlusterClusters()
	})
	if err := clusters.addIndexers(cache.Indexers{"name": func(o any) ([]string, error) {
		return []string{o.(*operatorv1alpha1.GlusterCluster).Name}, nil
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer func() {
		close(stop)
		for _, f := range watched {
			f.managed.Shutdown()
			f.anthill.Shutdown()
		}
	}()
	var synced []cache.InformerSynced
	for _, f := range watched {
		f.managed.Start(stop)
		f.anthill.Start(stop)
	}
	for _, inf := range append(pods.informers, clusters.informers...) {
		synced = append(synced, inf.HasSynced)
	}
	if !cache.WaitForCacheSync(stop, synced...) {
		t.Fatal("informers did not sync")
	}

	podLister := corev1listers.NewPodLister(pods.indexer)
	all2, err := podLister.List(labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if len(all2) != 2 {
		t.Errorf("listed %d pods over namespaces a and b, want 2", len(all2))
	}
	if _, err := podLister.Pods("b").Get("p2"); err != nil {
		t.Errorf("pod b/p2: %v", err)
	}
	if _, err := podLister.Pods("c").Get("p3"); err == nil {
		t.Error("found pod c/p3 in a namespace the operator does not watch")
	}
	inC, err := podLister.Pods("c").List(labels.Everything())
	if err != nil || len(inC) != 0 {
		t.Errorf("pods of namespace c: %d, %v; want none", len(inC), err)
	}
	clusterLister := anthilllisters.NewGlusterClusterLister(clusters.indexer)
	if _, err := clusterLister.GlusterClusters("a").Get("one"); err != nil {
		t.Errorf("cluster a/one: %v", err)
	}
	byName, err := clusters.indexer.ByIndex("name", "two")
	if err != nil || len(byName) != 1 {
		t.Errorf("cluster two by index: %d, %v; want 1", len(byName), err)
	}
	if err := clusters.indexer.Add(cluster("a", "x")); err == nil {
		t.Error("wrote through a lister's view over several namespaces")
	}
}

// Namespaces --watch-namespace names must be namespace names, each once.
func TestWatchNamespacesAreValidNamesEachOnce(t *testing.T) {
	for _, tc := range []struct {
		namespaces []string
		ok         bool
	}{
		{nil, true},
		{[]string{"team-a", "team-b"}, true},
		{[]string{"Team-A"}, false},
		{[]string{"team-a", "team-a"}, false},
		{[]string{""}, false},
	} {
		if err := ValidateWatchNamespaces(tc.namespaces); (err == nil) != tc.ok {
			t.Errorf("%q: %v, want ok=%v", tc.namespaces, err, tc.ok)
		}
	}
}
