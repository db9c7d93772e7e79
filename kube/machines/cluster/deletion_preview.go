package cluster

import (
	"slices"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// DeletionPreview is what deleting a GlusterCluster would do now, decided
// by the cluster machine's own policy (states.DecideCluster in Deleting)
// over the same facts the operator gathers for it: the PersistentVolumes
// provisioned from the cluster, its GlusterNodes and spec.paused.
type DeletionPreview struct {
	// Decision is the machine's first decision once the cluster is
	// deleted: a Warning wait while something holds the teardown (PVs
	// still exist, the cluster is paused), else its first step.
	Decision states.Decision
	// PersistentVolumes are the names of the PVs that use the cluster,
	// sorted; while any exists nothing is torn down.
	PersistentVolumes []string
	// Nodes are the cluster's GlusterNodes, each deleted (drained and
	// detached) by the teardown; none in external mode.
	Nodes []string
	// External says no server is touched: only the management Service,
	// its EndpointSlices and the CSI drivers are removed.
	External bool
}

// Blocked reports whether the teardown would wait instead of starting.
func (p DeletionPreview) Blocked() bool { return p.Decision.Waiting() }

// PreviewDeletion computes the DeletionPreview of c from the cluster-wide
// PersistentVolumes and the GlusterNodes of c's namespace.
func PreviewDeletion(c *operatorv1alpha1.GlusterCluster, pvs []*corev1.PersistentVolume, nodes []*operatorv1alpha1.GlusterNode) DeletionPreview {
	snap := states.ClusterSnapshot{
		State: states.ClusterDeleting, Deleting: true, Paused: c.Spec.Paused,
		External: objects.IsExternal(c), InfraExists: true,
	}
	states.CountNodes(objects.ClusterNodeFacts(nodes, c), "").FillCluster(&snap)
	snap.GlusterPVNames = ClusterPVNames(pvs, c)
	snap.GlusterPVs = len(snap.GlusterPVNames)
	out := DeletionPreview{Decision: states.DecideCluster(snap), PersistentVolumes: snap.GlusterPVNames, External: snap.External}
	if !snap.External {
		for _, n := range nodes {
			if n.Spec.Cluster == c.Name {
				out.Nodes = append(out.Nodes, n.Name)
			}
		}
		slices.Sort(out.Nodes)
	}
	return out
}

// ClusterPVNames are the names of those of pvs provisioned from c, sorted:
// what holds c's deletion, for the sync and its preview alike.
func ClusterPVNames(pvs []*corev1.PersistentVolume, c *operatorv1alpha1.GlusterCluster) []string {
	var names []string
	for _, pv := range pvs {
		if gather.UsesCluster(pv, c) {
			names = append(names, pv.Name)
		}
	}
	slices.Sort(names)
	return names
}
