package cluster

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
)

// usesFleet is clusters (some sharing a name across namespaces, one with
// names long enough that its driver names are hashed) and PVs of their
// drivers, of other drivers, labelled, both or neither.
func usesFleet(r *rand.Rand, nClusters, nPVs int) ([]*operatorv1alpha1.GlusterCluster, []*corev1.PersistentVolume) {
	var cs []*operatorv1alpha1.GlusterCluster
	for i := range nClusters {
		name := fmt.Sprintf("gc%d", i%(nClusters/2+1))
		if i == 0 {
			name = strings.Repeat("long", 14)
		}
		cs = append(cs, &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: fmt.Sprintf("ns%d", i), Name: name}})
	}
	var pvs []*corev1.PersistentVolume
	for i := range nPVs {
		c := cs[r.IntN(len(cs))]
		pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pv-%d", i)}}
		switch r.IntN(3) {
		case 0:
			names := append(objects.LegacyCSIDriverNames(c.Namespace, c.Name), objects.CSIFileDriverName)
			pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: names[r.IntN(len(names))], VolumeHandle: "h"}
		case 1:
			pv.Spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "h"}
		}
		switch r.IntN(4) {
		case 0:
			pv.Labels = map[string]string{objects.LabelCluster: cs[r.IntN(len(cs))].Name}
		case 1:
			pv.Labels = map[string]string{objects.LabelCluster: "nobody"}
		}
		pvs = append(pvs, pv)
	}
	return cs, pvs
}

func usesIndexers(t testing.TB, cs []*operatorv1alpha1.GlusterCluster, pvs []*corev1.PersistentVolume) (clusters, pvIndex cache.Indexer) {
	clusters = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{gather.UsesIndex: gather.ClusterUses})
	pvIndex = cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{gather.UsesIndex: gather.PVUses})
	for _, c := range cs {
		if err := clusters.Add(c); err != nil {
			t.Fatal(err)
		}
	}
	for _, pv := range pvs {
		if err := pvIndex.Add(pv); err != nil {
			t.Fatal(err)
		}
	}
	return clusters, pvIndex
}

// The index finds exactly what comparing every PV with every cluster
// finds (usesCluster), both ways: a cluster's PVs, which hold its
// deletion, and a PV's clusters, which its events wake.
func TestTheUsesIndexAgreesWithUsesCluster(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	cs, pvs := usesFleet(r, 12, 400)
	clusters, pvIndex := usesIndexers(t, cs, pvs)
	found := 0
	for _, c := range cs {
		got, err := gather.IndexedPVNames(pvIndex, c)
		if err != nil {
			t.Fatal(err)
		}
		want := ClusterPVNames(pvs, c)
		if !slices.Equal(got, want) {
			t.Fatalf("cluster %s/%s: indexed PVs %v, want %v", c.Namespace, c.Name, got, want)
		}
		found += len(got)
	}
	if found == 0 {
		t.Fatal("no PV uses any cluster: the fleet tests nothing")
	}
	for _, pv := range pvs {
		got, err := gather.IndexedClusters(clusters, pv)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if slices.Contains(got, c) != gather.UsesCluster(pv, c) {
				t.Fatalf("PV %s and cluster %s/%s: indexed %v, usesCluster %v", pv.Name, c.Namespace, c.Name, slices.Contains(got, c), gather.UsesCluster(pv, c))
			}
		}
	}
}

// BenchmarkClusterPVs: finding one cluster's PVs among a fleet's (1,000
// clusters of ten nodes, two PVs a node, as many again of other drivers),
// by the index and, as the baseline in the same run, by comparing every
// PV (what each cluster sync did before); the index's line prints how
// many scans take the time of one lookup (make bench-lookups).
func BenchmarkClusterPVs(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 4))
	cs, pvs := usesFleet(r, 1000, 40000)
	_, pvIndex := usesIndexers(b, cs, pvs)
	var scan float64
	b.Run("scan", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			ClusterPVNames(pvs, cs[i%len(cs)])
		}
		scan = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	})
	b.Run("index", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := gather.IndexedPVNames(pvIndex, cs[i%len(cs)]); err != nil {
				b.Fatal(err)
			}
		}
		if indexed := float64(b.Elapsed().Nanoseconds()) / float64(b.N); indexed > 0 && scan > 0 {
			b.ReportMetric(scan/indexed, "scans/lookup")
		}
	})
}
