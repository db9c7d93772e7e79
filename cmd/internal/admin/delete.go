package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/machines/cluster"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func (r *root) deleteCommand() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "delete CLUSTER",
		Short: "delete a GlusterCluster through the operator's safe teardown",
		Long: "Deletes the GlusterCluster CLUSTER; the operator's finalizer then tears it down:\n" +
			"it waits while PersistentVolumes provisioned from the cluster exist, deletes the\n" +
			"GlusterNodes one at a time (each drains and detaches), then the CSI drivers, the\n" +
			"Services, etcd and the auth secret. First prints what will happen and what holds\n" +
			"it now, decided by the operator's own deletion policy, and asks for confirmation\n" +
			"unless --yes. With --wait, waits until the cluster is gone, saying what holds it;\n" +
			"when --timeout runs out first the exit code is 124.",
		Args:              exactArgs("CLUSTER"),
		ValidArgsFunction: r.completeClusters,
	}
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask for confirmation")
	waiting := addWaitFlags(cmd, "the GlusterCluster is gone")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := waiting.check(); err != nil {
			return err
		}
		ctx, name := cmd.Context(), args[0]
		kc, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		c, err := ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return notFound(err, kindGlusterCluster, ns, name)
		}
		if err := showDeletionPlan(ctx, kc, ac, c, r.out()); err != nil {
			return err
		}
		if c.DeletionTimestamp == nil {
			if !yes {
				ok, err := confirm(ctx, r.streams.In, r.streams.ErrOut, fmt.Sprintf("Delete GlusterCluster %s/%s?", ns, name))
				if err != nil {
					return err
				}
				if !ok {
					return errors.New("not confirmed; nothing changed")
				}
			}
			// The UID precondition deletes the cluster the plan was made
			// for, not one created since under the same name.
			err := ac.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &c.UID}})
			switch {
			case apierrors.IsNotFound(err):
				fmt.Fprintf(r.out(), "GlusterCluster %s/%s is already gone\n", ns, name)
				return nil
			case err != nil:
				return fmt.Errorf("delete GlusterCluster %s/%s: %w", ns, name, err)
			}
			fmt.Fprintf(r.out(), "GlusterCluster %s/%s: deletion requested; the operator's finalizer tears it down\n", ns, name)
		}
		if !waiting.wait {
			fmt.Fprintf(r.out(), "follow it with: %s status %s -n %s\n", r.name, name, ns)
			return nil
		}
		return waitClusterGone(ctx, ac, ns, name, c.UID, waiting.timeout, r.out())
	}
	return cmd
}

// showDeletionPlan prints what deleting c does and what holds it now, as
// the cluster machine decides it (cluster.PreviewDeletion) from the
// PersistentVolumes and GlusterNodes read here.
func showDeletionPlan(ctx context.Context, kc kubernetes.Interface, ac versioned.Interface, c *operatorv1alpha1.GlusterCluster, w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan: delete GlusterCluster %s/%s (mode %s, phase %s)\n", c.Namespace, c.Name, orDash(string(c.Spec.Mode)), orDash(string(c.Status.Phase)))
	if c.DeletionTimestamp != nil {
		fmt.Fprintf(&b, "It is already being deleted (since %s).\n", c.DeletionTimestamp.UTC().Format(time.RFC3339))
	}
	list, err := ac.OperatorV1alpha1().GlusterNodes(c.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list GlusterNodes in namespace %s: %w", c.Namespace, err)
	}
	nodes := make([]*operatorv1alpha1.GlusterNode, 0, len(list.Items))
	for i := range list.Items {
		nodes = append(nodes, &list.Items[i])
	}
	var pvs []*corev1.PersistentVolume
	pvList, pvErr := kc.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if pvErr == nil {
		for i := range pvList.Items {
			pvs = append(pvs, &pvList.Items[i])
		}
	}
	p := cluster.PreviewDeletion(c, pvs, nodes)
	writeDeletionPlan(&b, c, p, pvErr)
	_, err = fmt.Fprint(w, b.String())
	return err
}

// writeDeletionPlan writes the steps of the teardown and the decision
// that starts it. pvErr is why the PersistentVolumes could not be read.
func writeDeletionPlan(b *strings.Builder, c *operatorv1alpha1.GlusterCluster, p cluster.DeletionPreview, pvErr error) {
	fmt.Fprintf(b, "The operator's finalizer (%s) then:\n", objects.FinalizerCluster)
	fmt.Fprintf(b, "  1. waits while PersistentVolumes provisioned from the cluster exist: ")
	switch {
	case pvErr != nil:
		fmt.Fprintf(b, "unknown here (cannot list PersistentVolumes: %v); the operator checks them\n", pvErr)
	case len(p.PersistentVolumes) == 0:
		fmt.Fprintf(b, "none\n")
	default:
		fmt.Fprintf(b, "%d: %s\n", len(p.PersistentVolumes), strings.Join(p.PersistentVolumes, ", "))
	}
	if p.External {
		fmt.Fprintf(b, "  2. deletes the CSI drivers, the management Service and its EndpointSlices; the external pool, its peers and volumes are left as they are\n")
	} else {
		nodes := "none"
		if len(p.Nodes) > 0 {
			nodes = fmt.Sprintf("%d: %s", len(p.Nodes), strings.Join(p.Nodes, ", "))
		}
		fmt.Fprintf(b, "  2. deletes the GlusterNodes one at a time, each drained and detached first: %s\n", nodes)
		fmt.Fprintf(b, "  3. deletes the CSI drivers, the Services, etcd and the auth secret\n")
	}
	fmt.Fprintf(b, "  then the GlusterCluster is gone.\n")
	if c.Spec.Paused {
		fmt.Fprintf(b, "spec.paused is set: nothing is deleted until it is cleared.\n")
	}
	if p.Blocked() {
		fmt.Fprintf(b, "Blocked now: %s (%s)\n", p.Decision.Message, p.Decision.Reason)
	} else {
		fmt.Fprintf(b, "First step: %s\n", p.Decision.Message)
	}
}

// waitClusterGone polls GlusterCluster ns/name (uid) until it is gone,
// printing what holds it each time that changes, for at most timeout;
// running out is exit code 124.
func waitClusterGone(ctx context.Context, ac versioned.Interface, ns, name string, uid types.UID, timeout time.Duration, w io.Writer) error {
	var said, now string
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		c, err := ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			// A passing API server hiccup is not the end of a long wait.
			return false, nil
		case c.UID != uid:
			// Gone, and another cluster of the same name created since.
			return true, nil
		}
		now = deletionHold(c)
		if now != said {
			fmt.Fprintf(w, "waiting: %s\n", now)
			said = now
		}
		return false, nil
	})
	if err == nil {
		fmt.Fprintf(w, "GlusterCluster %s/%s is gone\n", ns, name)
		return nil
	}
	if ctx.Err() != nil && !errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return ctx.Err()
	}
	return &cli.ExitError{Code: cli.ExitTimeout, Err: fmt.Errorf("timed out after %s waiting for GlusterCluster %s/%s to be deleted (%s)", timeout, ns, name, now)}
}

// deletionHold says, from the cluster's status, where its deletion is:
// the phase and the reason and message of the operator's last decision.
func deletionHold(c *operatorv1alpha1.GlusterCluster) string {
	s := "phase " + orDash(string(c.Status.Phase))
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionProgressing); cond != nil && cond.Reason != "" {
		s += ": " + cond.Reason
		if cond.Message != "" {
			s += ": " + cond.Message
		}
	}
	if c.Status.Phase != operatorv1alpha1.ClusterPhase(states.ClusterDeleting) {
		s += " (the operator has not acted on the deletion yet)"
	}
	if c.Spec.Paused {
		s += "; spec.paused holds the teardown"
	}
	return s
}
