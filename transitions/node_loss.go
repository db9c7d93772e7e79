package transitions

import (
	"context"
	"errors"
	"fmt"
)

// ErrNoLostPod means evictLostPod ran without the UID of the pod it is
// meant to delete; deleting "whatever pod has the name" could hit the
// replacement, so it refuses.
var ErrNoLostPod = errors.New("no UID of a lost pod to delete")

// evictLostPod force-deletes the node's pod stuck terminating on a lost
// Kubernetes node, so that the StatefulSet recreates it elsewhere. The
// decision (states.LostPod) established that it is safe; the UID
// precondition makes a repeat after a crash a no-op.
func evictLostPod(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.LostPodUID == "" {
		return NodeResult{}, ErrNoLostPod
	}
	if err := ops.Kube.ForceDeleteLostPod(ctx, n); err != nil {
		return NodeResult{}, fmt.Errorf("force-delete lost pod of node %s: %w", n.NodeKey(), err)
	}
	return NodeResult{}, nil
}
