package gather

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

// UsesIndex indexes PersistentVolumes and GlusterClusters alike by what
// ties a PV to a cluster (usesCluster): a CSI driver's name, and the
// cluster name a PV's label gives or a cluster has. A PV uses a cluster
// exactly when the two share a value, so a cluster's PVs, and a PV's
// clusters, are found by lookups instead of by comparing every PV of the
// Kubernetes cluster with every GlusterCluster (a cluster sync did that
// once per sync: clusters times PVs).
const UsesIndex = "anthill.gluster.org/uses"

// The prefixes keep a driver's name and a cluster's name apart.
const (
	usesByDriver = "driver/"
	usesByName   = "cluster/"
)

// PVUses are the index values of a PersistentVolume: its CSI driver and
// its cluster label, when it has them.
func PVUses(obj any) ([]string, error) {
	pv, ok := obj.(*corev1.PersistentVolume)
	if !ok {
		return nil, nil
	}
	var out []string
	if pv.Spec.CSI != nil {
		out = append(out, usesByDriver+pv.Spec.CSI.Driver)
	}
	if l := pv.Labels[objects.LabelCluster]; l != "" {
		out = append(out, usesByName+l)
	}
	return out, nil
}

// ClusterUses are the index values of a GlusterCluster: every driver name
// its volumes may carry (objects.CSIDriverNames: the driver's own, shared
// by every cluster, and the per-cluster names of earlier releases) and its
// name. A PV of the driver's own name cannot tell which cluster made it,
// so it counts for every cluster: one cluster per Kubernetes cluster runs
// the driver (docs/csi.md), and counting it for another only keeps that
// one from being deleted while the volume exists.
func ClusterUses(obj any) ([]string, error) {
	c, ok := obj.(*operatorv1alpha1.GlusterCluster)
	if !ok {
		return nil, nil
	}
	names := objects.CSIDriverNames(c)
	out := make([]string, 0, len(names)+1)
	for n := range names {
		out = append(out, usesByDriver+n)
	}
	slices.Sort(out)
	return append(out, usesByName+c.Name), nil
}

// IndexUses adds usesIndex to an informer of PersistentVolumes or of
// GlusterClusters before it starts, and returns its store.
func IndexUses(inf cache.SharedIndexInformer, by cache.IndexFunc) (cache.Indexer, error) {
	if err := inf.AddIndexers(cache.Indexers{UsesIndex: by}); err != nil {
		return nil, err
	}
	return inf.GetIndexer(), nil
}

// IndexedPVNames are the names of the PVs of pvs (indexed by pvUses) that
// use c, sorted: clusterPVNames by lookups.
func IndexedPVNames(pvs cache.Indexer, c *operatorv1alpha1.GlusterCluster) ([]string, error) {
	var names []string
	values, _ := ClusterUses(c)
	for _, v := range values {
		objs, err := pvs.ByIndex(UsesIndex, v)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if pv, ok := o.(*corev1.PersistentVolume); ok {
				names = append(names, pv.Name)
			}
		}
	}
	slices.Sort(names)
	// A PV both of c's driver and labelled with c's name is found twice.
	return slices.Compact(names), nil
}

// IndexedClusters are the clusters of clusters (indexed by clusterUses)
// that pv uses.
func IndexedClusters(clusters cache.Indexer, pv *corev1.PersistentVolume) ([]*operatorv1alpha1.GlusterCluster, error) {
	values, _ := PVUses(pv)
	var out []*operatorv1alpha1.GlusterCluster
	for _, v := range values {
		objs, err := clusters.ByIndex(UsesIndex, v)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if c, ok := o.(*operatorv1alpha1.GlusterCluster); ok && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}
