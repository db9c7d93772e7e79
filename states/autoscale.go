package states

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/gluster/anthill/fsm"
)

// The autoscaler is a pure policy, not a machine: the cluster machine
// evaluates it on every sync of an automatic-mode cluster, records its
// decision in status.autoscaling with the rest of its status, and carries
// a changed count out through its own scale and scaleNodes path
// (TemplateTargets, ScaleDownOrder and the node machine's decommission
// drain). What it decides from is plain data:
//
//   - "free" is unallocated device space as GD2 reports it: the free-size
//     of enabled devices on online peers (Capacity). GD2 takes a brick's
//     space from its device when the brick is allocated (volume create,
//     expand, replace-brick) and gives it back when the volume is deleted;
//     files written into a volume do not change it.
//   - a template grows when its free is below freeStorageMin and shrinks
//     when it is above freeStorageMax: the band between them is the
//     hysteresis.
//   - one step at a time: one node, one template, and only when every node
//     is settled and the cooldown since the last step has passed.

// AutoscaleNode is one counted node of a template, as the autoscaler sees
// it.
type AutoscaleNode struct {
	NodeFacts
	// Free is what the node adds to its template's free capacity: the
	// free space of its enabled devices while its peer is online.
	Free uint64
	// Allocated is the space bricks take on the node's devices (total
	// minus free, over every device of its peer): what a drain must move
	// elsewhere in the zone before the node can go.
	Allocated uint64
}

// AutoscaleTemplate is what the autoscaler knows of one node template.
type AutoscaleTemplate struct {
	Name string
	Zone string
	// MinNodes and MaxNodes bound the template's count (both required in
	// automatic mode).
	MinNodes, MaxNodes int
	// MaxStorage caps the template's raw capacity (nil: no cap).
	MaxStorage *uint64
	// FreeStorageMin and FreeStorageMax are the band (nil: no grow, no
	// shrink on capacity).
	FreeStorageMin, FreeStorageMax *uint64
	// NodeRaw is the raw capacity of one of its nodes: storage.capacity
	// times storage.deviceCount.
	NodeRaw uint64
	// Recorded is the count the autoscaler last recorded for the template
	// (status.autoscaling); nil when it has none yet.
	Recorded *int
	// Nodes are its counted nodes (NodeCounts).
	Nodes []AutoscaleNode
}

// Free is the template's measured free capacity: the sum of its nodes'.
func (t AutoscaleTemplate) Free() uint64 {
	var n uint64
	for _, node := range t.Nodes {
		n += node.Free
	}
	return n
}

// base is the count the template stands at before this decision: the
// recorded count, else the nodes it has, within its bounds.
func (t AutoscaleTemplate) base() int {
	n := len(t.Nodes)
	if t.Recorded != nil {
		n = *t.Recorded
	}
	return clampNodes(n, t.MinNodes, t.MaxNodes)
}

func clampNodes(n, lo, hi int) int {
	if hi >= lo {
		n = min(n, hi)
	}
	return max(n, lo)
}

// AutoscaleInput is everything one autoscaler decision reads.
type AutoscaleInput struct {
	Templates []AutoscaleTemplate
	// ZoneFree is the free capacity of each physical zone (Capacity), all
	// templates of the zone together.
	ZoneFree map[string]uint64
	// CapacityKnown: GD2 answered this sync, so the free capacities are
	// this sync's.
	CapacityKnown bool

	// ScaleUp and ScaleDown are spec.autoscaling's toggles; Cooldown is
	// the least time between two steps.
	ScaleUp, ScaleDown bool
	Cooldown           time.Duration
	// LastScale is when the autoscaler last stepped (zero: never).
	LastScale time.Time
	Now       time.Time

	// Paused: spec.paused.
	Paused bool
	// Phase is the cluster machine's phase; a step is taken only from
	// Ready or Degraded.
	Phase fsm.State
	// UpgradeActive: the upgrade machine is neither Idle nor Complete.
	UpgradeActive bool
	// VolumesUnhealthy: heal machines not Healthy; no node is removed
	// while a volume heals.
	VolumesUnhealthy int
	// Nodes are every node of the cluster (any template, counted or not),
	// to see whether they are settled.
	Nodes []NodeFacts
}

// AutoscaleTemplateDecision is the autoscaler's word on one template.
type AutoscaleTemplateDecision struct {
	Name    string
	Desired int
	Free    uint64
	// Reason is ReasonScalingUp or ReasonScalingDown for the template that
	// steps, else why it does not.
	Reason  string
	Message string
}

// AutoscaleDecision is the outcome of one autoscaler evaluation.
type AutoscaleDecision struct {
	// Templates are in spec order.
	Templates []AutoscaleTemplateDecision
	// Stepped is the index of the template whose count changed by one, -1
	// when none did.
	Stepped int
	// Reason and Message sum the decision up for the cluster: the step
	// taken, or why none is.
	Reason  string
	Message string
	// RetryAt is when a held step may be taken (the cooldown's end; zero
	// when nothing waits on time).
	RetryAt time.Time
}

// Desired is the total of the templates' desired counts.
func (d AutoscaleDecision) Desired() int {
	n := 0
	for _, t := range d.Templates {
		n += t.Desired
	}
	return n
}

// wantKind is what a template's free capacity asks for.
type wantKind int

const (
	wantNothing wantKind = iota
	wantGrow
	wantShrink
)

// Autoscale decides each template's desired count. Every template keeps
// its count (recorded, else its nodes, within minNodes..maxNodes: the
// bounds always win, at once) unless all of these hold, and then exactly
// one template moves by one node:
//
//   - the cluster is not paused, GD2 answered, no upgrade runs, the phase
//     is Ready or Degraded, and every node is settled: each template has
//     the count it was given, every counted node is Online, none is
//     joining or leaving;
//   - the template's free is below freeStorageMin (grow; allowed by
//     scaleUp, below maxNodes, and one more node keeps its raw capacity
//     within maxStorage) or above freeStorageMax (shrink; allowed by
//     scaleDown, above minNodes, volumes healthy, and the node that would
//     leave — ScaleDownOrder's first — can be absorbed: the rest of its
//     zone has free space for what its bricks take, and the template stays
//     at freeStorageMin or more after the move);
//   - the cooldown since the last step has passed.
//
// Growth comes before shrinking; among templates that may grow the one
// whose zone has the least free goes first (then its own free, then spec
// order); among those that may shrink the one whose zone has the most
// free.
func Autoscale(in AutoscaleInput) AutoscaleDecision {
	out := AutoscaleDecision{Stepped: -1, Templates: make([]AutoscaleTemplateDecision, len(in.Templates))}
	for i, t := range in.Templates {
		out.Templates[i] = AutoscaleTemplateDecision{Name: t.Name, Desired: t.base(), Free: t.Free()}
	}
	hold := func(reason, msg string) AutoscaleDecision {
		for i := range out.Templates {
			out.Templates[i].Reason, out.Templates[i].Message = reason, msg
		}
		out.Reason, out.Message = reason, msg
		return out
	}
	switch {
	case in.Paused:
		return hold(ReasonPaused, "The cluster is paused (spec.paused): the autoscaler changes no node count until it is cleared.")
	case !in.CapacityKnown:
		return hold(ReasonCapacityUnknown, "GD2 did not answer, so free capacity is unknown; no node count changes.")
	case in.UpgradeActive:
		return hold(ReasonUpgradeBusy, "An upgrade runs; the autoscaler changes no node count until it ends.")
	case in.Phase != ClusterReady && in.Phase != ClusterDegraded:
		return hold(ReasonClusterNotSteady, fmt.Sprintf("The cluster is %s; the autoscaler steps only from Ready or Degraded.", cmp.Or(in.Phase, ClusterPending)))
	}
	if msg := unsettled(in); msg != "" {
		return hold(ReasonNodesNotSettled, msg)
	}

	wants := make([]wantKind, len(in.Templates))
	for i, t := range in.Templates {
		wants[i] = templateWant(in, t, &out.Templates[i])
	}
	pick := func(kind wantKind) int {
		best := -1
		for i, t := range in.Templates {
			if wants[i] != kind {
				continue
			}
			if best < 0 {
				best = i
				continue
			}
			zi, zb := in.ZoneFree[t.Zone], in.ZoneFree[in.Templates[best].Zone]
			fi, fb := out.Templates[i].Free, out.Templates[best].Free
			c := cmp.Or(cmp.Compare(zi, zb), cmp.Compare(fi, fb))
			if kind == wantShrink {
				c = -c
			}
			if c < 0 {
				best = i
			}
		}
		return best
	}
	chosen, delta := pick(wantGrow), 1
	if chosen < 0 {
		chosen, delta = pick(wantShrink), -1
	}
	if chosen < 0 {
		out.Reason, out.Message = summary(out.Templates)
		return out
	}
	ct := &out.Templates[chosen]
	if !in.LastScale.IsZero() && in.Now.Sub(in.LastScale) < in.Cooldown {
		out.RetryAt = in.LastScale.Add(in.Cooldown)
		for i := range out.Templates {
			if wants[i] == wantGrow || wants[i] == wantShrink {
				out.Templates[i].Reason = ReasonCooldownActive
				out.Templates[i].Message = fmt.Sprintf("%s; held by the cooldown until %s.", strings.TrimSuffix(out.Templates[i].Message, "."), out.RetryAt.UTC().Format(time.RFC3339))
			}
		}
		verb := "grow"
		if delta < 0 {
			verb = "shrink"
		}
		out.Reason = ReasonCooldownActive
		out.Message = fmt.Sprintf("Template %s would %s, but the last step was at %s and the cooldown is %s: next step at %s at the earliest.",
			ct.Name, verb, in.LastScale.UTC().Format(time.RFC3339), in.Cooldown, out.RetryAt.UTC().Format(time.RFC3339))
		return out
	}
	for i := range out.Templates {
		if i != chosen && (wants[i] == wantGrow || wants[i] == wantShrink) {
			out.Templates[i].Reason = ReasonAnotherTemplateFirst
			out.Templates[i].Message = fmt.Sprintf("%s; template %s steps first (one step at a time).", strings.TrimSuffix(out.Templates[i].Message, "."), ct.Name)
		}
	}
	ct.Desired += delta
	out.Stepped = chosen
	if delta > 0 {
		ct.Reason = ReasonScalingUp
	} else {
		ct.Reason = ReasonScalingDown
	}
	ct.Message = fmt.Sprintf("%s: %d to %d nodes.", strings.TrimSuffix(ct.Message, "."), ct.Desired-delta, ct.Desired)
	out.Reason, out.Message = ct.Reason, "Template "+ct.Name+": "+ct.Message
	return out
}

// unsettled names why the nodes are not settled, or "" when they are.
func unsettled(in AutoscaleInput) string {
	for _, n := range in.Nodes {
		m := NodeMeaning(n.State)
		switch {
		case m.Class == NodeClassGone:
		case m.Leaving() || n.Deleting || n.DecommissionRequested:
			return fmt.Sprintf("Node %s is leaving; the autoscaler waits until it is gone.", n.Name)
		case n.State != NodeOnline:
			return fmt.Sprintf("Node %s is %s, not Online; the autoscaler waits until every node is Online.", n.Name, cmp.Or(n.State, NodePending))
		}
	}
	for _, t := range in.Templates {
		if d := t.base(); len(t.Nodes) != d {
			return fmt.Sprintf("Template %s has %d of %d nodes; the autoscaler waits until the last step is done.", t.Name, len(t.Nodes), d)
		}
	}
	return ""
}

// templateWant says what template t's free capacity asks for, and fills
// d's reason and message when it asks for nothing it may have.
func templateWant(in AutoscaleInput, t AutoscaleTemplate, d *AutoscaleTemplateDecision) wantKind {
	free, n := d.Free, d.Desired
	switch {
	case t.FreeStorageMin != nil && free < *t.FreeStorageMin:
		d.Message = fmt.Sprintf("Free %s is below freeStorageMin %s.", Bytes(free), Bytes(*t.FreeStorageMin))
		switch {
		case !in.ScaleUp:
			d.Reason, d.Message = ReasonScaleUpDisabled, strings.TrimSuffix(d.Message, ".")+", but spec.autoscaling.scaleUp is false."
		case n >= t.MaxNodes:
			d.Reason, d.Message = ReasonAtMaxNodes, fmt.Sprintf("%s, but the template is at maxNodes (%d).", strings.TrimSuffix(d.Message, "."), t.MaxNodes)
		case t.MaxStorage != nil && uint64(n+1)*t.NodeRaw > *t.MaxStorage:
			d.Reason, d.Message = ReasonMaxStorageReached, fmt.Sprintf("%s, but %d nodes of %s would exceed maxStorage %s.",
				strings.TrimSuffix(d.Message, "."), n+1, Bytes(t.NodeRaw), Bytes(*t.MaxStorage))
		default:
			return wantGrow
		}
	case t.FreeStorageMax != nil && free > *t.FreeStorageMax:
		d.Message = fmt.Sprintf("Free %s is above freeStorageMax %s.", Bytes(free), Bytes(*t.FreeStorageMax))
		switch {
		case !in.ScaleDown:
			d.Reason, d.Message = ReasonScaleDownDisabled, strings.TrimSuffix(d.Message, ".")+", but spec.autoscaling.scaleDown is false."
		case n <= t.MinNodes:
			d.Reason, d.Message = ReasonAtMinNodes, fmt.Sprintf("%s, but the template is at minNodes (%d).", strings.TrimSuffix(d.Message, "."), t.MinNodes)
		case in.VolumesUnhealthy > 0:
			d.Reason, d.Message = ReasonVolumesNotHealthy, fmt.Sprintf("%s, but %d volume(s) are not Healthy; no node leaves while data heals.", strings.TrimSuffix(d.Message, "."), in.VolumesUnhealthy)
		default:
			if msg := absorbs(in, t, free); msg != "" {
				d.Reason, d.Message = ReasonZoneNeedsCapacity, strings.TrimSuffix(d.Message, ".")+", but "+msg
				return wantNothing
			}
			return wantShrink
		}
	default:
		d.Reason, d.Message = ReasonWithinBand, "Free "+Bytes(free)+" is within "+band(t)+"."
	}
	return wantNothing
}

// absorbs checks that the node a shrink would remove (ScaleDownOrder's
// first) can go: the rest of its zone must have free space for what its
// bricks take, and the template must keep freeStorageMin after the move.
// It returns why not, or "".
func absorbs(in AutoscaleInput, t AutoscaleTemplate, free uint64) string {
	facts := make([]NodeFacts, len(t.Nodes))
	byName := make(map[string]AutoscaleNode, len(t.Nodes))
	for i, n := range t.Nodes {
		facts[i], byName[n.Name] = n.NodeFacts, n
	}
	victim := byName[ScaleDownOrder(facts)[0].Name]
	zoneRest := in.ZoneFree[t.Zone] - min(victim.Free, in.ZoneFree[t.Zone])
	if zoneRest < victim.Allocated {
		return fmt.Sprintf("removing %s would leave zone %s %s free for the %s its bricks take.", victim.Name, t.Zone, Bytes(zoneRest), Bytes(victim.Allocated))
	}
	rest := free - min(victim.Free, free)
	floor := uint64(0)
	if t.FreeStorageMin != nil {
		floor = *t.FreeStorageMin
	}
	if rest < victim.Allocated || rest-victim.Allocated < floor {
		left := rest - min(victim.Allocated, rest)
		return fmt.Sprintf("removing %s would leave the template %s free once its %s of bricks moved, below freeStorageMin %s.", victim.Name, Bytes(left), Bytes(victim.Allocated), Bytes(floor))
	}
	return ""
}

// band describes a template's free-capacity band.
func band(t AutoscaleTemplate) string {
	lo, hi := "none", "none"
	if t.FreeStorageMin != nil {
		lo = Bytes(*t.FreeStorageMin)
	}
	if t.FreeStorageMax != nil {
		hi = Bytes(*t.FreeStorageMax)
	}
	return "freeStorageMin " + lo + " .. freeStorageMax " + hi
}

// summary is the cluster's reason and message when no template steps: the
// first template's reason that is not WithinBand (something an admin may
// want to act on), else WithinBand.
func summary(ts []AutoscaleTemplateDecision) (string, string) {
	for _, t := range ts {
		if t.Reason != ReasonWithinBand {
			return t.Reason, "Template " + t.Name + ": " + t.Message
		}
	}
	if len(ts) == 0 {
		return ReasonWithinBand, "No node templates."
	}
	return ReasonWithinBand, "Every template's free capacity is within its band."
}

// Bytes formats a byte count with a binary unit (1.5Gi), for messages.
func Bytes(n uint64) string {
	units := []string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	v, i := float64(n), 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d", n)
	}
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0") + units[i]
}
