package states

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

func names(nodes []NodeFacts) []string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return out
}

func TestScaleDownOrder(t *testing.T) {
	aged := func(name string, st fsm.State, age time.Duration) NodeFacts {
		return NodeFacts{Name: name, State: st, Created: t0.Add(-age)}
	}
	for _, tc := range []struct {
		name  string
		nodes []NodeFacts
		want  []string
	}{
		{"nodes that never reached Online go first, then the newest", []NodeFacts{
			aged("old-online", NodeOnline, 3*time.Hour), aged("new-online", NodeOnline, time.Hour),
			aged("oldest-joining", NodeJoining, 5*time.Hour),
		}, []string{"oldest-joining", "new-online", "old-online"}},
		{"an Offline node holds bricks and is not preferred over a newer Online one", []NodeFacts{
			aged("old-offline", NodeOffline, 3*time.Hour), aged("new-online", NodeOnline, time.Hour),
		}, []string{"new-online", "old-offline"}},
		{"a node not synced yet, Pending and Provisioning hold no bricks either", []NodeFacts{
			aged("online", NodeOnline, 0), aged("unsynced", "", time.Hour), aged("pending", NodePending, 2*time.Hour),
			aged("provisioning", NodeProvisioning, 3*time.Hour),
		}, []string{"unsynced", "pending", "provisioning", "online"}},
		{"nodes of the same age go by name, descending", []NodeFacts{
			aged("a", NodeOnline, time.Hour), aged("c", NodeOnline, time.Hour), aged("b", NodeOnline, time.Hour),
		}, []string{"c", "b", "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := slices.Clone(tc.nodes)
			if got := names(ScaleDownOrder(tc.nodes)); !slices.Equal(got, tc.want) {
				t.Errorf("ScaleDownOrder = %v, want %v", got, tc.want)
			}
			if !reflect.DeepEqual(in, tc.nodes) {
				t.Error("ScaleDownOrder modified its input")
			}
		})
	}
}

func TestScaleDownOrderIsAPermutationWithNeverOnlineNodesFirst(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for range 50000 {
		nodes := randomNodeFacts(r)
		got := ScaleDownOrder(nodes)
		fail := func(rule string) { t.Fatalf("%s\nnodes %+v\norder %v", rule, nodes, names(got)) }
		if a, b := slices.Sorted(slices.Values(names(nodes))), slices.Sorted(slices.Values(names(got))); !slices.Equal(a, b) {
			fail("the order is not a permutation of the nodes")
		}
		for i := 1; i < len(got); i++ {
			a, b := got[i-1], got[i]
			an, bn := NodeMeaning(a.State).NeverOnline(), NodeMeaning(b.State).NeverOnline()
			switch {
			case !an && bn:
				fail("a node that was Online goes before one that never was")
			case an != bn:
			case a.Created.Before(b.Created):
				fail("an older node goes before a newer one")
			case a.Created.Equal(b.Created) && a.Name < b.Name:
				fail("nodes of the same age are not in descending name order")
			}
		}
	}
}

func TestDesiredNodes(t *testing.T) {
	for _, tc := range []struct {
		name      string
		templates []TemplateFacts
		want      int
	}{
		{"no templates, no nodes", nil, 0},
		{"the fixed counts add up", []TemplateFacts{{Nodes: ptrTo(2)}, {Nodes: ptrTo(3)}}, 5},
		{"a template without a fixed count asks for its minimum", []TemplateFacts{{Nodes: ptrTo(2)}, {MinNodes: 1, MaxNodes: ptrTo(4)}}, 3},
		{"a fixed count wins over a minimum", []TemplateFacts{{Nodes: ptrTo(0), MinNodes: 3}}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := DesiredNodes(tc.templates); got != tc.want {
				t.Errorf("DesiredNodes = %d, want %d", got, tc.want)
			}
		})
	}
}

func ptrTo(n int) *int { return &n }

func TestTemplateTargets(t *testing.T) {
	tmpl := func(zone string, lo, hi int) TemplateFacts {
		return TemplateFacts{Zone: zone, MinNodes: lo, MaxNodes: ptrTo(hi)}
	}
	three := []TemplateFacts{tmpl("za", 1, 5), tmpl("zb", 1, 5), tmpl("zc", 1, 5)}
	for _, tc := range []struct {
		name      string
		templates []TemplateFacts
		automatic bool
		desired   int
		current   []int
		want      []int
	}{
		{"manual mode takes the fixed counts, whatever desired says", []TemplateFacts{{Nodes: ptrTo(2)}, {Nodes: ptrTo(1), MinNodes: 4}, {}}, false, 9, []int{0, 0, 0}, []int{2, 1, 0}},
		{"the total is spread evenly over zones", three, true, 6, []int{0, 0, 0}, []int{2, 2, 2}},
		{"an uneven remainder stays where nodes already are", three, true, 4, []int{1, 1, 2}, []int{1, 1, 2}},
		{"scaling down takes from the largest zone", three, true, 4, []int{2, 1, 2}, []int{2, 1, 1}},
		{"maxNodes caps a template and the rest goes elsewhere", []TemplateFacts{tmpl("za", 1, 1), tmpl("zb", 1, 5)}, true, 4, []int{0, 0}, []int{1, 3}},
		{"minNodes wins over a smaller total", []TemplateFacts{tmpl("za", 2, 5), tmpl("zb", 2, 5)}, true, 1, []int{2, 2}, []int{2, 2}},
		{"two templates sharing a zone count together", []TemplateFacts{tmpl("za", 1, 5), tmpl("za", 1, 5), tmpl("zb", 1, 5)}, true, 4, []int{0, 0, 0}, []int{1, 1, 2}},
		{"what no template has room for is dropped", []TemplateFacts{tmpl("za", 0, 1), tmpl("zb", 0, 2)}, true, 7, []int{0, 0}, []int{1, 2}},
		{"a template without a maximum takes the rest", []TemplateFacts{tmpl("za", 0, 1), {Zone: "zb"}}, true, 7, []int{0, 0}, []int{1, 6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TemplateTargets(tc.templates, tc.automatic, tc.desired, tc.current); !slices.Equal(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTemplateTargetsStayInBoundsAndBalanceZones(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 50000 {
		var ts []TemplateFacts
		current := []int{}
		for range 1 + r.IntN(5) {
			tf := TemplateFacts{Zone: fmt.Sprintf("z%d", r.IntN(3)), MinNodes: r.IntN(3)}
			if r.IntN(3) > 0 {
				tf.MaxNodes = ptrTo(tf.MinNodes + r.IntN(4))
			}
			if r.IntN(2) == 0 {
				tf.Nodes = ptrTo(r.IntN(5))
			}
			ts = append(ts, tf)
			current = append(current, r.IntN(5))
		}
		automatic, desired := r.IntN(4) > 0, r.IntN(20)
		got := TemplateTargets(ts, automatic, desired, current)
		fail := func(rule string) {
			t.Fatalf("%s\ntemplates %+v\nautomatic %t desired %d current %v\ntargets %v", rule, ts, automatic, desired, current, got)
		}
		if len(got) != len(ts) {
			fail("not one target per template")
		}
		if !automatic {
			for i, tf := range ts {
				if tf.Nodes != nil && got[i] != *tf.Nodes || tf.Nodes == nil && got[i] != 0 {
					fail("a manual target is not the template's fixed count")
				}
			}
			continue
		}
		sum, mins, capacity, bounded := 0, 0, 0, true
		zone, zoneMin, full := map[string]int{}, map[string]int{}, map[string]bool{}
		for i, tf := range ts {
			if got[i] < tf.MinNodes || tf.MaxNodes != nil && got[i] > *tf.MaxNodes {
				fail("a target is outside its template's bounds")
			}
			sum, mins = sum+got[i], mins+tf.MinNodes
			zone[tf.Zone] += got[i]
			zoneMin[tf.Zone] += tf.MinNodes
			if _, ok := full[tf.Zone]; !ok {
				full[tf.Zone] = true
			}
			if tf.MaxNodes == nil {
				bounded, full[tf.Zone] = false, false
			} else {
				capacity += *tf.MaxNodes
				full[tf.Zone] = full[tf.Zone] && got[i] == *tf.MaxNodes
			}
		}
		want := desired
		if bounded {
			want = min(desired, capacity)
		}
		if sum != max(mins, want) {
			fail("the targets do not add up to desired, within the minimums and the capacity")
		}
		// A zone more than one ahead of another got nothing beyond its
		// minimums, or the other has no room left.
		for a, na := range zone {
			for b, nb := range zone {
				if na > nb+1 && na != zoneMin[a] && !full[b] {
					fail(fmt.Sprintf("zone %s has %d nodes and %s only %d, though %s had room", a, na, b, nb, b))
				}
			}
		}
	}
}
