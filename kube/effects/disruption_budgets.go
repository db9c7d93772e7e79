package effects

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/retry"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// ApplyDisruptionBudgets implements transitions.DisruptionKube. The order
// keeps every intermediate state at least as protective as the start or
// the end: label pods into budgets, lock every zone but the open one,
// label empty nodes' pods out, then open the one zone, and last delete the
// budgets of zones that no longer exist.
func (o *Kube) ApplyDisruptionBudgets(ctx context.Context, t transitions.DisruptionTarget) error {
	c, err := o.getCluster(ctx, t.Namespace, t.Cluster)
	if apierrors.IsNotFound(err) {
		return nil // the cluster is gone; its deletion removed the budgets
	}
	if err != nil {
		return err
	}
	if c.DeletionTimestamp != nil {
		return nil // never recreate budgets DeleteClusterInfra is removing
	}
	protect := func(cov transitions.PodCoverage) map[string]string {
		l := map[string]string{}
		if cov.Zone != "" {
			l[objects.LabelZone] = cov.Zone
		}
		if cov.HoldsBricks != nil && *cov.HoldsBricks {
			l[objects.LabelHoldsBricks] = "true"
		}
		return l
	}
	for _, cov := range t.Pods {
		if err := o.labelPod(ctx, t.Namespace, cov.Pod, protect(cov)); err != nil {
			return err
		}
	}
	for _, z := range t.Zones {
		if z != t.OpenZone {
			if err := o.ensureBudget(ctx, c, z, false); err != nil {
				return err
			}
		}
	}
	for _, cov := range t.Pods {
		if cov.HoldsBricks != nil && !*cov.HoldsBricks {
			if err := o.labelPod(ctx, t.Namespace, cov.Pod, map[string]string{objects.LabelHoldsBricks: objects.HoldsBricksFalse}); err != nil {
				return err
			}
		}
	}
	if t.OpenZone != "" {
		if !slices.Contains(t.Zones, t.OpenZone) {
			return fmt.Errorf("open zone %q is not one of the cluster's zones %v", t.OpenZone, t.Zones)
		}
		if err := o.ensureBudget(ctx, c, t.OpenZone, true); err != nil {
			return err
		}
	}
	return o.deleteBudgets(ctx, t.Namespace, t.Cluster, t.Zones)
}

// labelPod merges l into the pod's labels; a missing pod is success (its
// StatefulSet recreates it protected by default).
func (o *Kube) labelPod(ctx context.Context, namespace, pod string, l map[string]string) error {
	if len(l) == 0 {
		return nil
	}
	patch := map[string]any{"metadata": map[string]any{"labels": l}}
	raw, err := json.Marshal(patch)
	if err != nil {
		return err
	}
	_, err = o.Client.CoreV1().Pods(namespace).Patch(ctx, pod, types.MergePatchType, raw, metav1.PatchOptions{})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("label pod %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// ensureBudget creates zone's budget, or updates its spec when it differs.
func (o *Kube) ensureBudget(ctx context.Context, c *operatorv1alpha1.GlusterCluster, zone string, open bool) error {
	want := objects.DisruptionBudget(c, zone, open)
	pdbs := o.Client.PolicyV1().PodDisruptionBudgets(c.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		cur, err := pdbs.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = pdbs.Create(ctx, want, metav1.CreateOptions{})
			return err
		}
		if err != nil {
			return err
		}
		if objects.BudgetMatches(cur, c.Name, zone, open) && cur.Labels[objects.LabelZone] == zone {
			return nil
		}
		cur = cur.DeepCopy()
		cur.Spec.MinAvailable = nil
		cur.Spec.MaxUnavailable = want.Spec.MaxUnavailable
		cur.Spec.Selector = want.Spec.Selector
		if cur.Labels == nil {
			cur.Labels = map[string]string{}
		}
		for k, v := range want.Labels {
			cur.Labels[k] = v
		}
		_, err = pdbs.Update(ctx, cur, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("set PodDisruptionBudget %s/%s to maxUnavailable %d: %w", c.Namespace, want.Name, want.Spec.MaxUnavailable.IntValue(), err)
	}
	return nil
}

// deleteBudgets deletes the cluster's disruption budgets whose zone is not
// in keep (nil keep deletes all of them).
func (o *Kube) deleteBudgets(ctx context.Context, namespace, cluster string, keep []string) error {
	pdbs := o.Client.PolicyV1().PodDisruptionBudgets(namespace)
	sel := labels.SelectorFromSet(objects.BudgetLabels(cluster, ""))
	list, err := pdbs.List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return fmt.Errorf("list PodDisruptionBudgets of cluster %s/%s: %w", namespace, cluster, err)
	}
	for _, p := range list.Items {
		if z, ok := p.Labels[objects.LabelZone]; !ok || slices.Contains(keep, z) {
			continue
		}
		err := pdbs.Delete(ctx, p.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &p.UID}})
		if err := ignoreNotFound(err); err != nil {
			return fmt.Errorf("delete PodDisruptionBudget %s/%s: %w", namespace, p.Name, err)
		}
	}
	return nil
}
