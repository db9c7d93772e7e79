package effects

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// EnsureNodeWorkload creates the node's StatefulSet if absent; the
// StatefulSet controller creates the brick PVCs from its claim templates.
// A node with an external address runs no pod, so there is nothing to do.
func (o *Kube) EnsureNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	node, err := o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get GlusterNode %s: %w", n.NodeKey(), err)
	}
	if node.Spec.ExternalAddress != "" {
		return nil
	}
	c, err := o.getCluster(ctx, n.Namespace, node.Spec.Cluster)
	if err != nil {
		return err
	}
	sts := objects.NodeStatefulSet(c, node, objects.ClusterVersion(c))
	_, err = o.Client.AppsV1().StatefulSets(n.Namespace).Create(ctx, sts, metav1.CreateOptions{})
	if err := ignoreExists(err); err != nil {
		return fmt.Errorf("create StatefulSet %s/%s: %w", n.Namespace, sts.Name, err)
	}
	return nil
}

// RollNodeWorkload sets the node's StatefulSet to the pod template the
// cluster's spec gives the node at version (image, resources, env,
// placement: objects.NodeStatefulSet), then deletes the pod if it still
// runs another version or another template revision. The StatefulSet uses
// OnDelete, so deleting the pod is what restarts it, and the version and
// revision annotations on the live pod tell whether that already happened.
// The delete carries the pod's UID as a precondition so that a pod
// recreated in between is never deleted by mistake.
func (o *Kube) RollNodeWorkload(ctx context.Context, n transitions.NodeTarget, version string) error {
	c, err := o.getCluster(ctx, n.Namespace, n.Cluster)
	if err != nil {
		return err
	}
	node, err := o.Anthill.OperatorV1alpha1().GlusterNodes(n.Namespace).Get(ctx, n.Name, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("get GlusterNode %s: %w", n.NodeKey(), err)
	}
	want := objects.NodeStatefulSet(c, node, version).Spec.Template
	revision := want.Annotations[objects.AnnotationRevision]
	stsName := objects.NodeStatefulSetName(n.Name)
	stsClient := o.Client.AppsV1().StatefulSets(n.Namespace)
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		sts, err := stsClient.Get(ctx, stsName, metav1.GetOptions{})
		if err != nil {
			return err
		}
		// The live template carries the API server's defaults, so it is
		// compared by the annotations that name what it was built from.
		if a := sts.Spec.Template.Annotations; a[objects.AnnotationVersion] == version && a[objects.AnnotationRevision] == revision {
			return nil
		}
		sts.Spec.Template = *want.DeepCopy()
		_, err = stsClient.Update(ctx, sts, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set StatefulSet %s/%s to version %q, revision %s: %w", n.Namespace, stsName, version, revision, err)
	}

	podName := objects.NodePodName(n.Name)
	pod, err := o.Client.CoreV1().Pods(n.Namespace).Get(ctx, podName, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		// The StatefulSet controller will create it from the new template.
		return nil
	case err != nil:
		return fmt.Errorf("get pod %s/%s: %w", n.Namespace, podName, err)
	}
	if pod.DeletionTimestamp != nil ||
		(pod.Annotations[objects.AnnotationVersion] == version && pod.Annotations[objects.AnnotationRevision] == revision) {
		return nil
	}
	err = o.Client.CoreV1().Pods(n.Namespace).Delete(ctx, podName, metav1.DeleteOptions{
		Preconditions: &metav1.Preconditions{UID: &pod.UID},
	})
	// Conflict: the UID precondition failed, a new pod already replaced
	// the one we saw.
	if err := ignoreNotFound(err); err != nil && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete pod %s/%s to restart it at version %q, revision %s: %w", n.Namespace, podName, version, revision, err)
	}
	return nil
}

// LeaveManagementService relabels the node's pod out of the management
// Service's selector with a merge patch. The StatefulSet does not reconcile
// labels of existing pods, so the change sticks until the pod is deleted.
func (o *Kube) LeaveManagementService(ctx context.Context, n transitions.NodeTarget) error {
	patch := fmt.Sprintf(`{"metadata":{"labels":{%q:%q}}}`, objects.LabelManagement, objects.ManagementLeaving)
	_, err := o.Client.CoreV1().Pods(n.Namespace).Patch(ctx, objects.NodePodName(n.Name), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("relabel pod %s/%s: %w", n.Namespace, objects.NodePodName(n.Name), err)
	}
	return nil
}

// DeleteNodeWorkload deletes the node's StatefulSet, then its brick PVCs:
// those labelled for the node, and those named after its claim templates
// (in case a label was lost). The PVC protection finalizer keeps a claim
// until the pod using it is gone.
func (o *Kube) DeleteNodeWorkload(ctx context.Context, n transitions.NodeTarget) error {
	stsName := objects.NodeStatefulSetName(n.Name)
	err := o.Client.AppsV1().StatefulSets(n.Namespace).Delete(ctx, stsName, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete StatefulSet %s/%s: %w", n.Namespace, stsName, err)
	}
	sel := labels.SelectorFromSet(labels.Set{objects.LabelCluster: n.Cluster, objects.LabelNode: n.Name})
	names := []string{objects.StateClaimName(n.Name)}
	for i := range n.Devices {
		names = append(names, objects.BrickClaimName(n.Name, i))
	}
	if err := o.deleteClaims(ctx, n.Namespace, sel, names); err != nil {
		return fmt.Errorf("delete PVCs of node %s: %w", n.NodeKey(), err)
	}
	return nil
}

// deleteClaims deletes the PVCs matching sel and those named in names.
func (o *Kube) deleteClaims(ctx context.Context, namespace string, sel labels.Selector, names []string) error {
	pvcs := o.Client.CoreV1().PersistentVolumeClaims(namespace)
	list, err := pvcs.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("list PVCs %q: %w", sel, err)
	}
	seen := map[string]bool{}
	for _, pvc := range list.Items {
		seen[pvc.Name] = true
		if pvc.DeletionTimestamp != nil {
			continue
		}
		if err := ignoreNotFound(pvcs.Delete(ctx, pvc.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete PVC %s: %w", pvc.Name, err)
		}
	}
	for _, name := range names {
		if seen[name] {
			continue
		}
		if err := ignoreNotFound(pvcs.Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete PVC %s: %w", name, err)
		}
	}
	return nil
}

// setVersionAnnotation records version on a pod template; it reports
// whether that changed anything.
func setVersionAnnotation(t *corev1.PodTemplateSpec, version string) bool {
	if t.Annotations[objects.AnnotationVersion] == version {
		return false
	}
	if t.Annotations == nil {
		t.Annotations = map[string]string{}
	}
	t.Annotations[objects.AnnotationVersion] = version
	return true
}
