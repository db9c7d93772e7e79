package states

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

const gi = uint64(1) << 30

func gib(n uint64) *uint64 { v := n * gi; return &v }

// asNode is an Online node with free and allocated GiB, created age ago.
func asNode(name string, free, alloc uint64, age time.Duration) AutoscaleNode {
	return AutoscaleNode{NodeFacts: NodeFacts{Name: name, State: NodeOnline, Created: t0.Add(-age)}, Free: free * gi, Allocated: alloc * gi}
}

// asTemplate is a template of 100Gi nodes with the band 40Gi..150Gi and
// its nodes' count recorded.
func asTemplate(name, zone string, lo, hi int, nodes ...AutoscaleNode) AutoscaleTemplate {
	for i := range nodes {
		nodes[i].Zone = zone
	}
	return AutoscaleTemplate{
		Name: name, Zone: zone, MinNodes: lo, MaxNodes: hi, NodeRaw: 100 * gi,
		FreeStorageMin: gib(40), FreeStorageMax: gib(150), Recorded: ptrTo(len(nodes)), Nodes: nodes,
	}
}

// asInput is a Ready cluster of the templates with both toggles on, a
// 10m cooldown last used an hour ago, and each zone's free the sum of its
// templates'.
func asInput(ts ...AutoscaleTemplate) AutoscaleInput {
	in := AutoscaleInput{
		Templates: ts, ZoneFree: map[string]uint64{}, CapacityKnown: true, ScaleUp: true, ScaleDown: true,
		Cooldown: 10 * time.Minute, LastScale: t0.Add(-time.Hour), Now: t0, Phase: ClusterReady,
	}
	for _, t := range ts {
		in.ZoneFree[t.Zone] += t.Free()
		for _, n := range t.Nodes {
			in.Nodes = append(in.Nodes, n.NodeFacts)
		}
	}
	return in
}

func with(in AutoscaleInput, edit func(*AutoscaleInput)) AutoscaleInput { edit(&in); return in }

func TestAutoscale(t *testing.T) {
	full := func(name, zone string, n int) AutoscaleTemplate { // 30Gi free: below the band
		return asTemplate(name, zone, 1, 3, append([]AutoscaleNode{asNode(name+"-a", 30, 70, time.Hour)}, nodesOf(name, n-1, 0, 100)...)...)
	}
	empty := func(name, zone string, n int) AutoscaleTemplate { // 100Gi free per node: above the band from two nodes
		return asTemplate(name, zone, 1, 3, nodesOf(name, n, 100, 0)...)
	}
	mid := asTemplate("mid", "zm", 1, 3, asNode("mid-a", 100, 0, time.Hour))
	for _, tc := range []struct {
		name    string
		in      AutoscaleInput
		desired []int
		stepped int
		reason  string
		// reasons per template; nil: not checked.
		reasons []string
		retryAt time.Time
		message string
	}{
		{name: "free below freeStorageMin grows the template by one node",
			in: asInput(full("a", "za", 1)), desired: []int{2}, stepped: 0, reason: ReasonScalingUp,
			message: "Template a: Free 30Gi is below freeStorageMin 40Gi: 1 to 2 nodes."},
		{name: "free within the band changes nothing",
			in: asInput(mid), desired: []int{1}, stepped: -1, reason: ReasonWithinBand, reasons: []string{ReasonWithinBand}},
		{name: "free above freeStorageMax shrinks the template by one node",
			in: asInput(empty("a", "za", 2)), desired: []int{1}, stepped: 0, reason: ReasonScalingDown},
		{name: "a template at maxNodes does not grow",
			in: asInput(asTemplate("a", "za", 1, 1, asNode("a-a", 30, 70, time.Hour))), desired: []int{1}, stepped: -1, reason: ReasonAtMaxNodes},
		{name: "a template at minNodes does not shrink",
			in: asInput(asTemplate("a", "za", 2, 3, nodesOf("a", 2, 100, 0)...)), desired: []int{2}, stepped: -1, reason: ReasonAtMinNodes},
		{name: "no node is added past maxStorage",
			in:      asInput(func() AutoscaleTemplate { t := full("a", "za", 1); t.MaxStorage = gib(150); return t }()),
			desired: []int{1}, stepped: -1, reason: ReasonMaxStorageReached},
		{name: "a node that brings the raw capacity exactly to maxStorage is added",
			in:      asInput(func() AutoscaleTemplate { t := full("a", "za", 1); t.MaxStorage = gib(200); return t }()),
			desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "scaleUp false holds growth",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.ScaleUp = false }), desired: []int{1}, stepped: -1, reason: ReasonScaleUpDisabled},
		{name: "scaleDown false holds shrinking",
			in: with(asInput(empty("a", "za", 2)), func(in *AutoscaleInput) { in.ScaleDown = false }), desired: []int{2}, stepped: -1, reason: ReasonScaleDownDisabled},
		{name: "scaleDown false still lets a full template grow",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.ScaleDown = false }), desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "within the cooldown nothing steps, and the retry time is its end",
			in:      with(asInput(full("a", "za", 1), mid), func(in *AutoscaleInput) { in.LastScale = t0.Add(-4 * time.Minute) }),
			desired: []int{1, 1}, stepped: -1, reason: ReasonCooldownActive, reasons: []string{ReasonCooldownActive, ReasonWithinBand},
			retryAt: t0.Add(6 * time.Minute)},
		{name: "the cooldown holds a shrink too, and says when the next step may come",
			in:      with(asInput(empty("a", "za", 2)), func(in *AutoscaleInput) { in.LastScale = t0.Add(-time.Minute) }),
			desired: []int{2}, stepped: -1, reason: ReasonCooldownActive, retryAt: t0.Add(9 * time.Minute),
			message: "Template a would shrink, but the last step was at 2030-01-02T03:03:05Z and the cooldown is 10m0s: next step at 2030-01-02T03:13:05Z at the earliest."},
		{name: "the cooldown is over once it has fully passed",
			in:      with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.LastScale = t0.Add(-10 * time.Minute) }),
			desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "a cluster that never stepped has no cooldown",
			in:      with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.LastScale = time.Time{} }),
			desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "the cooldown does not hold a reason that is not a step",
			in: with(asInput(mid), func(in *AutoscaleInput) { in.LastScale = t0.Add(-time.Minute) }), desired: []int{1}, stepped: -1, reason: ReasonWithinBand},
		{name: "of two full templates the zone with the least free grows first, the other waits its turn",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1), asTemplate("b", "zb", 1, 3, asNode("b-a", 10, 90, time.Hour)))
				return in
			}(), desired: []int{1, 2}, stepped: 1, reason: ReasonScalingUp, reasons: []string{ReasonAnotherTemplateFirst, ReasonScalingUp}},
		{name: "the zone's free counts, not only the template's: a zone another template fills goes first",
			in: func() AutoscaleInput {
				in := asInput(asTemplate("a", "za", 1, 3, asNode("a-a", 10, 90, time.Hour)), full("b", "zb", 1))
				in.ZoneFree["za"] += 500 * gi // another template of zone za has room
				return in
			}(), desired: []int{1, 2}, stepped: 1, reason: ReasonScalingUp},
		{name: "equal zones go in spec order",
			in: asInput(full("a", "za", 1), full("b", "zb", 1), full("c", "zc", 1)), desired: []int{2, 1, 1}, stepped: 0, reason: ReasonScalingUp,
			reasons: []string{ReasonScalingUp, ReasonAnotherTemplateFirst, ReasonAnotherTemplateFirst}},
		{name: "growth goes before shrinking",
			in: asInput(empty("a", "za", 2), full("b", "zb", 1)), desired: []int{2, 2}, stepped: 1, reason: ReasonScalingUp,
			reasons: []string{ReasonAnotherTemplateFirst, ReasonScalingUp}},
		{name: "of two templates to shrink the zone with the most free goes first",
			in: asInput(empty("a", "za", 2), empty("b", "zb", 3)), desired: []int{2, 2}, stepped: 1, reason: ReasonScalingDown},
		{name: "a node that is not Online holds every step",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1), asTemplate("b", "zb", 1, 3, asNode("b-a", 100, 0, time.Hour)))
				in.Nodes[1].State = NodeJoining
				return in
			}(), desired: []int{1, 1}, stepped: -1, reason: ReasonNodesNotSettled,
			message: "Node b-a is Joining, not Online; the autoscaler waits until every node is Online."},
		{name: "a node in maintenance holds every step",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1))
				in.Nodes[0].State = NodeMaintenance
				return in
			}(), desired: []int{1}, stepped: -1, reason: ReasonNodesNotSettled},
		{name: "a node leaving holds every step, counted or not",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1))
				in.Nodes = append(in.Nodes, NodeFacts{Name: "old", State: NodeDraining})
				return in
			}(), desired: []int{1}, stepped: -1, reason: ReasonNodesNotSettled,
			message: "Node old is leaving; the autoscaler waits until it is gone."},
		{name: "a node asked to decommission holds every step",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1))
				in.Nodes = append(in.Nodes, NodeFacts{Name: "asked", State: NodeOnline, DecommissionRequested: true})
				return in
			}(), desired: []int{1}, stepped: -1, reason: ReasonNodesNotSettled},
		{name: "a Deleted node left behind does not hold anything",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1))
				in.Nodes = append(in.Nodes, NodeFacts{Name: "gone", State: NodeDeleted, Deleting: true})
				return in
			}(), desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "a step not carried out yet holds the next one",
			in: func() AutoscaleInput {
				in := asInput(full("a", "za", 1))
				in.Templates[0].Recorded = ptrTo(2)
				return in
			}(), desired: []int{2}, stepped: -1, reason: ReasonNodesNotSettled,
			message: "Template a has 1 of 2 nodes; the autoscaler waits until the last step is done."},
		{name: "without a recorded count a template stands at its nodes",
			in: func() AutoscaleInput {
				in := asInput(mid)
				in.Templates[0].Recorded = nil
				return in
			}(), desired: []int{1}, stepped: -1, reason: ReasonWithinBand},
		{name: "a lowered maxNodes brings the count down at once, and waits for it",
			in: func() AutoscaleInput {
				in := asInput(asTemplate("a", "za", 1, 2, nodesOf("a", 3, 30, 70)...))
				return in
			}(), desired: []int{2}, stepped: -1, reason: ReasonNodesNotSettled},
		{name: "a raised minNodes brings the count up at once",
			in: func() AutoscaleInput {
				in := asInput(asTemplate("a", "za", 3, 4, nodesOf("a", 1, 100, 0)...))
				return in
			}(), desired: []int{3}, stepped: -1, reason: ReasonNodesNotSettled},
		{name: "paused holds every step",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.Paused = true }), desired: []int{1}, stepped: -1, reason: ReasonPaused, reasons: []string{ReasonPaused}},
		{name: "unknown capacity holds every step",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.CapacityKnown = false }), desired: []int{1}, stepped: -1, reason: ReasonCapacityUnknown},
		{name: "an upgrade holds every step",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.UpgradeActive = true }), desired: []int{1}, stepped: -1, reason: ReasonUpgradeBusy},
		{name: "a cluster that is Scaling or Provisioning does not step",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.Phase = ClusterScaling }), desired: []int{1}, stepped: -1, reason: ReasonClusterNotSteady},
		{name: "a Degraded cluster may grow",
			in: with(asInput(full("a", "za", 1)), func(in *AutoscaleInput) { in.Phase = ClusterDegraded; in.VolumesUnhealthy = 1 }), desired: []int{2}, stepped: 0, reason: ReasonScalingUp},
		{name: "no node leaves while a volume is not Healthy",
			in: with(asInput(empty("a", "za", 2)), func(in *AutoscaleInput) { in.VolumesUnhealthy = 1 }), desired: []int{2}, stepped: -1, reason: ReasonVolumesNotHealthy},
		{name: "a node whose bricks the rest of its zone cannot take stays",
			in: func() AutoscaleInput {
				tm := asTemplate("a", "za", 1, 3, asNode("a-old", 60, 40, 2*time.Hour), asNode("a-new", 0, 100, time.Hour))
				tm.FreeStorageMin, tm.FreeStorageMax = nil, gib(50)
				return asInput(tm)
			}(), desired: []int{2}, stepped: -1, reason: ReasonZoneNeedsCapacity,
			message: "Template a: Free 60Gi is above freeStorageMax 50Gi, but removing a-new would leave zone za 60Gi free for the 100Gi its bricks take."},
		{name: "the node checked is the one with the fewest bricks, not the newest",
			in: func() AutoscaleInput {
				old, young := asNode("a-old", 60, 40, 2*time.Hour), asNode("a-new", 0, 100, time.Hour)
				old.Bricks, young.Bricks = 2, 5
				tm := asTemplate("a", "za", 1, 3, old, young)
				tm.FreeStorageMin, tm.FreeStorageMax = nil, gib(50)
				return asInput(tm)
			}(), desired: []int{2}, stepped: -1, reason: ReasonZoneNeedsCapacity,
			message: "Template a: Free 60Gi is above freeStorageMax 50Gi, but removing a-old would leave zone za 0 free for the 40Gi its bricks take."},
		{name: "a node whose bricks fit but leave the template below freeStorageMin stays",
			in: func() AutoscaleInput {
				tm := asTemplate("a", "za", 1, 3, asNode("a-old", 100, 0, 2*time.Hour), asNode("a-new", 10, 90, time.Hour))
				tm.FreeStorageMax = gib(100)
				return asInput(tm)
			}(), desired: []int{2}, stepped: -1, reason: ReasonZoneNeedsCapacity,
			message: "Template a: Free 110Gi is above freeStorageMax 100Gi, but removing a-new would leave the template 10Gi free once its 90Gi of bricks moved, below freeStorageMin 40Gi."},
		{name: "the zone must absorb the bricks even when the template's own free looks enough",
			in: func() AutoscaleInput {
				in := asInput(asTemplate("a", "za", 1, 3, asNode("a-old", 100, 0, 2*time.Hour), asNode("a-new", 60, 40, time.Hour)))
				in.ZoneFree["za"] = 90 * gi // a stale or partial zone reading: only 30Gi beside the victim
				return in
			}(), desired: []int{2}, stepped: -1, reason: ReasonZoneNeedsCapacity},
		{name: "a node whose bricks fit with the band kept leaves",
			in:      asInput(asTemplate("a", "za", 1, 3, asNode("a-old", 100, 0, 2*time.Hour), asNode("a-new", 90, 10, time.Hour))),
			desired: []int{1}, stepped: 0, reason: ReasonScalingDown},
		{name: "a template without freeStorageMin and freeStorageMax never moves",
			in: func() AutoscaleInput {
				tm := full("a", "za", 1)
				tm.FreeStorageMin, tm.FreeStorageMax = nil, nil
				return asInput(tm)
			}(), desired: []int{1}, stepped: -1, reason: ReasonWithinBand,
			message: "Every template's free capacity is within its band."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Autoscale(tc.in)
			var desired []int
			for _, d := range got.Templates {
				desired = append(desired, d.Desired)
			}
			if fmt.Sprint(desired) != fmt.Sprint(tc.desired) || got.Stepped != tc.stepped || got.Reason != tc.reason {
				t.Fatalf("desired %v stepped %d reason %s (%s), want %v %d %s", desired, got.Stepped, got.Reason, got.Message, tc.desired, tc.stepped, tc.reason)
			}
			for i, r := range tc.reasons {
				if got.Templates[i].Reason != r {
					t.Errorf("template %s reason %s (%s), want %s", got.Templates[i].Name, got.Templates[i].Reason, got.Templates[i].Message, r)
				}
			}
			if !got.RetryAt.Equal(tc.retryAt) {
				t.Errorf("retry at %v, want %v", got.RetryAt, tc.retryAt)
			}
			if tc.message != "" && got.Message != tc.message {
				t.Errorf("message %q, want %q", got.Message, tc.message)
			}
			for _, d := range got.Templates {
				if d.Reason == "" || d.Message == "" {
					t.Errorf("template %s has no reason or message: %+v", d.Name, d)
				}
			}
		})
	}
}

// nodesOf is n Online nodes of template name with free and allocated GiB
// each, the first the newest.
func nodesOf(name string, n int, free, alloc uint64) []AutoscaleNode {
	var out []AutoscaleNode
	for i := range n {
		out = append(out, asNode(fmt.Sprintf("%s-%d", name, i), free, alloc, time.Duration(i+2)*time.Hour))
	}
	return out
}

// The policy's promises over random clusters: at most one template moves,
// by one node, within its bounds, only from a settled, unpaused cluster
// past its cooldown; every template has a reason; a grow is never past
// maxStorage and a shrink never leaves the template below freeStorageMin.
func TestAutoscaleTakesAtMostOneSafeStep(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	states := []fsm.State{NodeOnline, NodeOnline, NodeOnline, NodeOnline, NodeJoining, NodeDraining, NodeMaintenance}
	for range 20000 {
		var ts []AutoscaleTemplate
		for i := range 1 + r.IntN(4) {
			lo := 1 + r.IntN(2)
			var nodes []AutoscaleNode
			for j := range r.IntN(5) {
				alloc := uint64(r.IntN(101))
				nodes = append(nodes, asNode(fmt.Sprintf("t%d-%d", i, j), 100-alloc, alloc, time.Duration(r.IntN(3))*time.Hour))
				nodes[j].State = states[r.IntN(len(states))]
				nodes[j].Bricks = r.IntN(3)
			}
			tm := asTemplate(fmt.Sprintf("t%d", i), fmt.Sprintf("z%d", r.IntN(3)), lo, lo+r.IntN(3), nodes...)
			if r.IntN(4) == 0 {
				tm.Recorded = ptrTo(r.IntN(5))
			}
			if r.IntN(3) == 0 {
				tm.MaxStorage = gib(uint64(100 * (1 + r.IntN(4))))
			}
			ts = append(ts, tm)
		}
		in := asInput(ts...)
		in.ScaleUp, in.ScaleDown, in.Paused = r.IntN(4) > 0, r.IntN(4) > 0, r.IntN(8) == 0
		in.LastScale = t0.Add(-time.Duration(r.IntN(20)) * time.Minute)
		in.VolumesUnhealthy = r.IntN(2) * r.IntN(2)
		got := Autoscale(in)
		fail := func(rule string) { t.Fatalf("%s\ninput %+v\ndecision %+v", rule, in, got) }
		moved := 0
		for i, d := range got.Templates {
			tm := ts[i]
			if d.Desired < tm.MinNodes || d.Desired > tm.MaxNodes {
				fail("a desired count is outside its template's bounds")
			}
			if d.Reason == "" || d.Message == "" || strings.Contains(d.Message, "%!") {
				fail("a template has no reason or a broken message")
			}
			delta := d.Desired - tm.base()
			switch {
			case delta == 0:
				continue
			case delta > 1 || delta < -1:
				fail("a template moved by more than one node")
			}
			moved++
			if i != got.Stepped {
				fail("a template moved that is not the stepped one")
			}
			if in.Paused || unsettled(in) != "" || in.Now.Sub(in.LastScale) < in.Cooldown {
				fail("a step was taken while paused, unsettled or within the cooldown")
			}
			if delta > 0 && (!in.ScaleUp || tm.MaxStorage != nil && uint64(d.Desired)*tm.NodeRaw > *tm.MaxStorage || tm.Free() >= *tm.FreeStorageMin) {
				fail("a grow that was not allowed or not needed")
			}
			if delta < 0 {
				// Every node is Online (settled): the fewest bricks, then
				// the newest, then the last name.
				victim := tm.Nodes[0]
				for _, n := range tm.Nodes {
					if n.Bricks < victim.Bricks || n.Bricks == victim.Bricks &&
						(n.Created.After(victim.Created) || n.Created.Equal(victim.Created) && n.Name > victim.Name) {
						victim = n
					}
				}
				if !in.ScaleDown || in.VolumesUnhealthy > 0 || tm.Free() <= *tm.FreeStorageMax || tm.Free()-victim.Free-victim.Allocated < *tm.FreeStorageMin {
					fail("a shrink that was not allowed, not needed or not safe")
				}
			}
		}
		if moved > 1 {
			fail("more than one template moved")
		}
		if (moved == 1) != (got.Stepped >= 0) {
			fail("Stepped does not match the templates that moved")
		}
	}
}
