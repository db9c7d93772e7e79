package states

import "github.com/gluster/anthill/fsm"

// UpgradeStateMeaning is what one upgrade state means outside its machine.
type UpgradeStateMeaning struct {
	// Upgrading is the status of the cluster's Upgrading condition: True
	// while a run rolls, False (with the decision's reason) while it is
	// held or just finished, absent when no run is under way.
	Upgrading ConditionStatus
	// Prompt: a sync that fires into the state decides again at once
	// from the object its write returned (engine.Runner.Rounds): a run
	// requested is validated, and a run validated picks its first batch,
	// in the sync that requested it.
	Prompt bool
	// Target is which version is the run's target in the state: none
	// before a run and after it, the spec's while it is validated, then
	// the one validation fixed (status.upgrade.toVersion).
	Target RunTarget
}

// RunTarget says which version is an upgrade run's target in a state.
type RunTarget string

// The run targets of the upgrade states.
const (
	// NoRunTarget: no run is under way, and no version is its target.
	NoRunTarget RunTarget = ""
	// SpecTarget: the run is being validated; its target is the version
	// the spec asks for, not fixed yet.
	SpecTarget RunTarget = "Spec"
	// ValidatedTarget: the run's target is the one validation fixed.
	ValidatedTarget RunTarget = "Validated"
)

// upgradeMeanings holds one entry per state of UpgradeDefinition.
var upgradeMeanings = map[fsm.State]UpgradeStateMeaning{
	UpgradeIdle:           {Upgrading: ConditionAbsent},
	UpgradeValidating:     {Upgrading: ConditionTrue, Prompt: true, Target: SpecTarget},
	UpgradeRollingServers: {Upgrading: ConditionTrue, Prompt: true, Target: ValidatedTarget},
	UpgradeRollingClients: {Upgrading: ConditionTrue, Target: ValidatedTarget},
	UpgradeComplete:       {Upgrading: ConditionFalse, Target: ValidatedTarget},
	UpgradeBlocked:        {Upgrading: ConditionFalse, Target: ValidatedTarget},
	UpgradePaused:         {Upgrading: ConditionFalse, Target: ValidatedTarget},
}

// UpgradeMeaning returns what upgrade state s means. The empty state is
// Idle; a state the definition does not know shows as rolling.
func UpgradeMeaning(s fsm.State) UpgradeStateMeaning {
	return meaningOf(upgradeMeanings, UpgradeIdle, s, UpgradeStateMeaning{Upgrading: ConditionTrue})
}
