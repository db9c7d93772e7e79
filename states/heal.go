package states

import (
	"time"

	"github.com/gluster/anthill/fsm"
)

// Heal states, one machine per volume; full contract in HealDefinition.
const (
	// HealUnknown: no trustworthy heal-info reading; left by healed, pendingFound, splitBrainFound.
	HealUnknown fsm.State = "Unknown"
	// HealHealthy: nothing to heal; left by pendingFound, splitBrainFound, lostContact.
	HealHealthy fsm.State = "Healthy"
	// HealHealPending: entries or down bricks need heal; left by startHeal, healed, splitBrainFound, lostContact.
	HealHealPending fsm.State = "HealPending"
	// HealHealing: heal triggered, watching progress; left by healed, healStalled, splitBrainFound, lostContact.
	HealHealing fsm.State = "Healing"
	// HealSplitBrain: entries in split-brain, needs the admin; left by healed or pendingFound.
	HealSplitBrain fsm.State = "SplitBrain"
)

// Heal events; documented in HealDefinition.
const (
	HealHealed          fsm.Event = "healed"
	HealPendingFound    fsm.Event = "pendingFound"
	HealStartHeal       fsm.Event = "startHeal"
	HealStalled         fsm.Event = "healStalled"
	HealSplitBrainFound fsm.Event = "splitBrainFound"
	HealLostContact     fsm.Event = "lostContact"

	// HealForceStartBricks is a step of HealPending: start the bricks GD2
	// left offline on a live peer (volume start with force-start-bricks).
	HealForceStartBricks fsm.Step = "forceStartBricks"
)

// HealMachine is the machine name used in logs, metrics and docs.
const HealMachine = "heal"

// HealDefinition returns the heal machine (a fresh copy per call).
func HealDefinition() *fsm.Definition {
	return &fsm.Definition{
		Machine: HealMachine,
		Doc: "One machine per volume, persisted in `GlusterCluster.status.volumes[].heal`. It tracks GD2's " +
			"self-heal view of the volume (`heal-info` summary) and gates the operations that stop or move " +
			"bricks: upgrades, drains and the PodDisruptionBudget. Volumes without redundancy (plain " +
			"distribute) have nothing to heal and sit in Healthy. The machine has no terminal state: its " +
			"entry is removed when the volume is.",
		Initial: HealUnknown,
		States: []fsm.StateDoc{
			{Name: HealUnknown, Doc: "Initial state of a newly observed volume, and entered by `lostContact` " +
				"when heal-info cannot be read (GD2 unreachable, volume stopped, heal-info failing). Blocks " +
				"upgrades and drains, because nothing is known. Left by `healed`, `pendingFound` or " +
				"`splitBrainFound` on the next good reading."},
			{Name: HealHealthy, Doc: "Entered by `healed`: heal-info reads cleanly with no entries pending, none " +
				"in split-brain and every brick reachable. Left by `pendingFound`, `splitBrainFound` or `lostContact`."},
			{Name: HealHealPending, Doc: "Entered by `pendingFound` (entries pending heal, or a brick unreachable " +
				"so copies diverge) or by `healStalled`. Left by `startHeal` once every brick is reachable, by " +
				"`healed` if the self-heal daemon finished on its own, or by `splitBrainFound` or `lostContact`. " +
				"Bricks GD2 left offline on a live peer (started before they were mounted) are started here by " +
				"the `forceStartBricks` step once they have been so for `failurePolicy.offlineGrace`."},
			{Name: HealHealing, Doc: "Entered by `startHeal`, whose action asked GD2 to heal the volume (also when GD2 answered " +
				"that it could not hand the trigger to a node's self-heal daemon, step `selfheal.Heal`: the daemons crawl on " +
				"their own, so the heal is watched all the same, with reason HealTriggerFailed). Watches " +
				"the pending count fall. Left by `healed` at zero, by `healStalled` if there is no progress for " +
				"the stall timeout or a brick drops out, or by `splitBrainFound` or `lostContact`."},
			{Name: HealSplitBrain, Doc: "Entered by `splitBrainFound`. Some files have conflicting copies that " +
				"only an admin can resolve (GD2's split-brain resolution endpoints); the AnthillVolumeSplitBrain alert fires (runbook: docs/runbooks/AnthillVolumeSplitBrain.md) and upgrades " +
				"and drains stay blocked. A lost heal-info reading does not leave this state, so the alert does " +
				"not flap. Left by `healed` or `pendingFound` once no entries are in split-brain."},
		},
		Events: []fsm.EventDoc{
			{Name: HealHealed, Doc: "Fires on a clean reading: nothing pending, nothing in split-brain, every brick reachable (or the volume has no redundancy). No action."},
			{Name: HealPendingFound, Doc: "Fires when entries are pending heal or a brick is unreachable. No action."},
			{Name: HealStartHeal, Doc: "Fires when entries are pending and every brick is reachable. Action: trigger an index heal of the volume; " +
				"a trigger that failed only at GD2's `selfheal.Heal` step (the self-heal daemon RPC) is not a failed action, since the daemons keep crawling."},
			{Name: HealStalled, Doc: "Fires when a heal made no progress for the stall timeout, or a brick dropped out during it; the heal will be triggered again from HealPending. No action."},
			{Name: HealSplitBrainFound, Doc: "Fires when any entry is in split-brain. No action; the state raises the AnthillVolumeSplitBrain alert."},
			{Name: HealLostContact, Doc: "Fires when heal-info cannot be read. No action."},
		},
		Steps: []fsm.StepDoc{
			{Name: HealForceStartBricks, In: []fsm.State{HealHealPending}, Doc: "Runs when some bricks of the volume have been " +
				"offline on a peer GD2 lists alive for `failurePolicy.offlineGrace` (a restarted GD2 that started its bricks " +
				"before mounting them leaves them so), every peer of the volume is alive, and no node holding one of its " +
				"bricks is being drained, stopped or restarted by an upgrade, held in maintenance or leaving. Action: start " +
				"the volume with `force-start-bricks`, which mounts and starts the bricks that are not running (a started " +
				"volume only; repeating it starts nothing new). Recorded in the history and the ledger with its reason. " +
				"Held with reason `AutomationOff` while `spec.automation.forceStartBricks` is false."},
		},
		Transitions: []fsm.Transition{
			{Event: HealHealed, From: []fsm.State{HealUnknown, HealHealPending, HealHealing, HealSplitBrain}, To: HealHealthy},
			{Event: HealPendingFound, From: []fsm.State{HealUnknown, HealHealthy, HealSplitBrain}, To: HealHealPending},
			{Event: HealStartHeal, From: []fsm.State{HealHealPending}, To: HealHealing},
			{Event: HealStalled, From: []fsm.State{HealHealing}, To: HealHealPending},
			{Event: HealSplitBrainFound, From: []fsm.State{HealUnknown, HealHealthy, HealHealPending, HealHealing}, To: HealSplitBrain},
			{Event: HealLostContact, From: []fsm.State{HealHealthy, HealHealPending, HealHealing}, To: HealUnknown},
		},
	}
}

// HealSnapshot is what DecideHeal needs about one volume.
type HealSnapshot struct {
	State      fsm.State
	StateSince time.Time
	Now        time.Time
	// Volume is the volume's name.
	Volume string

	// Redundant: the volume is replicated or dispersed, so heal applies.
	Redundant bool
	// Started: the volume is started (heal-info needs it).
	Started bool
	// HealInfoOK: the heal-info summary was read this sync. When false the
	// counters below are meaningless.
	HealInfoOK bool
	// PendingEntries: sum of entries pending heal over reachable bricks.
	PendingEntries int64
	// SplitBrainEntries: sum of entries in split-brain over reachable bricks.
	SplitBrainEntries int64
	// BricksUnreachable: bricks heal-info could not reach (status not
	// Connected, or a counter of -1).
	BricksUnreachable int
	// LastProgressAt: when PendingEntries last decreased while Healing
	// (recorded in status); zero means never, and StateSince is used.
	LastProgressAt time.Time
	// LastReading: in Healing, the reading of PendingEntries before this
	// one with a different count (kept in memory by the heal machine; zero
	// when there is none), from which the heal's end is judged.
	LastReading HealReading
	// StallTimeout: how long Healing may go without progress.
	StallTimeout time.Duration
	// SelfHealOff: the volume's self-heal daemon option is off (GD2's
	// default for replicate volumes), so GD2 refuses a heal trigger.
	SelfHealOff bool
	// TriggerNotDelivered: the heal being watched (Healing) was entered by
	// a trigger GD2 could not hand to the self-heal daemon (code 2 at
	// selfheal.Heal). The daemons go on crawling on their own, so the
	// machine watches the pending count as usual and says why.
	TriggerNotDelivered bool
	// NotStarted: bricks GD2 left offline on a live peer, which the
	// forceStartBricks step starts (DecideHeal, HealPending).
	NotStarted BricksNotStarted
	// Off: what spec.automation switched off (ForceStartBricks is the
	// heal machine's).
	Off AutomationOff
}
