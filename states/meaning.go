package states

import "github.com/gluster/anthill/fsm"

// PhaseCondition is which of the three standard conditions (Ready,
// Progressing, Degraded) a state sets True; the other two are False. With
// PhaseNone all three are False: the object is neither serving, nor on its
// way somewhere, nor in trouble (a node an admin holds, one that is gone).
type PhaseCondition string

// The phase conditions a state may set.
const (
	PhaseNone        PhaseCondition = ""
	PhaseReady       PhaseCondition = "Ready"
	PhaseProgressing PhaseCondition = "Progressing"
	PhaseDegraded    PhaseCondition = "Degraded"
)

// ConditionStatus is what a state says about one condition of its own:
// present with status True or False, or absent (removed from status). The
// present values are spelled as Kubernetes spells a condition's status.
type ConditionStatus string

// The statuses a state may give its condition.
const (
	ConditionAbsent ConditionStatus = ""
	ConditionTrue   ConditionStatus = "True"
	ConditionFalse  ConditionStatus = "False"
)

// meaningOf looks state s up in a machine's meaning table, the empty state
// being the machine's initial one; a state the table lacks gets unknown.
func meaningOf[M any](table map[fsm.State]M, initial, s fsm.State, unknown M) M {
	if s == "" {
		s = initial
	}
	if m, ok := table[s]; ok {
		return m
	}
	return unknown
}
