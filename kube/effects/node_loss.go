package effects

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// ForceDeleteLostPod deletes the node's pod with grace period 0, and only
// if it still has the UID the decision saw.
func (o *Kube) ForceDeleteLostPod(ctx context.Context, n transitions.NodeTarget) error {
	uid := types.UID(n.LostPodUID)
	err := o.Client.CoreV1().Pods(n.Namespace).Delete(ctx, objects.NodePodName(n.Name), metav1.DeleteOptions{
		GracePeriodSeconds: ptr.To[int64](0),
		Preconditions:      &metav1.Preconditions{UID: &uid},
	})
	switch {
	case err == nil, apierrors.IsNotFound(err):
		return nil
	case apierrors.IsConflict(err):
		// The UID precondition failed: the StatefulSet already made a new
		// pod, which must not be touched.
		return nil
	}
	return fmt.Errorf("force-delete pod %s/%s: %w", n.Namespace, objects.NodePodName(n.Name), err)
}
