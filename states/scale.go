package states

import (
	"cmp"
	"slices"
)

// ScaleDownOrder returns nodes ordered for removal, first to go first:
// the node whose removal moves the least data goes first. Nodes that were
// never Online hold no bricks and go first; then the node with the fewest
// bricks (NodeFacts.Bricks), since each brick is one replace-brick and one
// heal of the drain; among equal counts the newest, which has had the
// least time to receive data; then by name, descending, so that the order
// is total. The counts are a reading, not a promise: the drain re-reads
// GD2 before it moves anything. nodes is not modified.
//
// Every scale-down takes its node from here: the scaling action and the
// ledger entry it writes first (PlanScale), the autoscaler's check
// that the node can be absorbed (Autoscale), and the plan `kubectl gluster
// node decommission` prints.
func ScaleDownOrder(nodes []NodeFacts) []NodeFacts {
	out := slices.Clone(nodes)
	slices.SortStableFunc(out, func(a, b NodeFacts) int {
		an, bn := NodeMeaning(a.State).NeverOnline(), NodeMeaning(b.State).NeverOnline()
		if an != bn {
			if an {
				return -1
			}
			return 1
		}
		return cmp.Or(cmp.Compare(a.Bricks, b.Bricks), b.Created.Compare(a.Created), cmp.Compare(b.Name, a.Name))
	})
	return out
}

// TemplateFacts is what the scaling policy knows of one node template.
type TemplateFacts struct {
	// Name is the template's name, which its nodes carry
	// (NodeFacts.Template).
	Name string
	Zone string
	// Nodes is the template's fixed count (manual mode); nil if unset.
	Nodes *int
	// MinNodes is the automatic mode's minimum (0 if unset).
	MinNodes int
	// MaxNodes is the automatic mode's maximum; nil for none.
	MaxNodes *int
	// Desired is the count the autoscaler recorded for the template
	// (automatic mode, status.autoscaling); nil until it has recorded one.
	Desired *int
}

// target is the template's count: its fixed count, else the autoscaler's
// recorded count (its minimum until there is one), within its bounds.
func (t TemplateFacts) target() int {
	if t.Nodes != nil {
		return *t.Nodes
	}
	n := t.MinNodes
	if t.Desired != nil {
		n = *t.Desired
	}
	if t.MaxNodes != nil {
		n = min(n, *t.MaxNodes)
	}
	return max(n, t.MinNodes)
}

// DesiredNodes is the node count the templates ask for: the sum of their
// fixed counts, or where a template has none (automatic mode) of the
// autoscaler's recorded counts within minNodes..maxNodes, each template at
// its minimum until the autoscaler has recorded one.
func DesiredNodes(templates []TemplateFacts) int {
	n := 0
	for _, t := range templates {
		n += t.target()
	}
	return n
}

// TemplateTargets is the number of nodes each template should have.
//
// In manual mode it is each template's fixed count. In automatic mode it
// is the count the autoscaler recorded for the template (Autoscale, which
// also chooses the zone a step goes to), within minNodes..maxNodes, and
// minNodes until it has recorded one: the bounds win at once over a
// recorded count outside them.
func TemplateTargets(templates []TemplateFacts, automatic bool) []int {
	out := make([]int, len(templates))
	for i, t := range templates {
		switch {
		case !automatic && t.Nodes != nil:
			out[i] = *t.Nodes
		case automatic:
			t.Nodes = nil
			out[i] = t.target()
		}
	}
	return out
}

// ScalePlan is what scaling a cluster's nodes to its templates' targets
// does.
type ScalePlan struct {
	// Create has one entry per node to create: the index, in the templates
	// PlanScale was given, of the template to create it from. A template's
	// entries are next to each other.
	Create []int
	// Decommission names the nodes to ask to leave: each template's
	// surplus, the one whose removal moves the least data first.
	Decommission []string
}

// PlanScale plans the scaling of a cluster: templates are its node
// templates in spec order, nodes its nodes (each with the template it was
// made from and the bricks on its peer), automatic its mode.
//
// Each template's target is TemplateTargets (in automatic mode the
// autoscaler's recorded counts). Only nodes that count (NodeCounts: not
// being deleted, not asked to decommission, not Draining or beyond) are a
// template's members; a template short of its target gains the missing
// nodes, one over it loses its surplus in ScaleDownOrder (the least data
// moved first). A node whose template is no longer in the spec, or a node
// added by hand, is never chosen for removal: a node missing from a list
// must not lose its data. nodes is not modified.
func PlanScale(templates []TemplateFacts, nodes []NodeFacts, automatic bool) ScalePlan {
	byTemplate := map[string][]NodeFacts{}
	for _, n := range nodes {
		if NodeCounts(n) {
			byTemplate[n.Template] = append(byTemplate[n.Template], n)
		}
	}
	targets := TemplateTargets(templates, automatic)
	var p ScalePlan
	for i, t := range templates {
		members := byTemplate[t.Name]
		for range targets[i] - len(members) {
			p.Create = append(p.Create, i)
		}
		if surplus := len(members) - targets[i]; surplus > 0 {
			for _, n := range ScaleDownOrder(members)[:surplus] {
				p.Decommission = append(p.Decommission, n.Name)
			}
		}
	}
	return p
}
