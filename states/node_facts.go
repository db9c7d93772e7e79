package states

import (
	"cmp"
	"slices"
	"time"

	"github.com/gluster/anthill/fsm"
)

// NodeFacts is what the cluster-level policies know of one GlusterNode.
type NodeFacts struct {
	Name string
	Zone string
	// Template is the name of the node template the node was made from;
	// "" for a node added by hand.
	Template string
	// State is the node machine's state; "" is Pending.
	State fsm.State
	// Created is the GlusterNode's creation time.
	Created time.Time
	// Deleting: the GlusterNode has a deletion timestamp.
	Deleting bool
	// DecommissionRequested: the node carries the decommission request.
	DecommissionRequested bool
	// Version is the Gluster version the node was last seen running.
	Version string
	// StaleTemplate: the node was last seen running another pod template
	// revision than the cluster's spec gives it now (NodeSnapshot's
	// RunningRevision and TargetRevision).
	StaleTemplate bool
	// Bricks is the number of GD2 bricks on the node's peer, over every
	// volume, as the last volume list read showed them; 0 for a node with
	// no peer, and for every node when GD2 did not answer (ScaleDownOrder
	// then orders by age alone).
	Bricks int
}

// NodeCounts reports whether n counts toward its cluster's size: it is not
// being deleted, carries no decommission request, and its state counts
// (NodeStateMeaning.Counts). A node whose template is no longer in the spec
// still counts: a node missing from a list must not lose its data.
func NodeCounts(n NodeFacts) bool {
	return !n.Deleting && !n.DecommissionRequested && NodeMeaning(n.State).Counts()
}

// NodeTally is what the cluster and upgrade machines count of one
// cluster's nodes.
type NodeTally struct {
	// All: every node, leaving and gone ones included.
	All int
	// Leaving: nodes in a leaving state, whether they count or not.
	Leaving int
	// Counted: nodes that count toward the cluster's size (NodeCounts).
	Counted int
	// Of the counted nodes, those in each class. A counted node in a state
	// the definition does not know is in none of them.
	Joining, Online, Upgrading, Maintenance, Unhealthy int
	// ServerVersions: the distinct versions the counted nodes run, sorted;
	// a node that has not reported one adds none.
	ServerVersions []string
	// AtTarget: counted Online nodes that run the target version (any,
	// when the target is "") and their current template.
	AtTarget int
	// StaleTemplate: counted nodes whose template is not current.
	StaleTemplate int
	// Candidates: counted Online nodes that are not at the target, in
	// upgrade order: by zone, then by name.
	Candidates []NodeFacts
}

// CountNodes tallies one cluster's nodes by the meaning of their states
// (NodeMeaning). target is the version an upgrade run rolls to, "" when
// none runs or the run rolls only a changed template.
func CountNodes(nodes []NodeFacts, target string) NodeTally {
	var t NodeTally
	for _, n := range nodes {
		t.All++
		m := NodeMeaning(n.State)
		if m.Leaving() {
			t.Leaving++
		}
		if !NodeCounts(n) {
			continue
		}
		t.Counted++
		if n.StaleTemplate {
			t.StaleTemplate++
		}
		if n.Version != "" && !slices.Contains(t.ServerVersions, n.Version) {
			t.ServerVersions = append(t.ServerVersions, n.Version)
		}
		switch m.Class {
		case NodeClassJoining:
			t.Joining++
		case NodeClassOnline:
			t.Online++
			if (target == "" || n.Version == target) && !n.StaleTemplate {
				t.AtTarget++
			} else {
				t.Candidates = append(t.Candidates, n)
			}
		case NodeClassUpgrading:
			t.Upgrading++
		case NodeClassMaintenance:
			t.Maintenance++
		case NodeClassUnhealthy:
			t.Unhealthy++
		}
	}
	slices.Sort(t.ServerVersions)
	slices.SortFunc(t.Candidates, func(a, b NodeFacts) int {
		return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Name, b.Name))
	})
	return t
}

// FillCluster sets the cluster snapshot's node counts. The cluster counts
// an upgrading node as Online: a rolling upgrade stops one node at a time
// by design and must not degrade the cluster.
func (t NodeTally) FillCluster(s *ClusterSnapshot) {
	s.NodesAll, s.NodesLeaving, s.NodesTotal = t.All, t.Leaving, t.Counted
	s.NodesOnline, s.NodesMaintenance = t.Online+t.Upgrading, t.Maintenance
	s.NodesJoining, s.NodesUnhealthy = t.Joining, t.Unhealthy
}

// FillUpgrade sets the upgrade snapshot's node counts and server versions;
// the batch (NextNodes) is UpgradeBatch's.
func (t NodeTally) FillUpgrade(s *UpgradeSnapshot) {
	s.NodesTotal, s.NodesOnline, s.NodesUpgrading, s.NodesAtTarget = t.Counted, t.Online, t.Upgrading, t.AtTarget
	s.ServerVersions = t.ServerVersions
	s.ServersStaleTemplate = t.StaleTemplate
}
