package states

import (
	"slices"

	"github.com/gluster/anthill/fsm"
)

// ScaleOrder is the plan of a scaleNodes step about to run (PlanScale over
// the live cluster and its live GlusterNodes), as its ledger entries name
// it.
type ScaleOrder struct {
	// Create names the template of each GlusterNode to create; a
	// template's entries are next to each other.
	Create []string
	// Decommission are the GlusterNodes asked to leave.
	Decommission []LeavingNode
}

// LeavingNode is a GlusterNode a scaling step asks to decommission: its
// name, its recorded peer, its template and its state.
type LeavingNode struct {
	Name, Peer, Template string
	State                string
}

// clusterChanges is the cluster machine's change table: what each step
// whose action makes a lasting change puts on record in the cluster's
// ledger before it runs. The entries name the cluster's phase and the
// decision's reason.
var clusterChanges = changeTable[ClusterSnapshot]{
	// The GD2 options it sets, "key=value", sorted; none when none
	// differ.
	string(ClusterApplyOptions): func(s ClusterSnapshot, d Decision, phase fsm.State) []Change {
		set := map[string]string{}
		for _, k := range s.OptionsDiffer {
			set[k] = s.ClusterOptions[k]
		}
		if len(set) == 0 {
			return nil
		}
		var kv []string
		for k, v := range set {
			kv = append(kv, k+"="+v)
		}
		slices.Sort(kv)
		return one(Change{Action: LedgerSetClusterOptions, Options: kv, State: string(phase), Reason: d.Reason})
	},
	// One createNodes entry per template that gains nodes, one
	// decommissionNode entry per node asked to leave (in its own state);
	// none until the plan is read live.
	string(ClusterScaleNodes): func(s ClusterSnapshot, d Decision, phase fsm.State) []Change {
		if s.Scale == nil {
			return nil
		}
		var out []Change
		for i, t := range s.Scale.Create {
			if i > 0 && s.Scale.Create[i-1] == t {
				out[len(out)-1].Count++
				continue
			}
			out = append(out, Change{Action: LedgerCreateNodes, Template: t, Count: 1, State: string(phase), Reason: d.Reason})
		}
		for _, n := range s.Scale.Decommission {
			out = append(out, Change{Action: LedgerDecommissionNode, Node: n.Name, Peer: n.Peer, Template: n.Template, State: n.State, Reason: d.Reason})
		}
		return out
	},
	// The CSI driver objects the snapshot found missing or out of date.
	string(ClusterEnsureDrivers): func(s ClusterSnapshot, d Decision, phase fsm.State) []Change {
		return one(Change{Action: LedgerEnsureCSIDrivers, Objects: slices.Clone(s.DriversMissing), State: string(phase), Reason: d.Reason})
	},
}

// ClusterChanges are the lasting changes decision d's action makes from
// snapshot s (Decision.Changes).
func ClusterChanges(s ClusterSnapshot, d Decision) []Change {
	return clusterChanges.changes(clusterDefinition(), s, s.State, d)
}

// upgradeChanges is the upgrade machine's change table: a client roll
// names the version the run rolls to, and records nothing when the run
// has none.
var upgradeChanges = changeTable[UpgradeSnapshot]{
	string(UpgradeRollClients): func(s UpgradeSnapshot, d Decision, state fsm.State) []Change {
		if s.ActiveTarget == "" {
			return nil
		}
		return one(Change{Action: LedgerRollCSIDrivers, Version: s.ActiveTarget, State: string(state), Reason: d.Reason})
	},
}

// UpgradeChanges are the lasting changes decision d's action makes from
// snapshot s (Decision.Changes).
func UpgradeChanges(s UpgradeSnapshot, d Decision) []Change {
	return upgradeChanges.changes(upgradeDefinition(), s, s.State, d)
}

// healChanges is the heal machine's change table: forcing bricks to start
// is one entry per peer whose bricks of the volume it starts, naming the
// peer's GlusterNode.
var healChanges = changeTable[HealSnapshot]{
	string(HealForceStartBricks): func(s HealSnapshot, d Decision, state fsm.State) []Change {
		out := make([]Change, 0, len(s.NotStarted.Peers))
		for i, p := range s.NotStarted.Peers {
			var node string
			if i < len(s.NotStarted.Nodes) {
				node = s.NotStarted.Nodes[i]
			}
			out = append(out, Change{Action: LedgerForceStartBricks, Node: node, Peer: p, Volume: s.Volume, State: string(state), Reason: d.Reason})
		}
		return out
	},
}

// HealChanges are the lasting changes decision d's action makes from
// snapshot s (Decision.Changes).
func HealChanges(s HealSnapshot, d Decision) []Change {
	return healChanges.changes(healDefinition(), s, s.State, d)
}
