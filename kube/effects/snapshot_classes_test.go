package effects

import (
	"context"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// snapshotWorld is a Kubernetes cluster that serves the snapshot
// resources given, holding objs.
func snapshotWorld(served []string, objs ...runtime.Object) *SnapshotAPI {
	disc := kubefake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
	if len(served) > 0 {
		list := &metav1.APIResourceList{GroupVersion: objects.SnapshotGroupVersion.String()}
		for _, r := range served {
			list.APIResources = append(list.APIResources, metav1.APIResource{Name: r})
		}
		disc.Resources = []*metav1.APIResourceList{list}
	}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{objects.VolumeSnapshotClassResource: "VolumeSnapshotClassList"}, objs...)
	return &SnapshotAPI{Discovery: disc, Dynamic: dyn}
}

func snapshotCluster() *operatorv1alpha1.GlusterCluster {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: "gc", Namespace: "ns"}}
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true}}
	return c
}

// The class is read through the snapshot API only when it is served whole;
// it is created when missing, left alone when someone else's, and deleted
// with the cluster.
func TestSnapshotClassFollowsTheServedAPI(t *testing.T) {
	ctx := context.Background()
	c := snapshotCluster()

	st, err := snapshotWorld(nil).ClassState(ctx, c)
	if err != nil || !slices.Equal(st.APIMissing, objects.SnapshotResources) || st.Missing {
		t.Fatalf("no snapshot API: %+v, %v", st, err)
	}
	st, err = snapshotWorld([]string{"volumesnapshotclasses"}).ClassState(ctx, c)
	if err != nil || !slices.Equal(st.APIMissing, []string{"volumesnapshots", "volumesnapshotcontents"}) {
		t.Fatalf("half the API: %+v, %v", st, err)
	}

	api := snapshotWorld(objects.SnapshotResources)
	o := &Kube{Client: kubefake.NewClientset(), Snapshots: api}
	if st, err := api.ClassState(ctx, c); err != nil || !st.Missing {
		t.Fatalf("served, no class: %+v, %v", st, err)
	}
	if err := o.ensureSnapshotClass(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, err := api.Dynamic.Resource(objects.VolumeSnapshotClassResource).Get(ctx, "gc-file", metav1.GetOptions{})
	if err != nil || got.Object["driver"] != objects.CSIFileDriverName {
		t.Fatalf("class after ensure: %v, %v", got, err)
	}
	if st, err := api.ClassState(ctx, c); err != nil || st.Missing || st.Taken {
		t.Fatalf("own class: %+v, %v", st, err)
	}
	if err := o.deleteSnapshotClasses(ctx, c.Namespace, c.Name); err != nil {
		t.Fatal(err)
	}
	if l, err := api.Dynamic.Resource(objects.VolumeSnapshotClassResource).List(ctx, metav1.ListOptions{}); err != nil || len(l.Items) != 0 {
		t.Fatalf("classes after delete: %v, %v", l, err)
	}

	other := &unstructured.Unstructured{}
	other.SetAPIVersion(objects.SnapshotGroupVersion.String())
	other.SetKind("VolumeSnapshotClass")
	other.SetName("gc-file")
	api = snapshotWorld(objects.SnapshotResources, other)
	o.Snapshots = api
	if st, err := api.ClassState(ctx, c); err != nil || !st.Taken {
		t.Fatalf("someone else's class: %+v, %v", st, err)
	}
	if err := o.ensureSnapshotClass(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := o.deleteSnapshotClasses(ctx, c.Namespace, c.Name); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Dynamic.Resource(objects.VolumeSnapshotClassResource).Get(ctx, "gc-file", metav1.GetOptions{}); err != nil {
		t.Fatalf("someone else's class was deleted: %v", err)
	}
}
