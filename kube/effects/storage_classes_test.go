package effects

import (
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

// classActions are the verbs EnsureCSIDrivers used on StorageClass name
// (get and list left out).
func classActions(f *fxKube, name string) []string {
	var out []string
	for _, a := range f.kube.Actions() {
		if a.GetResource().Resource != "storageclasses" || a.GetVerb() == "get" || a.GetVerb() == "list" {
			continue
		}
		var n string
		if d, ok := a.(k8stesting.DeleteAction); ok && a.GetVerb() == "delete" {
			n = d.GetName()
		} else if o, ok := a.(k8stesting.CreateAction); ok { // updates too
			n = o.GetObject().(*storagev1.StorageClass).Name
		}
		if n == name {
			out = append(out, a.GetVerb())
		}
	}
	return out
}

// TestStorageClassesFollowTheSpec runs EnsureCSIDrivers after each change
// an admin or the spec can make and checks what it did to the classes.
func TestStorageClassesFollowTheSpec(t *testing.T) {
	c := fixtures.CSICluster("gc", fixtures.FileDriver)
	c.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{
		File: &operatorv1alpha1.StorageClassSpec{AllowedZones: []string{"zone-1"}},
	}}
	foreign := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "taken"}, Provisioner: "example.com/other"}
	f := newFxKube(t, []runtime.Object{foreign}, c)
	classes := f.kube.StorageV1().StorageClasses()
	ensure := func(t *testing.T) {
		t.Helper()
		f.kube.ClearActions()
		fixtures.Must(t, f.ops.EnsureCSIDrivers(fixtures.Ctx, fixtures.ClusterTarget(c)), "ensure")
	}
	setSpec := func(t *testing.T, edit func(*operatorv1alpha1.CSIStorageClasses)) {
		t.Helper()
		edit(c.Spec.CSI.StorageClasses)
		_, err := f.crs.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Update(fixtures.Ctx, c, metav1.UpdateOptions{})
		fixtures.Must(t, err, "update cluster")
	}
	get := func(t *testing.T, name string) *storagev1.StorageClass {
		t.Helper()
		sc, err := classes.Get(fixtures.Ctx, name, metav1.GetOptions{})
		fixtures.Must(t, err, "get "+name)
		return sc
	}
	verbs := func(t *testing.T, name string, want ...string) {
		t.Helper()
		if got := classActions(f, name); !slices.Equal(got, want) {
			t.Errorf("StorageClass %s: %v, want %v", name, got, want)
		}
	}

	t.Run("missing classes are created", func(t *testing.T) {
		ensure(t)
		verbs(t, "gc-file", "create")
		if b := get(t, "gc-file"); *b.VolumeBindingMode != storagev1.VolumeBindingWaitForFirstConsumer {
			t.Errorf("binding %s with allowedZones", *b.VolumeBindingMode)
		}
	})
	t.Run("classes in sync are not written", func(t *testing.T) {
		ensure(t)
		verbs(t, "gc-file")
	})
	t.Run("a hand edit of a mutable field is undone in place", func(t *testing.T) {
		sc := get(t, "gc-file")
		sc.Annotations = map[string]string{objects.AnnotationDefaultStorageClass: "true", "note": "kept"}
		_, err := classes.Update(fixtures.Ctx, sc, metav1.UpdateOptions{})
		fixtures.Must(t, err, "edit")
		ensure(t)
		verbs(t, "gc-file", "update")
		if got := get(t, "gc-file").Annotations; got[objects.AnnotationDefaultStorageClass] != "" || got["note"] != "kept" {
			t.Errorf("annotations %v, want only the admin's note", got)
		}
	})
	t.Run("allowedZones changed within the set are updated in place", func(t *testing.T) {
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) { s.File.AllowedZones = []string{"zone-1", "zone-2"} })
		ensure(t)
		verbs(t, "gc-file", "update")
	})
	t.Run("an immutable change deletes and recreates the class", func(t *testing.T) {
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) {
			s.File.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		})
		ensure(t)
		verbs(t, "gc-file", "delete", "create")
		if got := *get(t, "gc-file").ReclaimPolicy; got != corev1.PersistentVolumeReclaimRetain {
			t.Errorf("reclaim %s", got)
		}
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) { s.File.AllowedZones = nil })
		ensure(t)
		verbs(t, "gc-file", "delete", "create")
		if got := *get(t, "gc-file").VolumeBindingMode; got != storagev1.VolumeBindingImmediate {
			t.Errorf("binding %s without zones", got)
		}
	})
	t.Run("a rename deletes the old class; a taken name is neither written nor deleted", func(t *testing.T) {
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) {
			s.File = &operatorv1alpha1.StorageClassSpec{Name: "taken"}
		})
		ensure(t)
		verbs(t, "gc-file", "delete")
		verbs(t, "taken")
		if got := get(t, "taken"); got.Provisioner != foreign.Provisioner || len(got.Labels) != 0 {
			t.Errorf("the foreign class was changed: %+v", got)
		}
	})
	t.Run("create: false deletes the class", func(t *testing.T) {
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) { s.File = nil })
		ensure(t)
		verbs(t, "gc-file", "create")
		setSpec(t, func(s *operatorv1alpha1.CSIStorageClasses) {
			s.File = &operatorv1alpha1.StorageClassSpec{Create: ptr.To(false)}
		})
		ensure(t)
		verbs(t, "gc-file", "delete")
		verbs(t, "taken")
		l, err := classes.List(fixtures.Ctx, metav1.ListOptions{})
		fixtures.Must(t, err, "list")
		if len(l.Items) != 1 || l.Items[0].Name != "taken" {
			t.Errorf("classes left: %v, want only the foreign one", l.Items)
		}
	})
}
