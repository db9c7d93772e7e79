package objects

import (
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/transitions"
)

// Labels the disruption budgets select Gluster pods by.
const (
	// LabelHoldsBricks on a Gluster pod says whether GD2 listed a brick on
	// its node at the last look. Only the value HoldsBricksFalse takes a
	// pod out of every budget; a pod without the label (a new or recreated
	// pod) is protected until GD2 has been asked.
	LabelHoldsBricks = "operator.gluster.org/holds-bricks"
	HoldsBricksFalse = "false"
)

// DisruptionBudgetName is the PodDisruptionBudget over the Gluster pods of
// cluster in zone.
func DisruptionBudgetName(cluster, zone string) string { return cluster + "-zone-" + zone }

// BudgetLabels are the labels of every disruption budget of cluster; with
// zone set, of that zone's budget.
func BudgetLabels(cluster, zone string) map[string]string {
	l := ClusterLabels(cluster, ComponentGlusterNode)
	if zone != "" {
		l[LabelZone] = zone
	}
	return l
}

// budgetSelector selects the Gluster pods of cluster in zone that hold
// bricks, or might (NotIn matches pods without the label).
func budgetSelector(cluster, zone string) *metav1.LabelSelector {
	return &metav1.LabelSelector{
		MatchLabels: map[string]string{LabelCluster: cluster, LabelComponent: ComponentGlusterNode, LabelZone: zone},
		MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: LabelHoldsBricks, Operator: metav1.LabelSelectorOpNotIn, Values: []string{HoldsBricksFalse}},
		},
	}
}

// MaxUnavailable is 1 for the open zone's budget, 0 for a locked one.
func MaxUnavailable(open bool) *intstr.IntOrString {
	v := intstr.FromInt32(0)
	if open {
		v = intstr.FromInt32(1)
	}
	return &v
}

// DisruptionBudget is the PodDisruptionBudget over c's Gluster pods in
// zone: open allows one eviction, locked none. Pods that are not ready
// are evicted only while the budget is healthy (the API default), so a
// Gluster pod whose readiness flaps while its bricks serve is protected
// too.
func DisruptionBudget(c *operatorv1alpha1.GlusterCluster, zone string, open bool) *policyv1.PodDisruptionBudget {
	meta := clusterObjectMeta(c, DisruptionBudgetName(c.Name, zone), ComponentGlusterNode)
	meta.Labels = BudgetLabels(c.Name, zone)
	return &policyv1.PodDisruptionBudget{
		ObjectMeta: meta,
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: MaxUnavailable(open),
			Selector:       budgetSelector(c.Name, zone),
		},
	}
}

// withZone adds the zone label to a node pod's labels.
func withZone(l map[string]string, zone string) map[string]string {
	if zone != "" {
		l[LabelZone] = zone
	}
	return l
}

// BudgetMatches reports whether a live budget has the spec DisruptionBudget
// would give it.
func BudgetMatches(pdb *policyv1.PodDisruptionBudget, cluster, zone string, open bool) bool {
	want := MaxUnavailable(open)
	return pdb.DeletionTimestamp == nil && pdb.Spec.MinAvailable == nil && pdb.Spec.MaxUnavailable != nil &&
		*pdb.Spec.MaxUnavailable == *want && equality.Semantic.DeepEqual(pdb.Spec.Selector, budgetSelector(cluster, zone))
}

// podCovered reports whether pod already carries the labels cov asks for.
func podCovered(pod *corev1.Pod, cov transitions.PodCoverage) bool {
	if pod.Labels[LabelZone] != cov.Zone {
		return false
	}
	return cov.HoldsBricks == nil || pod.Labels[LabelHoldsBricks] == strconv.FormatBool(*cov.HoldsBricks)
}

// BudgetsInSync reports whether the live budgets and pods already match t.
func BudgetsInSync(t transitions.DisruptionTarget, pdbs []policyv1.PodDisruptionBudget, pods map[string]*corev1.Pod) bool {
	byZone := map[string]*policyv1.PodDisruptionBudget{}
	for i := range pdbs {
		z := pdbs[i].Labels[LabelZone]
		if !slices.Contains(t.Zones, z) {
			return false // a vanished zone's budget is still there
		}
		byZone[z] = &pdbs[i]
	}
	for _, z := range t.Zones {
		p, ok := byZone[z]
		if !ok || p.Name != DisruptionBudgetName(t.Cluster, z) || !BudgetMatches(p, t.Cluster, z, z == t.OpenZone) {
			return false
		}
	}
	for _, cov := range t.Pods {
		if p, ok := pods[cov.Pod]; ok && !podCovered(p, cov) {
			return false
		}
	}
	return true
}
