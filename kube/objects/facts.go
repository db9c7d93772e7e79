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
		Name: n.Name, Zone: n.Spec.Zone, Template: n.Spec.Template, State: fsm.State(n.Status.State),
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
		out[i] = states.TemplateFacts{Name: t.Name, Zone: t.Zone, MinNodes: int(ptr.Deref(t.MinNodes, 0))}
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

// ScalePlan is states.ScalePlan in API objects: the templates to create a
// node from (one entry per node) and the nodes to ask to decommission.
type ScalePlan struct {
	Create       []*operatorv1alpha1.NodeTemplate
	Decommission []*operatorv1alpha1.GlusterNode
}

// Order is p as its ledger entries name it, and as the scaleNodes action
// (transitions.ClusterTarget.Scale) takes it.
func (p ScalePlan) Order() *states.ScaleOrder {
	out := &states.ScaleOrder{}
	for _, t := range p.Create {
		out.Create = append(out.Create, t.Name)
	}
	for _, n := range p.Decommission {
		out.Decommission = append(out.Decommission, states.LeavingNode{Name: n.Name, Peer: n.Status.PeerID, Template: n.Spec.Template, State: n.Status.State})
	}
	return out
}

// ScalePlanOf is states.PlanScale over c's templates and nodes, the
// GlusterNodes of c, each node holding the bricks bricks counts on its
// peer; the plan names the templates and nodes it chose as the API objects
// they are.
func ScalePlanOf(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode, bricks BrickCounts) ScalePlan {
	byName := make(map[string]*operatorv1alpha1.GlusterNode, len(nodes))
	facts := make([]states.NodeFacts, len(nodes))
	for i, n := range nodes {
		byName[n.Name], facts[i] = n, NodeFacts(n)
		facts[i].Bricks = bricks.Of(n)
	}
	plan := states.PlanScale(TemplateFacts(c), facts, c.Spec.Mode == operatorv1alpha1.ClusterModeAutomatic)
	var out ScalePlan
	for _, i := range plan.Create {
		out.Create = append(out.Create, &c.Spec.NodeTemplates[i])
	}
	for _, name := range plan.Decommission {
		out.Decommission = append(out.Decommission, byName[name])
	}
	return out
}
