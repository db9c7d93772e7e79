package effects

import (
	"context"
	"slices"

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
