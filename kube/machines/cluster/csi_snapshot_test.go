package cluster

import (
	"context"
	"slices"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"
	storagev1listers "k8s.io/client-go/listers/storage/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

func fxClassLister(t *testing.T, scs ...*storagev1.StorageClass) storagev1listers.StorageClassLister {
	t.Helper()
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for _, sc := range scs {
		if err := idx.Add(sc); err != nil {
			t.Fatal(err)
		}
	}
	return storagev1listers.NewStorageClassLister(idx)
}

// The cluster machine's view of the StorageClasses: what ensureDrivers
// must still do, and which wanted names someone else holds. A taken name
// must not count as missing, or ensureDrivers would run forever in front
// of every other decision.
func TestStorageClassDriftAndClashes(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	file := objects.StorageClassObject(c, fixtures.FileDriver)
	stale := file.DeepCopy()
	stale.Annotations = map[string]string{objects.AnnotationDefaultStorageClass: "true"}
	renamed := file.DeepCopy()
	renamed.Name = "gc-old"
	taken := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Provisioner: "example.com/other"}
	want := objects.DesiredStorageClasses(c)
	// Another cluster of the namespace wants the name taken.
	other := fixtures.CSICluster("other", fixtures.FileDriver)
	other.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{
		File: &operatorv1alpha1.StorageClassSpec{Name: "taken"},
	}}
	// The same-named cluster of another namespace made gc-file first.
	twin := c.DeepCopy()
	twin.Namespace = "elsewhere"
	twinsFile := objects.StorageClassObject(twin, fixtures.FileDriver)

	for _, tc := range []struct {
		name        string
		have        []*storagev1.StorageClass
		wantDrift   []string
		wantClashes []string
	}{
		{"nothing exists: the file class is missing, the taken name clashes", []*storagev1.StorageClass{taken}, []string{"StorageClass gc-file"}, []string{"taken"}},
		{"the class of a same-named cluster in another namespace clashes", []*storagev1.StorageClass{twinsFile, taken}, nil, []string{"gc-file", "taken"}},
		{"in sync", []*storagev1.StorageClass{file, taken}, nil, []string{"taken"}},
		{"an out-of-date class and an old name of ours", []*storagev1.StorageClass{stale, renamed, taken},
			[]string{"StorageClass gc-file (out of date)", "StorageClass gc-old (no longer wanted)"}, []string{"taken"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := CSIListers{StorageClasses: fxClassLister(t, tc.have...)}
			drift, err := l.storageClassDrift(c, want)
			fixtures.Must(t, err, "drift")
			if !slices.Equal(drift, tc.wantDrift) {
				t.Errorf("drift %v, want %v", drift, tc.wantDrift)
			}
			clashes, err := l.storageClassClashes(c)
			fixtures.Must(t, err, "clashes")
			otherClashes, err := l.storageClassClashes(other)
			fixtures.Must(t, err, "clashes")
			clashes = append(clashes, otherClashes...)
			if !slices.Equal(clashes, tc.wantClashes) {
				t.Errorf("clashes %v, want %v", clashes, tc.wantClashes)
			}
		})
	}
}

// While another cluster's CSIDriver holds the driver's fixed name, a
// cluster that asks for the driver (admitted in a race with the holder's
// create) is told so by a CSIDriverTaken Event and creates nothing; one
// with spec.csi.enabled false asks for nothing, so it has no clash, no
// missing object, and counts no volume of the driver as its own.
func TestADriverHeldElsewhereIsAClashOnlyForAClusterThatAsksForIt(t *testing.T) {
	holder := fixtures.CSICluster("holder")
	holder.Namespace = "elsewhere"
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	if err := idx.Add(objects.CSIDriverObject(holder, fixtures.FileDriver)); err != nil {
		t.Fatal(err)
	}
	l := CSIListers{CSIDrivers: storagev1listers.NewCSIDriverLister(idx), StorageClasses: fxClassLister(t)}

	wants := fixtures.CSICluster("gc")
	clash, err := l.readCSIClash(wants)
	if err != nil || clash.driverOwner != "elsewhere/holder" {
		t.Errorf("a cluster asking for the held driver: clash %+v, %v; want the holder elsewhere/holder", clash, err)
	}
	if m, err := l.missing(wants); err != nil || len(m) != 0 {
		t.Errorf("a cluster asking for the held driver misses %v, %v; want nothing (it creates nothing)", m, err)
	}

	off := fixtures.CSICluster("gc")
	off.Spec.CSI = &operatorv1alpha1.CSISpec{Enabled: new(bool)}
	if clash, err := l.readCSIClash(off); err != nil || clash.driverOwner != "" || len(clash.storageClasses) != 0 {
		t.Errorf("spec.csi.enabled false: clash %+v, %v; want none", clash, err)
	}
	if m, err := l.missing(off); err != nil || len(m) != 0 {
		t.Errorf("spec.csi.enabled false misses %v, %v; want nothing", m, err)
	}
	if o := objects.DesiredCSIObjects(off, "4.1.0"); o.ClusterRole != nil || len(o.ServiceAccounts)+len(o.Drivers)+len(o.Controllers)+len(o.NodePlugins)+len(o.StorageClasses) != 0 {
		t.Errorf("spec.csi.enabled false asks for CSI objects %+v", o)
	}
	if n := objects.CSIDriverNames(off); len(n) != 0 {
		t.Errorf("spec.csi.enabled false counts volumes of drivers %v as its own", n)
	}
}

// The snapshot facts of a cluster with spec.csi.snapshots.enabled: what
// Kubernetes does not serve, a missing class as one more object for
// ensureDrivers, and a class of the name someone else made as a clash
// Record warns of (SnapshotClassNameTaken), never as missing.
func TestSnapshotClassFacts(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	c.Spec.CSI = &operatorv1alpha1.CSISpec{Snapshots: &operatorv1alpha1.CSISnapshots{Enabled: true}}
	served := &metav1.APIResourceList{GroupVersion: objects.SnapshotGroupVersion.String()}
	for _, r := range objects.SnapshotResources {
		served.APIResources = append(served.APIResources, metav1.APIResource{Name: r})
	}
	someoneElses := &unstructured.Unstructured{}
	someoneElses.SetAPIVersion(objects.SnapshotGroupVersion.String())
	someoneElses.SetKind("VolumeSnapshotClass")
	someoneElses.SetName("gc-file")
	for _, tc := range []struct {
		name        string
		resources   []*metav1.APIResourceList
		objs        []runtime.Object
		wantAPI     []string
		wantMissing []string
		wantTaken   string
	}{
		{"no snapshot API", nil, nil, objects.SnapshotResources, nil, ""},
		{"served, no class", []*metav1.APIResourceList{served}, nil, nil, []string{"VolumeSnapshotClass gc-file"}, ""},
		{"served, the name taken", []*metav1.APIResourceList{served}, []runtime.Object{someoneElses}, nil, nil, "gc-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			disc := kubefake.NewClientset().Discovery().(*fakediscovery.FakeDiscovery)
			disc.Resources = tc.resources
			dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
				map[schema.GroupVersionResource]string{objects.VolumeSnapshotClassResource: "VolumeSnapshotClassList"}, tc.objs...)
			idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
			s := &Syncer{CSI: CSIListers{CSIDrivers: storagev1listers.NewCSIDriverLister(idx)}, Snapshots: &effects.SnapshotAPI{Discovery: disc, Dynamic: dyn}}
			f := &clusterFacts{}
			fixtures.Must(t, s.readSnapshotClass(context.Background(), c, f), "read")
			if !slices.Equal(f.snap.SnapshotAPIMissing, tc.wantAPI) || !slices.Equal(f.snap.DriversMissing, tc.wantMissing) || f.snapshotClassTaken != tc.wantTaken {
				t.Errorf("api missing %v, drivers missing %v, taken %q; want %v, %v, %q",
					f.snap.SnapshotAPIMissing, f.snap.DriversMissing, f.snapshotClassTaken, tc.wantAPI, tc.wantMissing, tc.wantTaken)
			}
		})
	}
}
