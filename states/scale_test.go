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
	holding := func(n NodeFacts, bricks int) NodeFacts {
		n.Bricks = bricks
		return n
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
		{"the node with the fewest bricks goes first, however old", []NodeFacts{
			holding(aged("new-full", NodeOnline, time.Hour), 4), holding(aged("old-empty", NodeOnline, 5*time.Hour), 0),
			holding(aged("mid-some", NodeOnline, 3*time.Hour), 2),
		}, []string{"old-empty", "mid-some", "new-full"}},
		{"nodes with as many bricks go newest first, then by name, descending", []NodeFacts{
			holding(aged("old", NodeOnline, 3*time.Hour), 2), holding(aged("new", NodeOnline, time.Hour), 2),
			holding(aged("a", NodeOnline, time.Hour), 2), holding(aged("fewer", NodeOnline, 0), 1),
		}, []string{"fewer", "new", "a", "old"}},
		{"a node that never reached Online goes first even when counted with bricks", []NodeFacts{
			holding(aged("online-empty", NodeOnline, time.Hour), 0), holding(aged("joining", NodeJoining, 2*time.Hour), 3),
		}, []string{"joining", "online-empty"}},
		{"an Offline node with fewer bricks goes before an Online one with more", []NodeFacts{
			holding(aged("online", NodeOnline, 3*time.Hour), 5), holding(aged("offline", NodeOffline, 5*time.Hour), 1),
		}, []string{"offline", "online"}},
		{"without brick counts (GD2 did not answer) the newest goes first, as before", []NodeFacts{
			aged("old", NodeOnline, 3*time.Hour), aged("new", NodeOnline, time.Hour), aged("mid", NodeOffline, 2*time.Hour),
		}, []string{"new", "mid", "old"}},
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
		for i := range nodes {
			// Few distinct counts, so that ties are common.
			nodes[i].Bricks = r.IntN(3)
		}
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
			case a.Bricks > b.Bricks:
				fail("a node with more bricks goes before one with fewer")
			case a.Bricks < b.Bricks:
			case a.Created.Before(b.Created):
				fail("an older node goes before a newer one with as many bricks")
			case a.Created.Equal(b.Created) && a.Name < b.Name:
				fail("nodes of the same age and brick count are not in descending name order")
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
		{"the autoscaler's recorded count is asked for", []TemplateFacts{{MinNodes: 1, MaxNodes: ptrTo(4), Desired: ptrTo(3)}, {MinNodes: 1, MaxNodes: ptrTo(4)}}, 4},
		{"a recorded count outside the bounds is brought within them", []TemplateFacts{{MinNodes: 2, MaxNodes: ptrTo(4), Desired: ptrTo(1)}, {MinNodes: 1, MaxNodes: ptrTo(2), Desired: ptrTo(5)}}, 4},
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
	auto := func(lo, hi int, desired *int) TemplateFacts {
		return TemplateFacts{Zone: "z", MinNodes: lo, MaxNodes: ptrTo(hi), Desired: desired}
	}
	for _, tc := range []struct {
		name      string
		templates []TemplateFacts
		automatic bool
		want      []int
	}{
		{"manual mode takes the fixed counts", []TemplateFacts{{Nodes: ptrTo(2)}, {Nodes: ptrTo(1), MinNodes: 4}, {}}, false, []int{2, 1, 0}},
		{"manual mode ignores a recorded count", []TemplateFacts{{Nodes: ptrTo(2), Desired: ptrTo(5)}}, false, []int{2}},
		{"automatic mode starts every template at its minimum", []TemplateFacts{auto(1, 5, nil), auto(2, 5, nil)}, true, []int{1, 2}},
		{"automatic mode takes the recorded counts", []TemplateFacts{auto(1, 5, ptrTo(3)), auto(1, 5, ptrTo(1))}, true, []int{3, 1}},
		{"a lowered maxNodes wins over a recorded count", []TemplateFacts{auto(1, 2, ptrTo(4))}, true, []int{2}},
		{"a raised minNodes wins over a recorded count", []TemplateFacts{auto(3, 5, ptrTo(1))}, true, []int{3}},
		{"a template without a maximum keeps its recorded count", []TemplateFacts{{MinNodes: 1, Desired: ptrTo(9)}}, true, []int{9}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := TemplateTargets(tc.templates, tc.automatic); !slices.Equal(got, tc.want) {
				t.Errorf("targets %v, want %v", got, tc.want)
			}
		})
	}
}

func TestTemplateTargetsStayInBoundsAndAddUpToDesiredNodes(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for range 50000 {
		var ts []TemplateFacts
		for range 1 + r.IntN(5) {
			tf := TemplateFacts{Zone: fmt.Sprintf("z%d", r.IntN(3)), MinNodes: 1 + r.IntN(3)}
			tf.MaxNodes = ptrTo(tf.MinNodes + r.IntN(4))
			if r.IntN(3) > 0 {
				tf.Desired = ptrTo(r.IntN(9))
			}
			ts = append(ts, tf)
		}
		got := TemplateTargets(ts, true)
		sum := 0
		for i, tf := range ts {
			if got[i] < tf.MinNodes || got[i] > *tf.MaxNodes {
				t.Fatalf("target %d of %+v is outside its bounds", got[i], tf)
			}
			if tf.Desired != nil && *tf.Desired >= tf.MinNodes && *tf.Desired <= *tf.MaxNodes && got[i] != *tf.Desired {
				t.Fatalf("target %d of %+v is not its recorded count, which is within bounds", got[i], tf)
			}
			sum += got[i]
		}
		if sum != DesiredNodes(ts) {
			t.Fatalf("targets %v add up to %d, DesiredNodes says %d", got, sum, DesiredNodes(ts))
		}
	}
}

func TestPlanScale(t *testing.T) {
	fixed := func(name string, n int) TemplateFacts { return TemplateFacts{Name: name, Zone: name, Nodes: ptrTo(n)} }
	node := func(name, template string, st fsm.State, bricks int) NodeFacts {
		return NodeFacts{Name: name, Template: template, State: st, Bricks: bricks, Created: t0.Add(-time.Hour)}
	}
	online := func(name, template string, bricks int) NodeFacts { return node(name, template, NodeOnline, bricks) }
	asked := online("asked", "z1", 0)
	asked.DecommissionRequested = true
	deleting := online("deleting", "z1", 0)
	deleting.Deleting = true
	cases := []struct {
		name             string
		templates        []TemplateFacts
		nodes            []NodeFacts
		automatic        bool
		wantCreate       []int
		wantDecommission []string
	}{
		{name: "a new cluster gains every template's nodes, a template's entries next to each other in spec order",
			templates: []TemplateFacts{fixed("z1", 2), fixed("z2", 1)}, wantCreate: []int{0, 0, 1}},
		{name: "a cluster at its targets plans nothing",
			templates: []TemplateFacts{fixed("z1", 1), fixed("z2", 1)}, nodes: []NodeFacts{online("a", "z1", 3), online("b", "z2", 3)}},
		{name: "a template over its target loses its surplus, the node holding the fewest bricks first",
			templates: []TemplateFacts{fixed("z1", 1)}, nodes: []NodeFacts{online("a", "z1", 1), online("b", "z1", 5), online("c", "z1", 3)},
			wantDecommission: []string{"a", "c"}},
		{name: "a node that never was Online goes before any node holding bricks",
			templates: []TemplateFacts{fixed("z1", 1)}, nodes: []NodeFacts{online("a", "z1", 0), node("p", "z1", NodeProvisioning, 0)},
			wantDecommission: []string{"p"}},
		{name: "nodes leaving, or asked to, do not count, so their template gains replacements",
			templates: []TemplateFacts{fixed("z1", 2)}, nodes: []NodeFacts{asked, deleting, node("draining", "z1", NodeDraining, 4), online("a", "z1", 2)},
			wantCreate: []int{0}},
		{name: "a node whose template is no longer in the spec is never asked to leave",
			templates: []TemplateFacts{fixed("z1", 1)}, nodes: []NodeFacts{online("a", "z1", 2), online("old", "gone", 0)}},
		{name: "a node added by hand is never asked to leave",
			templates: []TemplateFacts{fixed("z1", 0)}, nodes: []NodeFacts{online("by-hand", "", 0)}},
		{name: "a surplus in one template does not make up for a shortage in another",
			templates: []TemplateFacts{fixed("z1", 1), fixed("z2", 2)}, nodes: []NodeFacts{online("a", "z1", 2), online("b", "z1", 1), online("c", "z2", 0)},
			wantCreate: []int{1}, wantDecommission: []string{"b"}},
		{name: "in automatic mode a template goes to the count the autoscaler recorded",
			templates: []TemplateFacts{{Name: "z1", MinNodes: 1, MaxNodes: ptrTo(5), Desired: ptrTo(3)}, {Name: "z2", MinNodes: 1, MaxNodes: ptrTo(5), Desired: ptrTo(1)}},
			nodes:     []NodeFacts{online("a", "z1", 1), online("b", "z2", 1), online("c", "z2", 2)}, automatic: true,
			wantCreate: []int{0, 0}, wantDecommission: []string{"b"}},
		{name: "in automatic mode a template without a recorded count stays at its minimum",
			templates: []TemplateFacts{{Name: "z1", MinNodes: 2, MaxNodes: ptrTo(5)}}, automatic: true, wantCreate: []int{0, 0}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes := slices.Clone(tc.nodes)
			got := PlanScale(tc.templates, tc.nodes, tc.automatic)
			if !slices.Equal(got.Create, tc.wantCreate) || !slices.Equal(got.Decommission, tc.wantDecommission) {
				t.Fatalf("plan creates from %v and decommissions %v; want %v and %v", got.Create, got.Decommission, tc.wantCreate, tc.wantDecommission)
			}
			if !reflect.DeepEqual(nodes, tc.nodes) {
				t.Error("PlanScale modified its input")
			}
		})
	}
}
