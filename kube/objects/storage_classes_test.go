package objects

import (
	"maps"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func withClasses(c *operatorv1alpha1.GlusterCluster, file, block *operatorv1alpha1.StorageClassSpec) *operatorv1alpha1.GlusterCluster {
	c.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{File: file, Block: block}}
	return c
}

func classNames(scs []*storagev1.StorageClass) []string {
	var out []string
	for _, sc := range scs {
		out = append(out, sc.Name)
	}
	return out
}

func TestDesiredStorageClasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    *operatorv1alpha1.GlusterCluster
		want []string
	}{
		{"no spec.drivers and no storageClasses: the file driver's class", fixtures.CSICluster("gc"), []string{"gc-file"}},
		{"block, refused by the API, adds no class", fixtures.CSICluster("gc", fixtures.BlockDriver, fixtures.FileDriver), []string{"gc-file"}},
		{"a name replaces the default", withClasses(fixtures.CSICluster("gc", fixtures.FileDriver), &operatorv1alpha1.StorageClassSpec{Name: "shared"}, nil), []string{"shared"}},
		{"create: false leaves the driver without a class", withClasses(fixtures.CSICluster("gc", fixtures.FileDriver), &operatorv1alpha1.StorageClassSpec{Create: ptr.To(false)}, nil), nil},
		{"create: true is the default", withClasses(fixtures.CSICluster("gc"), &operatorv1alpha1.StorageClassSpec{Create: ptr.To(true)}, nil), []string{"gc-file"}},
		{"a class of a driver not in spec.drivers is not wanted", withClasses(fixtures.CSICluster("gc", fixtures.FileDriver), nil, &operatorv1alpha1.StorageClassSpec{Name: "blocks"}), []string{"gc-file"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := classNames(DesiredStorageClasses(tc.c)); !slices.Equal(got, tc.want) {
				t.Errorf("classes %v, want %v", got, tc.want)
			}
			if got := classNames(DesiredCSIObjects(tc.c, "4.1.0").StorageClasses); !slices.Equal(got, tc.want) {
				t.Errorf("DesiredCSIObjects: classes %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStorageClassObjectDefaults(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	sc := StorageClassObject(c, fixtures.FileDriver)
	if sc.Provisioner != CSIDriverName(fixtures.FileDriver) {
		t.Errorf("provisioner %q, want the file driver's name", sc.Provisioner)
	}
	if sc.Namespace != "" || len(sc.OwnerReferences) != 0 {
		t.Errorf("a cluster-scoped class has namespace %q and owners %v", sc.Namespace, sc.OwnerReferences)
	}
	for k, v := range map[string]string{LabelCluster: "gc", LabelClusterNamespace: fixtures.Namespace, LabelManagedBy: ManagedByAnthill, LabelCSIDriver: "file", LabelComponent: ComponentCSI} {
		if sc.Labels[k] != v {
			t.Errorf("label %s = %q, want %q", k, sc.Labels[k], v)
		}
	}
	if !StorageClassOf(sc, fixtures.Namespace, "gc") || StorageClassOf(sc, "elsewhere", "gc") || StorageClassOf(sc, fixtures.Namespace, "other") {
		t.Error("StorageClassOf does not recognise exactly its own cluster's class")
	}
	if len(sc.Parameters) != 0 || len(sc.Annotations) != 0 {
		t.Errorf("parameters %v, annotations %v: want none", sc.Parameters, sc.Annotations)
	}
	// The management Service, for mounts of a volume whose
	// glusterserver's pod is gone.
	if want := []string{"backup-volfile-servers=" + ManagementHost(c)}; !slices.Equal(sc.MountOptions, want) {
		t.Errorf("mount options %v, want %v", sc.MountOptions, want)
	}
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimDelete || *sc.VolumeBindingMode != storagev1.VolumeBindingImmediate || *sc.AllowVolumeExpansion {
		t.Errorf("reclaim %s, binding %s, expansion %t: want Delete, Immediate, false", *sc.ReclaimPolicy, *sc.VolumeBindingMode, *sc.AllowVolumeExpansion)
	}
	if sc.AllowedTopologies != nil {
		t.Errorf("allowedTopologies %v without allowedZones", sc.AllowedTopologies)
	}
}

func TestStorageClassObjectZonesDefaultAndRetain(t *testing.T) {
	c := withClasses(fixtures.CSICluster("gc"), &operatorv1alpha1.StorageClassSpec{
		ReclaimPolicy: corev1.PersistentVolumeReclaimRetain, IsDefault: true, AllowedZones: []string{"zone-2", "zone-1"},
	}, nil)
	sc := StorageClassObject(c, fixtures.FileDriver)
	if sc.Name != "gc-file" || sc.Provisioner != CSIFileDriverName {
		t.Errorf("name %s, provisioner %s", sc.Name, sc.Provisioner)
	}
	if sc.Annotations[AnnotationDefaultStorageClass] != "true" {
		t.Errorf("annotations %v, want the default-class annotation", sc.Annotations)
	}
	if *sc.ReclaimPolicy != corev1.PersistentVolumeReclaimRetain {
		t.Errorf("reclaim %s, want Retain", *sc.ReclaimPolicy)
	}
	if *sc.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
		t.Errorf("binding %s, want WaitForFirstConsumer with allowedZones", *sc.VolumeBindingMode)
	}
	want := []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
		{Key: "topology.kubernetes.io/zone", Values: []string{"zone-1", "zone-2"}},
	}}}
	if len(sc.AllowedTopologies) != 1 || sc.AllowedTopologies[0].MatchLabelExpressions[0].Key != want[0].MatchLabelExpressions[0].Key ||
		!slices.Equal(sc.AllowedTopologies[0].MatchLabelExpressions[0].Values, want[0].MatchLabelExpressions[0].Values) {
		t.Errorf("allowedTopologies %+v, want %+v", sc.AllowedTopologies, want)
	}
	if got := c.Spec.CSI.StorageClasses.File.AllowedZones; got[0] != "zone-2" {
		t.Errorf("the builder sorted the spec's own list: %v", got)
	}
}

func TestDiffStorageClass(t *testing.T) {
	base := func() *operatorv1alpha1.GlusterCluster {
		return withClasses(fixtures.CSICluster("gc", fixtures.FileDriver), &operatorv1alpha1.StorageClassSpec{AllowedZones: []string{"zone-1"}}, nil)
	}
	want := StorageClassObject(base(), fixtures.FileDriver)
	for _, tc := range []struct {
		name string
		edit func(*storagev1.StorageClass)
		want StorageClassDrift
	}{
		{"an identical class is in sync", func(*storagev1.StorageClass) {}, StorageClassInSync},
		{"another controller's label and annotation are not drift", func(sc *storagev1.StorageClass) {
			sc.Labels["team"] = "storage"
			sc.Annotations = map[string]string{"kubectl.kubernetes.io/last-applied-configuration": "{}"}
		}, StorageClassInSync},
		{"unset reclaimPolicy and bindingMode read as the API defaults", func(sc *storagev1.StorageClass) {
			sc.ReclaimPolicy = nil
		}, StorageClassInSync},
		{"a hand-set default-class annotation is undone in place", func(sc *storagev1.StorageClass) {
			sc.Annotations = map[string]string{AnnotationDefaultStorageClass: "true"}
		}, StorageClassUpdate},
		{"changed allowedTopologies are updated in place", func(sc *storagev1.StorageClass) {
			sc.AllowedTopologies[0].MatchLabelExpressions[0].Values = []string{"zone-9"}
		}, StorageClassUpdate},
		{"a removed anthill label is put back in place", func(sc *storagev1.StorageClass) { delete(sc.Labels, LabelCSIDriver) }, StorageClassUpdate},
		{"mount options are updated in place", func(sc *storagev1.StorageClass) { sc.MountOptions = []string{"ro"} }, StorageClassUpdate},
		{"expansion is updated in place", func(sc *storagev1.StorageClass) { sc.AllowVolumeExpansion = ptr.To(true) }, StorageClassUpdate},
		{"another provisioner recreates", func(sc *storagev1.StorageClass) { sc.Provisioner = "example.com/x" }, StorageClassRecreate},
		{"parameters recreate", func(sc *storagev1.StorageClass) { sc.Parameters = map[string]string{"replica": "2"} }, StorageClassRecreate},
		{"another reclaimPolicy recreates", func(sc *storagev1.StorageClass) {
			sc.ReclaimPolicy = ptr.To(corev1.PersistentVolumeReclaimRetain)
		}, StorageClassRecreate},
		{"another binding mode recreates", func(sc *storagev1.StorageClass) {
			sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		}, StorageClassRecreate},
	} {
		t.Run(tc.name, func(t *testing.T) {
			have := want.DeepCopy()
			tc.edit(have)
			if got := DiffStorageClass(want, have); got != tc.want {
				t.Errorf("drift %d, want %d", got, tc.want)
			}
			if tc.want == StorageClassUpdate {
				if got := DiffStorageClass(want, UpdateStorageClass(want, have)); got != StorageClassInSync {
					t.Errorf("after UpdateStorageClass the drift is %d, want in sync", got)
				}
			}
		})
	}
	// UpdateStorageClass keeps what is not anthill's.
	have := want.DeepCopy()
	have.Labels["team"] = "storage"
	have.Annotations = map[string]string{"note": "x", AnnotationDefaultStorageClass: "true"}
	up := UpdateStorageClass(want, have)
	if up.Labels["team"] != "storage" || up.Annotations["note"] != "x" {
		t.Errorf("foreign metadata lost: labels %v, annotations %v", up.Labels, up.Annotations)
	}
	if _, ok := up.Annotations[AnnotationDefaultStorageClass]; ok {
		t.Errorf("the default-class annotation stays though isDefault is false: %v", up.Annotations)
	}
}

func TestAdditionalStorageClasses(t *testing.T) {
	c := withClasses(fixtures.CSICluster("gc"), &operatorv1alpha1.StorageClassSpec{IsDefault: true}, nil)
	c.Spec.CSI.StorageClasses.Additional = []operatorv1alpha1.StorageClassSpec{
		{Name: "replica3", Replicas: ptr.To[int32](3)},
		{Name: "thin", Replicas: ptr.To[int32](2), ArbiterType: "thin", ArbiterPath: "ta.example.com:/bricks/ta:24007", ReclaimPolicy: corev1.PersistentVolumeReclaimRetain},
		{Name: "gone", Create: ptr.To(false), BrickType: "loop"},
		{Name: "lite", BrickType: "loop", AllowedZones: []string{"zone-2"}},
	}
	got := DesiredStorageClasses(c)
	if names := classNames(got); !slices.Equal(names, []string{"gc-file", "replica3", "thin", "lite"}) {
		t.Fatalf("classes %v, want the file class, then each additional one not create: false, in spec order", names)
	}
	for _, tc := range []struct {
		sc      *storagev1.StorageClass
		params  map[string]string
		reclaim corev1.PersistentVolumeReclaimPolicy
		binding storagev1.VolumeBindingMode
		dflt    bool
	}{
		{got[0], nil, corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingImmediate, true},
		{got[1], map[string]string{"replicas": "3"}, corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingImmediate, false},
		{got[2], map[string]string{"replicas": "2", "arbiterType": "thin", "arbiterPath": "ta.example.com:/bricks/ta:24007"}, corev1.PersistentVolumeReclaimRetain, storagev1.VolumeBindingImmediate, false},
		{got[3], map[string]string{"brickType": "loop"}, corev1.PersistentVolumeReclaimDelete, storagev1.VolumeBindingWaitForFirstConsumer, false},
	} {
		sc := tc.sc
		if !maps.Equal(sc.Parameters, tc.params) {
			t.Errorf("%s: parameters %v, want %v", sc.Name, sc.Parameters, tc.params)
		}
		for k := range sc.Parameters {
			if !slices.Contains(CSIFileParameters, k) {
				t.Errorf("%s: parameter %q, which the driver does not read", sc.Name, k)
			}
		}
		if sc.Provisioner != CSIFileDriverName || !StorageClassOf(sc, fixtures.Namespace, "gc") || sc.Labels[LabelCSIDriver] != "file" {
			t.Errorf("%s: provisioner %s, labels %v: want the file driver's, and the cluster's labels", sc.Name, sc.Provisioner, sc.Labels)
		}
		if *sc.ReclaimPolicy != tc.reclaim || *sc.VolumeBindingMode != tc.binding {
			t.Errorf("%s: reclaim %s, binding %s, want %s, %s", sc.Name, *sc.ReclaimPolicy, *sc.VolumeBindingMode, tc.reclaim, tc.binding)
		}
		if got := sc.Annotations[AnnotationDefaultStorageClass] == "true"; got != tc.dflt {
			t.Errorf("%s: default %t, want %t", sc.Name, got, tc.dflt)
		}
	}

	// A parameter changed in the spec recreates the class (Kubernetes keeps
	// parameters immutable).
	before := got[1]
	c.Spec.CSI.StorageClasses.Additional[0].Replicas = ptr.To[int32](2)
	if d := DiffStorageClass(DesiredStorageClasses(c)[1], before); d != StorageClassRecreate {
		t.Errorf("replicas 3 -> 2: drift %d, want StorageClassRecreate", d)
	}

	// An entry without a name (the API refuses one) makes no class.
	c.Spec.CSI.StorageClasses.Additional = append(c.Spec.CSI.StorageClasses.Additional, operatorv1alpha1.StorageClassSpec{Replicas: ptr.To[int32](3)})
	if n := len(DesiredStorageClasses(c)); n != 4 {
		t.Errorf("%d classes with a nameless entry, want 4", n)
	}
}
