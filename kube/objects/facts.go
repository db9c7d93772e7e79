package objects

import (
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// This file converts API objects into the fact structs package states
// decides over. It makes no decision of its own.

// NodeFacts is what the cluster-level policies know of n.
func NodeFacts(n *operatorv1alpha1.GlusterNode) states.NodeFacts {
	return states.NodeFacts{
		Name: n.Name, Zone: n.Spec.Zone, State: fsm.State(n.Status.State),
		Created:               n.CreationTimestamp.Time,
		Deleting:              n.DeletionTimestamp != nil,
		DecommissionRequested: n.Annotations[AnnotationRequest] == RequestDecommission,
		Version:               n.Status.Version,
	}
}

// ClusterNodeFacts is the facts of those of nodes whose spec.cluster is
// c (nodes added by hand included), with whether each runs the pod
// template c's spec gives it now. A node still joining with no
// status.revision (a new node, whose pod was never seen ready) is not
// stale: its workload is created from the current template, and counting
// it would start a rollout nobody asked for on every new cluster and every
// scale-up. A node past joining with no revision (one an operator from
// before revisions ran) is.
func ClusterNodeFacts(nodes []*operatorv1alpha1.GlusterNode, c *operatorv1alpha1.GlusterCluster) []states.NodeFacts {
	var out []states.NodeFacts
	for _, n := range nodes {
		if n.Spec.Cluster == c.Name {
			f := NodeFacts(n)
			joining := n.Status.Revision == "" && states.NodeMeaning(f.State).Class == states.NodeClassJoining
			f.StaleTemplate = !joining && n.Status.Revision != NodeTemplateRevision(c, n)
			out = append(out, f)
		}
	}
	return out
}

// TemplateFacts is what the scaling policy knows of a cluster's templates:
// their bounds from the spec and, in automatic mode, the count the
// autoscaler recorded for each in status.autoscaling.
func TemplateFacts(c *operatorv1alpha1.GlusterCluster) []states.TemplateFacts {
	recorded := map[string]int{}
	if a := c.Status.Autoscaling; a != nil && c.Spec.Mode == operatorv1alpha1.ClusterModeAutomatic {
		for _, t := range a.Templates {
			recorded[t.Name] = int(t.Desired)
		}
	}
	ts := c.Spec.NodeTemplates
	out := make([]states.TemplateFacts, len(ts))
	for i, t := range ts {
		out[i] = states.TemplateFacts{Zone: t.Zone, MinNodes: int(ptr.Deref(t.MinNodes, 0))}
		if t.Nodes != nil {
			out[i].Nodes = ptr.To(int(*t.Nodes))
		}
		if t.MaxNodes != nil {
			out[i].MaxNodes = ptr.To(int(*t.MaxNodes))
		}
		if n, ok := recorded[t.Name]; ok {
			out[i].Desired = ptr.To(n)
		}
	}
	return out
}

// BrickCounts is the number of GD2 bricks on each peer, by peer id, as
// the last volume list read showed them; nil when GD2 did not answer.
type BrickCounts map[string]int

// ScaleDownOrder is states.ScaleDownOrder over GlusterNodes of one
// namespace (their names are unique), each node holding the bricks
// bricks counts on its peer (status.peerID).
func ScaleDownOrder(nodes []*operatorv1alpha1.GlusterNode, bricks BrickCounts) []*operatorv1alpha1.GlusterNode {
	byName := make(map[string]*operatorv1alpha1.GlusterNode, len(nodes))
	facts := make([]states.NodeFacts, len(nodes))
	for i, n := range nodes {
		byName[n.Name], facts[i] = n, NodeFacts(n)
		facts[i].Bricks = bricks.Of(n)
	}
	out := make([]*operatorv1alpha1.GlusterNode, len(nodes))
	for i, f := range states.ScaleDownOrder(facts) {
		out[i] = byName[f.Name]
	}
	return out
}

// CountBricks counts the bricks of vols on each peer.
func CountBricks(vols []gd2.Volume) BrickCounts {
	out := BrickCounts{}
	for i := range vols {
		for _, b := range vols[i].Bricks() {
			out[b.PeerID]++
		}
	}
	return out
}

// Of is the number of bricks on n's peer; 0 for a node with no peer yet.
func (b BrickCounts) Of(n *operatorv1alpha1.GlusterNode) int {
	if n.Status.PeerID == "" {
		return 0
	}
	return b[n.Status.PeerID]
}

// ScalePlan is what scaling a cluster's GlusterNodes to its templates'
// targets does: the templates to create a node from (one entry per node)
// and the nodes to ask to decommission.
type ScalePlan struct {
	Create       []*operatorv1alpha1.NodeTemplate
	Decommission []*operatorv1alpha1.GlusterNode
}

// PlanScale is the ScalePlan of c given nodes, the GlusterNodes of c.
// Each template's target is states.TemplateTargets over the cluster (in
// automatic mode the autoscaler's recorded counts). Only nodes that count
// (states.NodeCounts: not being deleted, not asked to decommission, not
// Draining or beyond) are a template's members. A node whose template is
// no longer in the spec, or a node added by hand, is never chosen for
// removal: a node missing from a list must not lose its data. Surplus
// nodes are removed in ScaleDownOrder, whose removal moves the least data
// (fewest bricks in bricks) first.
func PlanScale(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode, bricks BrickCounts) ScalePlan {
	byTemplate := map[string][]*operatorv1alpha1.GlusterNode{}
	for _, n := range nodes {
		if states.NodeCounts(NodeFacts(n)) {
			byTemplate[n.Spec.Template] = append(byTemplate[n.Spec.Template], n)
		}
	}
	automatic := c.Spec.Mode == operatorv1alpha1.ClusterModeAutomatic
	targets := states.TemplateTargets(TemplateFacts(c), automatic)
	var p ScalePlan
	for i := range c.Spec.NodeTemplates {
		t := &c.Spec.NodeTemplates[i]
		members := byTemplate[t.Name]
		for range targets[i] - len(members) {
			p.Create = append(p.Create, t)
		}
		if surplus := len(members) - targets[i]; surplus > 0 {
			p.Decommission = append(p.Decommission, ScaleDownOrder(members, bricks)[:surplus]...)
		}
	}
	return p
}
