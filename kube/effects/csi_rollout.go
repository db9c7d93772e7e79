package effects

import (
	"context"
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// CSIReader reads the CSI workloads of a cluster from listers.
//
// Pinned, when set, tells which Kubernetes nodes have a volume of the
// cluster's drivers in use (Kube.PinnedNodes reads it live: the pods
// using those volumes are not anthill's, so no informer of the operator
// sees them). When nil no node counts as pinned: the upgrade then waits
// for every plugin pod, and blocks on the step timeout if a pod cannot be
// restarted, which is safe if slower.
type CSIReader struct {
	DaemonSets  appsv1listers.DaemonSetLister
	Deployments appsv1listers.DeploymentLister
	Pods        corev1listers.PodLister
	Pinned      func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (map[string]bool, error)
}

// FillUpgrade sets the CSI fields of an upgrade snapshot: the version the
// node plugin DaemonSets are set to ("" when no CSI driver is deployed;
// when the file and block DaemonSets disagree, the one not at target, so
// that rollClients runs), whether some CSI workload runs other images than
// the spec gives it at target, the plugin pods, those ready at target with
// their DaemonSet's images, those pinned by volumes in use on their node,
// and the stale rest rollClients restarts.
func (r CSIReader) FillUpgrade(ctx context.Context, c *operatorv1alpha1.GlusterCluster, target string, snap *states.UpgradeSnapshot) error {
	found := false
	for _, w := range csiWorkloads(c, target) {
		var tmpl *corev1.PodTemplateSpec
		if w.daemonSet {
			ds, err := r.DaemonSets.DaemonSets(c.Namespace).Get(w.name)
			if errors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			tmpl = &ds.Spec.Template
			v := tmpl.Annotations[objects.AnnotationVersion]
			if !found || v != target {
				snap.CSIClientVersion = v
			}
			found = true
		} else {
			if r.Deployments == nil {
				continue
			}
			d, err := r.Deployments.Deployments(c.Namespace).Get(w.name)
			if errors.IsNotFound(err) {
				continue
			}
			if err != nil {
				return err
			}
			tmpl = &d.Spec.Template
		}
		if !maps.Equal(objects.ContainerImages(tmpl.Spec), w.images) {
			snap.CSIImagesStale = true
		}
	}
	if !found {
		return nil
	}
	pods, err := r.Pods.Pods(c.Namespace).List(labels.SelectorFromSet(labels.Set{objects.LabelCluster: c.Name, objects.LabelComponent: objects.ComponentCSINode}))
	if err != nil {
		return err
	}
	pinned := map[string]bool{}
	if r.Pinned != nil {
		if pinned, err = r.Pinned(ctx, c); err != nil {
			return err
		}
	}
	plugins := pluginImages(c, target)
	for _, p := range pods {
		if p.DeletionTimestamp != nil {
			continue
		}
		snap.CSINodesTotal++
		atTarget := pluginPodCurrent(p, plugins, target)
		switch {
		case atTarget && objects.PodReady(p):
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
