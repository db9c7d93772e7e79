package node

import (
	"time"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/states"
)

// setNodeConditions derives Ready, Progressing and Degraded from the state
// (states.NodeMeaning) and the latest decision, so `kubectl get` and
// `kubectl wait` can follow a node without knowing the machine.
func setNodeConditions(node *operatorv1alpha1.GlusterNode, st fsm.State, d states.Decision, now time.Time) {
	machinestatus.PhaseConditionsOf(states.NodeMeaning(st).Condition).Set(&node.Status.Conditions, d, node.Generation, now)
}
