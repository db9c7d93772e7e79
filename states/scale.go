package states

import (
	"cmp"
	"slices"
)

// ScaleDownOrder returns nodes ordered for removal, first to go first.
// Nothing here sees GD2's brick placement, so least-used is approximated:
// nodes that were never Online hold no bricks and go first; then the
// newest, which have had the least time to receive bricks; then by name,
// descending, so that the order is total. nodes is not modified.
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
		return cmp.Or(b.Created.Compare(a.Created), cmp.Compare(b.Name, a.Name))
	})
	return out
}

// TemplateFacts is what the scaling policy knows of one node template.
type TemplateFacts struct {
	Zone string
	// Nodes is the template's fixed count (manual mode); nil if unset.
	Nodes *int
	// MinNodes is the automatic mode's minimum (0 if unset).
	MinNodes int
	// MaxNodes is the automatic mode's maximum; nil for none.
	MaxNodes *int
}

// DesiredNodes is the node count the templates ask for: the sum of their
// fixed counts, or of their minimums where a template has none (automatic
// mode, until the autoscaler decides more).
func DesiredNodes(templates []TemplateFacts) int {
	n := 0
	for _, t := range templates {
		if t.Nodes != nil {
			n += *t.Nodes
		} else {
			n += t.MinNodes
		}
	}
	return n
}

// TemplateTargets is the number of nodes each template should have; current
// is how many each has now (same order as templates).
//
// In manual mode it is each template's fixed count. In automatic mode
// every template starts at its minimum, then the rest of desired goes one
// node at a time to a template below its maximum in the zone that has the
// fewest nodes so far (ties: the template that has more nodes now, so that
// nothing is shuffled; then the first in spec order). Templates sharing a
// zone count together. The zones' counts thus differ by at most one
// wherever the bounds allow, and scaling down takes from the largest zone
// first. Minimums win over a smaller desired; when every template is at
// its maximum the rest of desired is dropped.
func TemplateTargets(templates []TemplateFacts, automatic bool, desired int, current []int) []int {
	out := make([]int, len(templates))
	if !automatic {
		for i, t := range templates {
			if t.Nodes != nil {
				out[i] = *t.Nodes
			}
		}
		return out
	}
	inZone := map[string]int{}
	left := desired
	for i, t := range templates {
		out[i] = t.MinNodes
		inZone[t.Zone] += t.MinNodes
		left -= t.MinNodes
	}
	for ; left > 0; left-- {
		best := -1
		for i, t := range templates {
			if t.MaxNodes != nil && out[i] >= *t.MaxNodes {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			zi, zb := inZone[t.Zone], inZone[templates[best].Zone]
			if zi < zb || (zi == zb && current[i] > current[best]) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		out[best]++
		inZone[templates[best].Zone]++
	}
	return out
}
