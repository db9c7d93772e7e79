package effects

import (
	"context"
	"slices"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// UpdateFunc writes an object's metadata and spec (not its status).
type UpdateFunc[T metav1.Object] func(ctx context.Context, obj T) (T, error)

// AddFinalizer puts name on obj (a copy the caller owns) unless obj is
// being deleted or already carries it, and reports whether it wrote. Every
// machine's finalizer goes on before anything is created, so deleting the
// object always passes through the machine's teardown.
func AddFinalizer[T metav1.Object](ctx context.Context, obj T, name string, update UpdateFunc[T]) (bool, error) {
	if obj.GetDeletionTimestamp() != nil || slices.Contains(obj.GetFinalizers(), name) {
		return false, nil
	}
	obj.SetFinalizers(append(obj.GetFinalizers(), name))
	_, err := update(ctx, obj)
	return true, err
}

// RemoveFinalizer takes name off obj (a copy the caller owns); an object
// already gone is success.
func RemoveFinalizer[T metav1.Object](ctx context.Context, obj T, name string, update UpdateFunc[T]) error {
	if !slices.Contains(obj.GetFinalizers(), name) {
		return nil
	}
	obj.SetFinalizers(slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool { return f == name }))
	_, err := update(ctx, obj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// UpdateGlusterNode writes a GlusterNode's metadata and spec through a.
func UpdateGlusterNode(a versioned.Interface) UpdateFunc[*operatorv1alpha1.GlusterNode] {
	return func(ctx context.Context, n *operatorv1alpha1.GlusterNode) (*operatorv1alpha1.GlusterNode, error) {
		return a.OperatorV1alpha1().GlusterNodes(n.Namespace).Update(ctx, n, metav1.UpdateOptions{})
	}
}

// UpdateGlusterCluster writes a GlusterCluster's metadata and spec
// through a.
func UpdateGlusterCluster(a versioned.Interface) UpdateFunc[*operatorv1alpha1.GlusterCluster] {
	return func(ctx context.Context, c *operatorv1alpha1.GlusterCluster) (*operatorv1alpha1.GlusterCluster, error) {
		return a.OperatorV1alpha1().GlusterClusters(c.Namespace).Update(ctx, c, metav1.UpdateOptions{})
	}
}

// DeleteGlusterNode deletes node's GlusterNode through a, only that very
// object (its UID is a precondition: a new node of the same name is never
// hit); one already gone is success.
func DeleteGlusterNode(ctx context.Context, a versioned.Interface, node *operatorv1alpha1.GlusterNode) error {
	uid := node.UID
	err := a.OperatorV1alpha1().GlusterNodes(node.Namespace).Delete(ctx, node.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	return nil
}
