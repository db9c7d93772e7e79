package storageversion

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsfake "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset/fake"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"
)

// The fakes here check the protocol (what is listed, written and trimmed,
// and when nothing is); that the API server really re-encodes and keeps
// status is TestStorageMigration's, on a real one (e2e/apiversions).

const crdName = "widgets.example.com"

var gvr = schema.GroupVersionResource{Group: "example.com", Version: "v1beta1", Resource: "widgets"}

func testCRD(stored ...string) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: crdName},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "example.com",
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: "widgets", Kind: "Widget", ListKind: "WidgetList"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{
				{Name: "v1alpha1", Served: true},
				{Name: "v1beta1", Served: true, Storage: true},
			},
		},
		Status: apiextensionsv1.CustomResourceDefinitionStatus{StoredVersions: stored},
	}
}

func widget(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("example.com/v1beta1")
	u.SetKind("Widget")
	u.SetNamespace(ns)
	u.SetName(name)
	u.Object["status"] = map[string]any{"state": "Online"}
	return u
}

// fixture is the two fake clients with the CRD and objects, discovery
// reporting hash as the storage version hash of v1beta1 widgets.
func fixture(crd *apiextensionsv1.CustomResourceDefinition, hash string, objs ...runtime.Object) (Clients, *apiextensionsfake.Clientset, *dynamicfake.FakeDynamicClient) {
	crds := apiextensionsfake.NewClientset(crd)
	crds.Discovery().(*fakediscovery.FakeDiscovery).Resources = []*metav1.APIResourceList{{
		GroupVersion: gvr.GroupVersion().String(),
		APIResources: []metav1.APIResource{{Name: "widgets", Kind: "Widget", Namespaced: true, StorageVersionHash: hash}},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "WidgetList"}, objs...)
	return Clients{CRDs: crds, Dynamic: dyn}, crds, dyn
}

func updates(actions []clienttesting.Action) []string {
	var out []string
	for _, a := range actions {
		if u, ok := a.(clienttesting.UpdateAction); ok {
			o := u.GetObject().(metav1.Object)
			out = append(out, u.GetSubresource()+":"+o.GetNamespace()+"/"+o.GetName())
		}
	}
	return out
}

func storedVersions(t *testing.T, crds *apiextensionsfake.Clientset) []string {
	t.Helper()
	crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), crdName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return crd.Status.StoredVersions
}

func TestMigrateRewritesEveryObjectThenTrimsStoredVersions(t *testing.T) {
	c, crds, dyn := fixture(testCRD("v1alpha1", "v1beta1"), storageVersionHash("example.com", "v1beta1", "Widget"),
		widget("a", "one"), widget("b", "two"))
	var visited []string
	res, err := Migrate(context.Background(), c, crdName, func(o Object) { visited = append(visited, o.Namespace+"/"+o.Name) })
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(visited)
	if !slices.Equal(visited, []string{"a/one", "b/two"}) || res.Rewritten+res.Unchanged != 2 || res.StorageVersion != "v1beta1" {
		t.Errorf("visited %v, result %+v; want both objects at v1beta1", visited, res)
	}
	got := updates(dyn.Actions())
	slices.Sort(got)
	if !slices.Equal(got, []string{":a/one", ":b/two"}) {
		t.Errorf("object writes %v, want one main-resource update each (never status)", got)
	}
	if sv := storedVersions(t, crds); !slices.Equal(sv, []string{"v1beta1"}) {
		t.Errorf("storedVersions = %v, want [v1beta1]", sv)
	}
	if !slices.Equal(res.StoredVersionsBefore, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("StoredVersionsBefore = %v", res.StoredVersionsBefore)
	}
}

func TestMigrateDoesNothingWhenOnlyTheStorageVersionIsStored(t *testing.T) {
	c, _, dyn := fixture(testCRD("v1beta1"), "wrong-hash", widget("a", "one"))
	res, err := Migrate(context.Background(), c, crdName, nil)
	if err != nil || !res.AlreadyMigrated {
		t.Fatalf("got %+v, %v; want AlreadyMigrated", res, err)
	}
	if len(dyn.Actions()) != 0 {
		t.Errorf("already migrated, yet it called %v", dyn.Actions())
	}
}

func TestMigrateWaitsForTheAPIServerToStoreTheNewVersion(t *testing.T) {
	defer func(d time.Duration) { servingTimeout = d }(servingTimeout)
	servingTimeout = 300 * time.Millisecond
	// Discovery still reports v1alpha1's hash: the API server has not taken
	// in the new CRD, so a rewrite now could store v1alpha1 again.
	c, crds, dyn := fixture(testCRD("v1alpha1", "v1beta1"), storageVersionHash("example.com", "v1alpha1", "Widget"), widget("a", "one"))
	_, err := Migrate(context.Background(), c, crdName, nil)
	if err == nil || !strings.Contains(err.Error(), "does not encode at the new storage version yet") {
		t.Fatalf("err = %v, want a wait for the storage version", err)
	}
	if len(dyn.Actions()) != 0 {
		t.Errorf("it wrote before the API server stored v1beta1: %v", dyn.Actions())
	}
	if sv := storedVersions(t, crds); !slices.Equal(sv, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("storedVersions = %v, want unchanged", sv)
	}
}

func TestAnInterruptedMigrationLeavesStoredVersions(t *testing.T) {
	c, crds, _ := fixture(testCRD("v1alpha1", "v1beta1"), storageVersionHash("example.com", "v1beta1", "Widget"),
		widget("a", "one"), widget("b", "two"))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	_, err := Migrate(ctx, c, crdName, func(Object) { n++; cancel() })
	if err == nil || n != 1 {
		t.Fatalf("err %v after %d objects, want an error after the first", err, n)
	}
	if sv := storedVersions(t, crds); !slices.Equal(sv, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("storedVersions = %v after an interruption, want unchanged", sv)
	}
}

func TestAStorageVersionChangedMidwayIsNotTrimmed(t *testing.T) {
	c, crds, _ := fixture(testCRD("v1alpha1", "v1beta1"), storageVersionHash("example.com", "v1beta1", "Widget"), widget("a", "one"))
	_, err := Migrate(context.Background(), c, crdName, func(Object) {
		crd := testCRD("v1alpha1", "v1beta1")
		crd.Spec.Versions[0].Storage, crd.Spec.Versions[1].Storage = true, false
		if _, err := crds.ApiextensionsV1().CustomResourceDefinitions().Update(context.Background(), crd, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "storage version changed") {
		t.Fatalf("err = %v, want the storage version change named", err)
	}
	if sv := storedVersions(t, crds); !slices.Equal(sv, []string{"v1alpha1", "v1beta1"}) {
		t.Errorf("storedVersions = %v, want unchanged", sv)
	}
}

func TestMigrateNeedsAStorageVersion(t *testing.T) {
	crd := testCRD("v1alpha1")
	crd.Spec.Versions[1].Storage = false
	c, _, _ := fixture(crd, "")
	if _, err := Migrate(context.Background(), c, crdName, nil); err == nil {
		t.Fatal("a CRD without a storage version migrated")
	}
}
