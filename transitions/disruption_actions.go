package transitions

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// DisruptionKube is what disruption actions need from Kubernetes.
type DisruptionKube interface {
	// ApplyDisruptionBudgets makes the cluster's PodDisruptionBudgets and
	// its Gluster pods' coverage labels match t: one budget per zone in
	// t.Zones, t.OpenZone's allowing one eviction and every other none,
	// budgets of other zones deleted, and each pod in t.Pods labelled.
	// Everything that protects a pod is written before anything that
	// allows an eviction, so a crash half-way leaves more protection, not
	// less. Repeating it changes nothing.
	ApplyDisruptionBudgets(ctx context.Context, t DisruptionTarget) error
}

// PodCoverage is how one Gluster pod must be labelled for the budgets.
type PodCoverage struct {
	Pod  string
	Zone string
	// HoldsBricks is what GD2 said about the pod's node; nil leaves the
	// label as it is (GD2 did not answer).
	HoldsBricks *bool
}

// DisruptionTarget is the set of budgets an action makes true.
type DisruptionTarget struct {
	Namespace string
	Cluster   string
	// Zones are the cluster's zones, one budget each.
	Zones []string
	// OpenZone is the zone whose budget allows one eviction; "" locks all.
	OpenZone string
	Pods     []PodCoverage
}

// DisruptionAction runs the side effect of one disruption event or step.
type DisruptionAction func(ctx context.Context, kube DisruptionKube, t DisruptionTarget) error

// DisruptionActions are the disruption machine's actions. Every event and
// step has the same one: make the budgets match the state being entered
// (or kept). The sync fills OpenZone from the target state, so the action
// cannot open a zone the decision did not.
var DisruptionActions = register(Actions[DisruptionAction]{
	Machine: states.DisruptionMachine,
	Events: map[fsm.Event]DisruptionAction{
		states.DisruptionOpenZone:  applyBudgets,
		states.DisruptionDisrupted: applyBudgets,
		states.DisruptionRecovered: applyBudgets,
		states.DisruptionLock:      applyBudgets,
	},
	Steps: map[fsm.Step]DisruptionAction{states.DisruptionApplyBudgets: applyBudgets},
})

func applyBudgets(ctx context.Context, kube DisruptionKube, t DisruptionTarget) error {
	if err := kube.ApplyDisruptionBudgets(ctx, t); err != nil {
		open := t.OpenZone
		if open == "" {
			open = "none"
		}
		return fmt.Errorf("apply disruption budgets of cluster %s/%s (open zone: %s): %w", t.Namespace, t.Cluster, open, err)
	}
	return nil
}
