package machines

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
)

// A PersistentVolume holds a cluster's deletion when it came from one of the
// cluster's CSI drivers (what a provisioner creates: no anthill label) or
// when an admin labelled it; a PV of another cluster's driver, or of the
// same cluster name in another namespace, does not.
func TestPVsMapToTheClustersTheyUse(t *testing.T) {
	a := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "gc"}}
	b := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "gc"}}
	clusters := fixtures.NewIndexer()
	if err := clusters.AddIndexers(cache.Indexers{gather.UsesIndex: gather.ClusterUses}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
		if err := clusters.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	km := keyMapper{clusters: listers.NewGlusterClusterLister(clusters), byUse: clusters}
	csiPV := func(driver string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}, Spec: corev1.PersistentVolumeSpec{
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: "h"}}}}
	}
	for _, tc := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want []engine.Key
	}{
		{"provisioned by the driver, whose name every cluster shares", csiPV(objects.CSIFileDriverName), []engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "gc")}},
		{"provisioned by an earlier release's file driver of ns1/gc", csiPV(objects.LegacyCSIDriverNames("ns1", "gc")[0]), []engine.Key{gather.ClusterKey("ns1", "gc")}},
		{"provisioned by an earlier release's block driver of ns2/gc", csiPV(objects.LegacyCSIDriverNames("ns2", "gc")[1]), []engine.Key{gather.ClusterKey("ns2", "gc")}},
		{"another CSI driver", csiPV("ebs.csi.aws.com"), nil},
		{"not CSI, unlabelled", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv"}}, nil},
		{"labelled by an admin with the cluster name", &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{objects.LabelCluster: "gc"}}},
			[]engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "gc")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := km.forPV(tc.pv)
			slices.SortFunc(got, func(x, y engine.Key) int { return strings.Compare(x.Namespace, y.Namespace) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("keys %v, want %v", got, tc.want)
			}
			for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
				if gather.UsesCluster(tc.pv, c) != slices.Contains(tc.want, gather.ClusterKey(c.Namespace, c.Name)) {
					t.Fatalf("usesCluster(%s/%s) disagrees with the key mapping", c.Namespace, c.Name)
				}
			}
		})
	}
}

// A StorageClass wakes the cluster whose labels it carries, and every
// cluster that wants its name: its creation is a clash to report, its
// deletion lets that cluster create its own.
func TestStorageClassesMapToTheirClusterAndToClustersWantingTheName(t *testing.T) {
	a := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns1", Name: "gc"}}
	b := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns2", Name: "other"}}
	b.Spec.CSI = &operatorv1alpha1.CSISpec{StorageClasses: &operatorv1alpha1.CSIStorageClasses{File: &operatorv1alpha1.StorageClassSpec{Name: "shared"}}}
	clusters := fixtures.NewIndexer()
	for _, c := range []*operatorv1alpha1.GlusterCluster{a, b} {
		if err := clusters.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	km := keyMapper{clusters: listers.NewGlusterClusterLister(clusters)}
	ours := objects.StorageClassObject(a, operatorv1alpha1.GlusterDriverFile)
	admins := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "shared"}}
	aTakesShared := ours.DeepCopy()
	aTakesShared.Name = "shared"
	for _, tc := range []struct {
		name string
		sc   *storagev1.StorageClass
		want []engine.Key
	}{
		{"ns1/gc's own class", ours, []engine.Key{gather.ClusterKey("ns1", "gc")}},
		{"an admin's class of the name ns2/other wants", admins, []engine.Key{gather.ClusterKey("ns2", "other")}},
		{"ns1/gc's class under the name ns2/other wants", aTakesShared, []engine.Key{gather.ClusterKey("ns1", "gc"), gather.ClusterKey("ns2", "other")}},
		{"an unrelated class", &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := km.forStorageClass(tc.sc)
			slices.SortFunc(got, func(x, y engine.Key) int { return strings.Compare(x.Namespace, y.Namespace) })
			if !slices.Equal(got, tc.want) {
				t.Fatalf("keys %v, want %v", got, tc.want)
			}
		})
	}
}
