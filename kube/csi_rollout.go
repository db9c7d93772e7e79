package kube

import (
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// ComponentCSINode is the LabelComponent value of the CSI node plugin
// DaemonSet and its pods.
const ComponentCSINode = "csi-node"

// csiReader reads the CSI node plugin of a cluster from listers.
type csiReader struct {
	DaemonSets appsv1listers.DaemonSetLister
	Pods       corev1listers.PodLister
}

// fillUpgrade sets the CSI fields of an upgrade snapshot: the version the
// node plugin DaemonSet is set to ("" when no CSI driver is deployed), its
// pods, and those ready at target.
func (r csiReader) fillUpgrade(c *operatorv1alpha1.GlusterCluster, target string, snap *states.UpgradeSnapshot) error {
	ds, err := r.DaemonSets.DaemonSets(c.Namespace).Get(CSINodeDaemonSetName(c.Name))
	if errors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	snap.CSIClientVersion = ds.Spec.Template.Annotations[AnnotationVersion]
	pods, err := r.Pods.Pods(c.Namespace).List(labels.SelectorFromSet(labels.Set{LabelCluster: c.Name, LabelComponent: ComponentCSINode}))
	if err != nil {
		return err
	}
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		snap.CSINodesTotal++
		if podReady(p) && p.Annotations[AnnotationVersion] == target {
			snap.CSINodesAtTarget++
		}
	}
	return nil
}
