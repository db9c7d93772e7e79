package states

import (
	"time"

	"github.com/gluster/anthill/fsm"
)

// Disruption states, one machine per GlusterCluster; full contract in
// DisruptionDefinition.
const (
	// DisruptionLocked: every zone's budget allows no eviction; left by open.
	DisruptionLocked fsm.State = "Locked"
	// DisruptionOpen: one zone's budget allows one eviction; left by disrupted, lock.
	DisruptionOpen fsm.State = "Open"
	// DisruptionRecovering: a disruption in the open zone is healing, every budget locked; left by recovered, lock.
	DisruptionRecovering fsm.State = "Recovering"
)

// Disruption events and steps; documented in DisruptionDefinition.
const (
	DisruptionOpenZone  fsm.Event = "open"
	DisruptionDisrupted fsm.Event = "disrupted"
	DisruptionRecovered fsm.Event = "recovered"
	DisruptionLock      fsm.Event = "lock"

	// Steps.
	DisruptionApplyBudgets fsm.Step = "applyBudgets"
)

// DisruptionMachine is the machine name used in logs, metrics and docs.
const DisruptionMachine = "disruption"

// DisruptionDefinition returns the disruption machine (a fresh copy per call).
func DisruptionDefinition() *fsm.Definition {
	return &fsm.Definition{
		Machine: DisruptionMachine,
		Doc: "One machine per GlusterCluster, persisted in `GlusterCluster.status.disruption`. It keeps one " +
			"PodDisruptionBudget per zone over the Gluster pods that hold bricks, so that voluntary evictions " +
			"(`kubectl drain`, the cluster autoscaler) take at most one such pod at a time, only from one zone, " +
			"and only while every node holding bricks is Online and every volume with a brick in that zone is " +
			"healed. A budget is either locked (`maxUnavailable: 0`) or open (`maxUnavailable: 1`); at most one " +
			"zone is open. Pods of nodes that GD2 says hold no brick are labelled out of every budget, so an " +
			"empty node never makes a drain hang. With `spec.automation.disruptionBudgets` false the machine " +
			"holds in its state (reason `AutomationOff`): no zone is opened or locked and no budget or pod label " +
			"changed. See docs/design/disruption-budgets.md.",
		Initial: DisruptionLocked,
		States: []fsm.StateDoc{
			{Name: DisruptionLocked, Doc: "Initial state, and entered by `lock` when the open zone must close for " +
				"a reason outside it (a node elsewhere down, GD2 unreachable, the zone gone) or to hand over to a " +
				"zone being drained. Every budget allows no eviction. Observes nodes, pods, budgets and a live " +
				"heal-info read of the candidate zone's volumes; the candidate is a zone with a cordoned or " +
				"tainted Kubernetes node running a Gluster pod that holds bricks, else the zone last open, else " +
				"the first zone holding bricks. Left by `open` once the candidate is safe. `applyBudgets` repairs " +
				"drifted budgets and pod labels."},
			{Name: DisruptionOpen, Doc: "Entered by `open` or `recovered`. The zone in `status.disruption.zone` " +
				"may lose one Gluster pod to an eviction; the others allow none. Observes the zone's pods (not " +
				"ready, being deleted, recreated since the zone opened), its budget's admitted evictions, its " +
				"nodes' states and its volumes' heal states. Left by `disrupted` as soon as anything in the zone " +
				"is disrupted, or by `lock` for a disruption elsewhere, GD2 unreachable, the zone gone, or a " +
				"hand-over to another zone being drained while this one is not. `applyBudgets` repairs drift."},
			{Name: DisruptionRecovering, Doc: "Entered by `disrupted`: a pod of the open zone was evicted (or " +
				"otherwise went down) or a volume with a brick there needs heal. Every budget is locked until " +
				"every node holding bricks is Online with a ready pod, no eviction is in flight, and every " +
				"volume with a brick in the zone is Healthy both in its heal machine and in a live heal-info " +
				"read. The zone is kept (sticky) so that a drain of the whole zone continues pod by pod. Left by " +
				"`recovered`, or by `lock` if the zone is gone. `applyBudgets` repairs drift."},
		},
		Events: []fsm.EventDoc{
			{Name: DisruptionOpenZone, Doc: "Fires in Locked when the candidate zone is safe to lose one pod. " +
				"Action: lock every other zone's budget, label the pods, then set the zone's budget to " +
				"`maxUnavailable: 1`."},
			{Name: DisruptionDisrupted, Doc: "Fires in Open when a pod of the open zone is not ready, is being " +
				"deleted or was recreated since the zone opened, when its budget lists an admitted eviction, " +
				"when a node of the zone holding bricks is not Online, or when a volume with a brick in the zone " +
				"is not Healthy. Action: lock every budget."},
			{Name: DisruptionRecovered, Doc: "Fires in Recovering when the zone is safe again. Action: set the " +
				"zone's budget back to `maxUnavailable: 1`, every other one locked."},
			{Name: DisruptionLock, Doc: "Fires in Open or Recovering when the zone must close for a reason " +
				"outside it: a disruption in another zone, GD2 unreachable, the zone gone, or a hand-over to " +
				"another zone being drained. Action: lock every budget."},
		},
		Transitions: []fsm.Transition{
			{Event: DisruptionOpenZone, From: []fsm.State{DisruptionLocked}, To: DisruptionOpen},
			{Event: DisruptionDisrupted, From: []fsm.State{DisruptionOpen}, To: DisruptionRecovering},
			{Event: DisruptionRecovered, From: []fsm.State{DisruptionRecovering}, To: DisruptionOpen},
			{Event: DisruptionLock, From: []fsm.State{DisruptionOpen, DisruptionRecovering}, To: DisruptionLocked},
		},
		Steps: []fsm.StepDoc{
			{Name: DisruptionApplyBudgets, In: []fsm.State{DisruptionLocked, DisruptionOpen, DisruptionRecovering},
				Doc: "Make the budgets and the pods' coverage labels match the state: one budget per zone (the " +
					"open zone's allows one eviction, every other none), budgets of vanished zones deleted, each " +
					"Gluster pod labelled with its zone and with whether its node holds bricks. Protecting labels " +
					"and locks are written before anything that allows an eviction."},
		},
	}
}

// DisruptionZone is what DecideDisruption knows about one zone.
type DisruptionZone struct {
	Name string
	// BrickNodes counts the zone's nodes whose GD2 peer holds bricks.
	BrickNodes int
	// Disrupted describes each brick-holding node of the zone that is
	// disrupted: not Online, its pod missing, not ready or being deleted,
	// or (in Open) its pod recreated since the zone opened.
	Disrupted []string
	// UnhealthyVolumes are the volumes with a brick in the zone whose heal
	// machine is not Healthy.
	UnhealthyVolumes []string
	// EvictionsInFlight counts the pods the zone's budget lists as
	// disrupted: an eviction was admitted and the pod is not gone yet.
	EvictionsInFlight int
	// DrainRequested: a brick-holding pod of the zone runs on a Kubernetes
	// node that is cordoned, or tainted NoSchedule/NoExecute by a taint the
	// pod does not tolerate (drain, cluster autoscaler, Karpenter).
	DrainRequested bool
	// HealChecked: heal-info of every volume with a brick in the zone was
	// read live this sync; HealNotClean lists those with entries pending,
	// in split-brain or a brick unreachable.
	HealChecked  bool
	HealNotClean []string
}

// disrupted reports whether anything in the zone is disrupted.
func (z DisruptionZone) disrupted() bool {
	return len(z.Disrupted) > 0 || len(z.UnhealthyVolumes) > 0 || z.EvictionsInFlight > 0
}

// DisruptionSnapshot is what DecideDisruption needs about one cluster.
type DisruptionSnapshot struct {
	State fsm.State
	// Zone is the persisted zone: open (Open), recovering (Recovering), or
	// last open (Locked).
	Zone string
	Now  time.Time
	// GD2Reachable: the volume and peer lists were read this sync. Without
	// them nothing is known about which pods hold bricks.
	GD2Reachable bool
	// Zones are the cluster's zones, sorted by name.
	Zones []DisruptionZone
	// BudgetsInSync: every budget and pod label already matches the state.
	BudgetsInSync bool
	// Off: what spec.automation switched off (DisruptionBudgets is the
	// disruption machine's).
	Off AutomationOff
}

// zone returns the named zone, if the cluster has it.
func (s DisruptionSnapshot) zone(name string) (DisruptionZone, bool) {
	for _, z := range s.Zones {
		if z.Name == name {
			return z, true
		}
	}
	return DisruptionZone{}, false
}

// DisruptionStateMeaning is what one disruption state means outside its
// machine.
type DisruptionStateMeaning struct {
	// ZoneOpen: the zone in status.disruption.zone may lose a pod to an
	// eviction (its budget allows one); in every other state all budgets
	// are locked.
	ZoneOpen bool
}

// disruptionMeanings holds one entry per state of DisruptionDefinition.
var disruptionMeanings = map[fsm.State]DisruptionStateMeaning{
	DisruptionLocked:     {},
	DisruptionOpen:       {ZoneOpen: true},
	DisruptionRecovering: {},
}

// DisruptionMeaning returns what disruption state s means. The empty state
// is Locked; a state the definition does not know opens nothing.
func DisruptionMeaning(s fsm.State) DisruptionStateMeaning {
	return meaningOf(disruptionMeanings, DisruptionLocked, s, DisruptionStateMeaning{})
}
