package states

import "github.com/gluster/anthill/fsm"

// nodeChanges is the node machine's change table: what each event and
// step whose action makes a lasting change puts on record in the node's
// ledger before it runs (records classifies them). Every entry names the
// node, the peer its status records, the state after the action and the
// decision's reason; what more it names is the row's.
var nodeChanges = changeTable[NodeSnapshot]{
	string(NodeEnterMaintenance): devices(LedgerDisableDevices, false),
	// A drain's disable is where the drain starts: its cause is the
	// drain's own reason.
	string(NodeDrain):          devices(LedgerDisableDevices, true),
	string(NodeRestart):        devices(LedgerDisableDevices, false),
	string(NodeResume):         devices(LedgerEnableDevices, false),
	string(NodeDisableDevices): devices(LedgerDisableDevices, false),
	string(NodeEnableDevices):  devices(LedgerEnableDevices, false),
	// A brick move names the brick and the peers GD2 may place its
	// replacement on.
	string(NodeMoveBrick): func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		c := s.change(LedgerReplaceBrick, d, state)
		c.Volume, c.Brick, c.TargetPeers, c.Cause = s.NextBrickVolume, s.NextBrickPath, s.NextBrickPlan.Targets, s.DrainCause
		return one(c)
	},
	string(NodeHealReplacement): func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		c := s.change(LedgerHealReplacement, d, state)
		c.Volume, c.Brick, c.Options, c.Cause = s.HealReplacementVolume, s.HealReplacementBrick, s.HealReplacementOptions, s.DrainCause
		return one(c)
	},
	string(NodeDeletePeer):     drainChange(LedgerDeletePeer),
	string(NodeDeleteWorkload): drainChange(LedgerDeleteWorkload),
	// A restart names the version the pod is restarted at.
	string(NodeRollWorkload): func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		c := s.change(LedgerRollWorkload, d, state)
		c.Version = s.TargetVersion
		return one(c)
	},
	string(NodeEvictLostPod): func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		return one(s.change(LedgerEvictLostPod, d, state))
	},
}

// change is the entry of action for the node: its name and recorded
// peer, the state after the action and the decision's reason.
func (s NodeSnapshot) change(action string, d Decision, state fsm.State) Change {
	return Change{Action: action, Node: s.Name, Peer: s.RecordedPeerID, State: string(state), Reason: d.Reason}
}

// devices is the row of a device change. One on a peer GD2 does not list
// alive changes nothing (the action skips it) and is not recorded.
// starts: the change starts a drain, whose cause is the decision's reason.
func devices(action string, starts bool) func(NodeSnapshot, Decision, fsm.State) []Change {
	return func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		if !s.PeerKnown || !s.PeerAlive {
			return nil
		}
		c := s.change(action, d, state)
		if starts {
			c.Cause = d.Reason
		}
		return one(c)
	}
}

// drainChange is the row of a step of the end of a drain, which names
// the drain's cause.
func drainChange(action string) func(NodeSnapshot, Decision, fsm.State) []Change {
	return func(s NodeSnapshot, d Decision, state fsm.State) []Change {
		c := s.change(action, d, state)
		c.Cause = s.DrainCause
		return one(c)
	}
}

// DecideNode returns the one thing the node machine should do next, with
// the lasting changes its action makes (NodeChanges) and those a
// transition puts on record ahead (NodeStateMeaning.RecordsAhead). It is
// pure: same snapshot, same decision.
func DecideNode(s NodeSnapshot) Decision {
	d := decideNode(s)
	d.Changes = NodeChanges(s, d)
	if to, ok := nodeDefinition().Target(d.Event, s.State); ok && d.Event != "" {
		d.Ahead = nodeAhead(s, to)
	}
	return d
}

// NodeChanges are the lasting changes decision d's action makes from
// snapshot s (Decision.Changes).
func NodeChanges(s NodeSnapshot, d Decision) []Change {
	return nodeChanges.changes(nodeDefinition(), s, s.State, d)
}

// NodeStepEffect is what a node's step changes in the node's status,
// beyond its message and conditions, once its action ran.
type NodeStepEffect struct {
	// Moved is the brick the step moved off the node: it is kept in
	// movedBricks (its replica set is watched until it heals) and in
	// leftBricks.
	Moved *BrickRef
	// HealsStarted are the moved bricks whose replacement heal GD2
	// accepted: their replacementHeals entries are set to now.
	HealsStarted []BrickRef
	// History: the step is recorded in the history like a transition
	// from the state to itself, to be found later (a forced pod deletion).
	History bool
}

// nodeStepEffects is, per step, what it changes in status (NodeStepEffect);
// a step it does not list changes nothing beyond message and conditions.
var nodeStepEffects = map[fsm.Step]func(NodeSnapshot) NodeStepEffect{
	NodeMoveBrick: func(s NodeSnapshot) NodeStepEffect {
		return NodeStepEffect{Moved: &BrickRef{Volume: s.NextBrickVolume, Path: s.NextBrickPath}}
	},
	// GD2 accepted the heal: the moves it serves may count as healed once
	// their replacements show the data.
	NodeHealReplacement: func(s NodeSnapshot) NodeStepEffect { return NodeStepEffect{HealsStarted: s.HealReplacementDue} },
	NodeEvictLostPod:    func(NodeSnapshot) NodeStepEffect { return NodeStepEffect{History: true} },
}

// NodeStepEffects is what step, run from snapshot s, changes in the
// node's status.
func NodeStepEffects(s NodeSnapshot, step fsm.Step) NodeStepEffect {
	if f, ok := nodeStepEffects[step]; ok {
		return f(s)
	}
	return NodeStepEffect{}
}

// AheadStep is a step whose change the transition into a state puts on
// record (NodeStateMeaning.RecordsAhead), with the reason it runs for.
type AheadStep struct {
	Step   fsm.Step
	Reason string
}

// nodeAhead are the changes a transition into to puts on record in its
// own write (NodeStateMeaning.RecordsAhead), from snapshot s.
func nodeAhead(s NodeSnapshot, to fsm.State) []Change {
	a := NodeMeaning(to).RecordsAhead
	if a.Step == "" {
		return nil
	}
	return nodeChanges.changes(nodeDefinition(), s, to, Decision{Step: a.Step, Reason: a.Reason})
}
