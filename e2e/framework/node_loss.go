package framework

import (
	"context"
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"
)

// lostHolder holds the Lease of a node LoseNode took away from kwok.
const lostHolder = "anthill-e2e-node-loss"

// LoseNode makes fake node name stop reporting, as a node that lost power
// or its network would: kwok stops renewing its Lease and stops updating
// the node and its pods, and the real node lifecycle controller then marks
// it NotReady (Unknown), taints it unreachable and evicts its pods after
// their tolerations. Pods evicted from it stay Terminating: no kubelet
// confirms they stopped.
//
// How: kwok manages a node only while it holds the node's Lease in
// kube-node-lease, and never takes over a Lease another holder renewed
// within its duration. LoseNode gives the Lease to another holder for a
// day. Before that it touches the node, so that kwok reschedules the
// node's next status heartbeat from now (ten minutes or more away) instead
// of playing one already due during the outage. Undo with RestoreNode.
func (cp *ControlPlane) LoseNode(ctx context.Context, name string) error {
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"e2e.anthill.gluster.org/lost-at":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := cp.Client.CoreV1().Nodes().Patch(ctx, name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("touch node %s: %w", name, err)
	}
	leases := cp.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		l, err := leases.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			l = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: corev1.NamespaceNodeLease}}
			l.Spec = lostLeaseSpec()
			_, err = leases.Create(ctx, l, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		l.Spec = lostLeaseSpec()
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("take the lease of node %s: %w", name, err)
	}
	cp.logf("node %s lost (kwok no longer holds its lease)", name)
	return nil
}

func lostLeaseSpec() coordinationv1.LeaseSpec {
	return coordinationv1.LeaseSpec{
		HolderIdentity:       ptr.To(lostHolder),
		LeaseDurationSeconds: ptr.To[int32](86400),
		RenewTime:            &metav1.MicroTime{Time: time.Now()},
	}
}

// RestoreNode gives a node LoseNode took back to kwok (it recreates and
// holds the Lease, reports the node Ready again, and finishes the pods
// left Terminating on it) and waits until the node is Ready and the node
// lifecycle controller has seen it so: until then the controller still
// marks every pod placed on the node not Ready. kwok, unlike a kubelet,
// never reports such a pod Ready again, so RestoreNode then does what the
// node's kubelet would on its first status sync after the outage: every
// pod still on the node whose containers are ready is reported Ready
// (readyAgain).
func (cp *ControlPlane) RestoreNode(ctx context.Context, name string) error {
	err := cp.Client.CoordinationV1().Leases(corev1.NamespaceNodeLease).Delete(ctx, name, metav1.DeleteOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("release the lease of node %s: %w", name, err)
	}
	cp.logf("node %s restored", name)
	if err := cp.WaitNodesReady(ctx, name); err != nil {
		return err
	}
	err = WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, taint := range n.Spec.Taints {
			if taint.Key == corev1.TaintNodeUnreachable || taint.Key == corev1.TaintNodeNotReady {
				return false, fmt.Errorf("node %s still has the taint %s", name, taint.Key)
			}
		}
		return true, nil
	})
	if err != nil {
		return err
	}
	return cp.readyAgain(ctx, name)
}

// readyAgain reports Ready every pod on node name that is not being
// deleted, has its containers ready and is marked not Ready, as a kubelet
// back in touch with the API server would.
func (cp *ControlPlane) readyAgain(ctx context.Context, name string) error {
	pods := cp.Client.CoreV1().Pods(metav1.NamespaceAll)
	list, err := pods.List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + name})
	if err != nil {
		return fmt.Errorf("list the pods of node %s: %w", name, err)
	}
	for _, p := range list.Items {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			cur, err := cp.Client.CoreV1().Pods(p.Namespace).Get(ctx, p.Name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if cur.DeletionTimestamp != nil || podCondition(cur, corev1.ContainersReady) != corev1.ConditionTrue || podCondition(cur, corev1.PodReady) != corev1.ConditionFalse {
				return nil
			}
			for i := range cur.Status.Conditions {
				if c := &cur.Status.Conditions[i]; c.Type == corev1.PodReady {
					c.Status, c.Reason, c.Message, c.LastTransitionTime = corev1.ConditionTrue, "", "", metav1.Now()
				}
			}
			_, err = cp.Client.CoreV1().Pods(cur.Namespace).UpdateStatus(ctx, cur, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("report pod %s/%s Ready again: %w", p.Namespace, p.Name, err)
		}
	}
	return nil
}

// podCondition is the status of p's condition of type ct ("" when it has
// none).
func podCondition(p *corev1.Pod, ct corev1.PodConditionType) corev1.ConditionStatus {
	for _, c := range p.Status.Conditions {
		if c.Type == ct {
			return c.Status
		}
	}
	return ""
}

// WaitNodeNotReady waits until the node lifecycle controller reports node
// name not Ready.
func (cp *ControlPlane) WaitNodeNotReady(ctx context.Context, name string, timeout time.Duration) error {
	return WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		n, err := cp.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if nodeReady(n) {
			return false, fmt.Errorf("node %s is still Ready", name)
		}
		return true, nil
	})
}
