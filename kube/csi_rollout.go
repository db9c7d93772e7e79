package kube

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// ComponentCSINode is the LabelComponent value of the CSI node plugin
// DaemonSets (file and block) and their pods.
const ComponentCSINode = "csi-node"

// csiReader reads the CSI node plugins of a cluster from listers.
//
// PVs and VolumePods, when set, tell which Kubernetes nodes have a volume
// of the cluster's drivers in use (see pinnedNodeSet): PVs must list the
// PersistentVolumes of the cluster's drivers, VolumePods the pods of every
// namespace (they are not anthill's, so the managed-by informers do not
// see them). When either is nil no node counts as pinned: the upgrade then
// waits for every plugin pod, and blocks on the step timeout if a pod
// cannot be restarted, which is safe if slower.
type csiReader struct {
	DaemonSets appsv1listers.DaemonSetLister
	Pods       corev1listers.PodLister
	PVs        corev1listers.PersistentVolumeLister
	VolumePods corev1listers.PodLister
}

// fillUpgrade sets the CSI fields of an upgrade snapshot: the version the
// node plugin DaemonSets are set to ("" when no CSI driver is deployed;
// when the file and block DaemonSets disagree, the one not at target, so
// that rollClients runs), their pods, those ready at target, those pinned
// by volumes in use on their node, and the stale rest rollClients
// restarts.
func (r csiReader) fillUpgrade(c *operatorv1alpha1.GlusterCluster, target string, snap *states.UpgradeSnapshot) error {
	found := false
	for _, k := range []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile, operatorv1alpha1.GlusterDriverBlock} {
		ds, err := r.DaemonSets.DaemonSets(c.Namespace).Get(CSINodeDaemonSetNameOf(c.Name, k))
		if errors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return err
		}
		v := ds.Spec.Template.Annotations[AnnotationVersion]
		if !found || v != target {
			snap.CSIClientVersion = v
		}
		found = true
	}
	if !found {
		return nil
	}
	pods, err := r.Pods.Pods(c.Namespace).List(labels.SelectorFromSet(labels.Set{LabelCluster: c.Name, LabelComponent: ComponentCSINode}))
	if err != nil {
		return err
	}
	pinned, err := r.pinnedNodes(c)
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		snap.CSINodesTotal++
		atTarget := p.Annotations[AnnotationVersion] == target
		switch {
		case atTarget && podReady(p):
			snap.CSINodesAtTarget++
		case atTarget:
			// Restarted, not ready yet.
		case pinned[p.Spec.NodeName]:
			snap.CSINodesPinned++
		default:
			snap.CSINodesStale++
		}
	}
	return nil
}

// pinnedNodes is pinnedNodeSet over the listers; nil listers pin nothing.
func (r csiReader) pinnedNodes(c *operatorv1alpha1.GlusterCluster) (map[string]bool, error) {
	if r.PVs == nil || r.VolumePods == nil {
		return map[string]bool{}, nil
	}
	pvs, err := r.PVs.List(labels.Everything())
	if err != nil {
		return nil, err
	}
	return pinnedNodeSet(csiDriverNames(c), pvs, func(ns string) ([]*corev1.Pod, error) {
		return r.VolumePods.Pods(ns).List(labels.Everything())
	})
}
