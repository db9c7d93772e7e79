package kube

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// Reasons the dispatcher itself gives (the machines' reasons live in
// package states).
const (
	ReasonActionFailed = "ActionFailed"
	ReasonSettled      = "Settled"
)

// pollWait is how long a sync waits for something outside any machine (a
// missing cluster object) before looking again.
const pollWait = 30 * time.Second

// setNodeConditions derives Ready, Progressing and Degraded from the state
// and the latest decision, so `kubectl get` and `kubectl wait` can follow a
// node without knowing the machine.
func setNodeConditions(node *operatorv1alpha1.GlusterNode, st fsm.State, d states.Decision, now time.Time) {
	ready, progressing, degraded := metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionFalse
	switch st {
	case states.NodeOnline:
		ready = metav1.ConditionTrue
	case states.NodeMaintenance:
	case states.NodeOffline, states.NodeFailed, states.NodeAbandoned:
		degraded = metav1.ConditionTrue
	case states.NodeDeleted:
	default:
		progressing = metav1.ConditionTrue
	}
	reason := d.Reason
	if reason == "" {
		reason = ReasonSettled
	}
	msg := truncate(d.Message, 1024)
	for _, c := range []metav1.Condition{
		{Type: operatorv1alpha1.ConditionReady, Status: ready},
		{Type: operatorv1alpha1.ConditionProgressing, Status: progressing},
		{Type: operatorv1alpha1.ConditionDegraded, Status: degraded},
	} {
		c.Reason, c.Message, c.ObservedGeneration = reason, msg, node.Generation
		c.LastTransitionTime = metav1.NewTime(now)
		apimeta.SetStatusCondition(&node.Status.Conditions, c)
	}
}
