package states

import (
	"sync"

	"github.com/gluster/anthill/fsm"
)

// Change is one lasting change an action is about to make, as it goes on
// record in the ledger before the action runs (Decision.Changes): plain
// data, which the status ledger keeps with the time it was put on record.
// Which events and steps make one, and what each names, is the change
// table of their machine (nodeChanges and its kin, beside records).
type Change struct {
	// Action is the ledger action (Ledger*).
	Action string
	// Node and Peer are the GlusterNode the change is made for and its
	// GD2 peer; Node is empty for a change of the whole cluster.
	Node, Peer string
	// Volume and Brick: the moved brick (replaceBrick, healReplacement),
	// or the volume whose offline bricks are started (forceStartBricks).
	Volume, Brick string
	// TargetPeers are the peers a brick's replacement may go to.
	TargetPeers []string
	// Version: the version a node is restarted at, or the CSI clients
	// rolled to.
	Version string
	// Template and Count: the node template GlusterNodes are created from
	// and how many (createNodes), or a decommissioned node's template.
	Template string
	Count    int32
	// Objects are the CSI driver objects created, as "Kind name".
	Objects []string
	// Options are the options set, as "key=value", sorted.
	Options []string
	// State is the node's state, or the cluster's phase, after the action
	// (an event's target, the state a step runs in); a decommissioned
	// node's own state.
	State string
	// Reason is the decision's reason; Cause the reason of the transition
	// that started the node's drain.
	Reason, Cause string
}

// changeTable is a machine's change table: for each event or step (by
// name) whose action makes a lasting change, the changes it makes, from
// the machine's snapshot, the decision and the state after the action.
// A builder may return none (a device change on a dead peer changes
// nothing).
type changeTable[S any] map[string]func(s S, d Decision, state fsm.State) []Change

// changes are the changes d's action makes from snapshot s in state
// (the persisted one), by the machine's table: none for a wait, or for an
// event or step the table does not list.
func (t changeTable[S]) changes(def *fsm.Definition, s S, state fsm.State, d Decision) []Change {
	name, after := string(d.Step), state
	if d.Event != "" {
		to, ok := def.Target(d.Event, state)
		if !ok {
			return nil
		}
		name, after = string(d.Event), to
	}
	build, ok := t[name]
	if !ok || name == "" {
		return nil
	}
	return build(s, d, after)
}

// one is a single change.
func one(c Change) []Change { return []Change{c} }

// The definitions the change tables look an event's target up in, built
// once.
var (
	nodeDefinition    = sync.OnceValue(NodeDefinition)
	clusterDefinition = sync.OnceValue(ClusterDefinition)
	upgradeDefinition = sync.OnceValue(UpgradeDefinition)
	healDefinition    = sync.OnceValue(HealDefinition)
)
