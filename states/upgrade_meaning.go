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
}

// upgradeMeanings holds one entry per state of UpgradeDefinition.
var upgradeMeanings = map[fsm.State]UpgradeStateMeaning{
	UpgradeIdle:           {Upgrading: ConditionAbsent},
	UpgradeValidating:     {Upgrading: ConditionTrue, Prompt: true},
	UpgradeRollingServers: {Upgrading: ConditionTrue, Prompt: true},
	UpgradeRollingClients: {Upgrading: ConditionTrue},
	UpgradeComplete:       {Upgrading: ConditionFalse},
	UpgradeBlocked:        {Upgrading: ConditionFalse},
	UpgradePaused:         {Upgrading: ConditionFalse},
}

// UpgradeMeaning returns what upgrade state s means. The empty state is
// Idle; a state the definition does not know shows as rolling.
func UpgradeMeaning(s fsm.State) UpgradeStateMeaning {
	return meaningOf(upgradeMeanings, UpgradeIdle, s, UpgradeStateMeaning{Upgrading: ConditionTrue})
}
