package machinestatus

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// Reasons the dispatcher itself gives (the machines' reasons live in
// package states).
const (
	ReasonSettled = "Settled"
)

// PollWait is how long a sync waits for something outside any machine (a
// missing cluster object) before looking again.
const PollWait = 30 * time.Second

// PhaseConditions are the three standard conditions every anthill object
// carries beside its machine state.
type PhaseConditions struct{ ready, progressing, degraded bool }

// Set writes the three conditions with the decision's reason and message.
// SetStatusCondition keeps a condition's transition time while its status
// stays the same.
func (p PhaseConditions) Set(conds *[]metav1.Condition, d states.Decision, generation int64, now time.Time) {
	status := func(b bool) metav1.ConditionStatus {
		if b {
			return metav1.ConditionTrue
		}
		return metav1.ConditionFalse
	}
	reason := d.Reason
	if reason == "" {
		reason = ReasonSettled
	}
	for _, c := range []metav1.Condition{
		{Type: operatorv1alpha1.ConditionReady, Status: status(p.ready)},
		{Type: operatorv1alpha1.ConditionProgressing, Status: status(p.progressing)},
		{Type: operatorv1alpha1.ConditionDegraded, Status: status(p.degraded)},
	} {
		c.Reason, c.Message, c.ObservedGeneration = reason, engine.Truncate(d.Message, engine.MaxConditionMessage), generation
		c.LastTransitionTime = metav1.NewTime(now)
		apimeta.SetStatusCondition(conds, c)
	}
}

// PhaseConditionsOf is the three standard conditions a state's
// PhaseCondition stands for.
func PhaseConditionsOf(c states.PhaseCondition) PhaseConditions {
	return PhaseConditions{
		ready:       c == states.PhaseReady,
		progressing: c == states.PhaseProgressing,
		degraded:    c == states.PhaseDegraded,
	}
}
