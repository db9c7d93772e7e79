package states

import (
	"fmt"
	"time"
)

// ReasonAutomationOff is the reason of a wait that holds a change an admin
// switched off in spec.automation.
const ReasonAutomationOff = "AutomationOff"

// AutomationOff says which of the changes anthill makes on its own an
// admin switched off (spec.automation), each apart from the others and
// from spec.paused, which holds them all. The zero value switches nothing
// off. The fields are named as in spec.automation.
type AutomationOff struct {
	// DisruptionBudgets: the disruption machine opens and locks no zone
	// and changes no PodDisruptionBudget or pod label.
	DisruptionBudgets bool
	// TemplateRollouts: a changed pod template (or CSI image) with the
	// version unchanged starts no rollout.
	TemplateRollouts bool
	// ClusterOptions: the cluster machine sets no spec.clusterOptions in
	// GD2.
	ClusterOptions bool
	// LostPodEviction: no pod stuck on a lost Kubernetes node is
	// force-deleted.
	LostPodEviction bool
	// MarkFailed: no node down longer than permissibleDowntime is marked
	// Failed.
	MarkFailed bool
	// ForceStartBricks: the heal machine starts no brick GD2 left offline
	// on a live peer.
	ForceStartBricks bool
}

// automationOff is the wait while spec.automation.<field> is false and
// the machine would be doing what doing names. Setting it true changes
// the cluster's spec, which wakes every machine, so after only matters for
// facts no watch event brings.
func automationOff(field, doing string, after time.Duration) Decision {
	return wait(ReasonAutomationOff, fmt.Sprintf("spec.automation.%s is false: not %s until it is set true.", field, doing), after)
}
