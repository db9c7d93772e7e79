package states

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

func TestNodeCounts(t *testing.T) {
	for _, tc := range []struct {
		name string
		n    NodeFacts
		want bool
	}{
		{"an Online node counts", NodeFacts{State: NodeOnline}, true},
		{"a node not synced yet counts", NodeFacts{}, true},
		{"an Offline node counts: it may come back within its deadline", NodeFacts{State: NodeOffline}, true},
		{"a Failed node counts: GD2 cannot move its bricks to a replacement, it is expected back as the same peer", NodeFacts{State: NodeFailed}, true},
		{"a node held for maintenance counts", NodeFacts{State: NodeMaintenance}, true},
		{"an upgrading node counts", NodeFacts{State: NodeRestarting}, true},
		{"a draining node does not count", NodeFacts{State: NodeDraining}, false},
		{"an abandoned node does not count", NodeFacts{State: NodeAbandoned}, false},
		{"a deleted node does not count", NodeFacts{State: NodeDeleted}, false},
		{"a node asked to decommission does not count, whatever its state", NodeFacts{State: NodeOnline, DecommissionRequested: true}, false},
		{"a node being deleted does not count, whatever its state", NodeFacts{State: NodeOnline, Deleting: true}, false},
		{"a node in a state nobody knows counts: nothing says it left", NodeFacts{State: "Bogus"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NodeCounts(tc.n); got != tc.want {
				t.Errorf("NodeCounts(%+v) = %t, want %t", tc.n, got, tc.want)
			}
		})
	}
}

func TestCountNodes(t *testing.T) {
	nodes := []NodeFacts{
		{Name: "new", State: ""},
		{Name: "joining", State: NodeJoining},
		{Name: "b-old", Zone: "z2", State: NodeOnline, Version: "10.4"},
		{Name: "a-old", Zone: "z2", State: NodeOnline, Version: "10.4"},
		{Name: "c-old", Zone: "z1", State: NodeOnline, Version: "10.4"},
		{Name: "done", Zone: "z1", State: NodeOnline, Version: "11.1"},
		{Name: "restarting", State: NodeRestarting, Version: "10.4"},
		{Name: "held", State: NodeMaintenance},
		{Name: "offline", State: NodeOffline},
		{Name: "failed", State: NodeFailed, Version: "9.9"},
		{Name: "draining", State: NodeDraining, Version: "8.0"},
		{Name: "abandoned", State: NodeAbandoned},
		{Name: "deleted", State: NodeDeleted},
		{Name: "asked", State: NodeOnline, DecommissionRequested: true, Version: "7.0"},
		{Name: "deleting", State: NodeDraining, Deleting: true},
		{Name: "unknown", State: "Bogus"},
	}
	got := CountNodes(nodes, "11.1")
	want := NodeTally{
		All: 16,
		// Draining, Abandoned, and the deleting node's Draining; a Deleted
		// node has left and is not waited for.
		Leaving: 3,
		// Not the leaving, deleted, asked-to-decommission or deleting ones.
		Counted: 11,
		Joining: 2, Online: 4, Upgrading: 1, Maintenance: 1, Unhealthy: 2,
		ServerVersions: []string{"10.4", "11.1", "9.9"},
		AtTarget:       1,
		Candidates: []NodeFacts{
			{Name: "c-old", Zone: "z1", State: NodeOnline, Version: "10.4"},
			{Name: "a-old", Zone: "z2", State: NodeOnline, Version: "10.4"},
			{Name: "b-old", Zone: "z2", State: NodeOnline, Version: "10.4"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("CountNodes =\n%+v\nwant\n%+v", got, want)
	}

	var cs ClusterSnapshot
	got.FillCluster(&cs)
	if cs.NodesAll != 16 || cs.NodesLeaving != 3 || cs.NodesTotal != 11 || cs.NodesOnline != 5 ||
		cs.NodesMaintenance != 1 || cs.NodesJoining != 2 || cs.NodesUnhealthy != 2 {
		t.Errorf("cluster counts %+v: an upgrading node counts as Online for the cluster", cs)
	}
	var us UpgradeSnapshot
	got.FillUpgrade(&us)
	if us.NodesTotal != 11 || us.NodesOnline != 4 || us.NodesUpgrading != 1 || us.NodesAtTarget != 1 ||
		!slices.Equal(us.ServerVersions, want.ServerVersions) {
		t.Errorf("upgrade counts %+v: only the Online state is Online for the upgrade", us)
	}
}

// randomNodeFacts returns an arbitrary cluster of up to a dozen nodes in
// any state (unknown ones included), zone, age, request and version, with
// unique names in no particular order.
func randomNodeFacts(r *rand.Rand) []NodeFacts {
	def := NodeDefinition()
	known := []fsm.State{"", "Bogus"}
	for _, s := range def.States {
		known = append(known, s.Name)
	}
	versions := []string{"", "10.4", "11.1"}
	var out []NodeFacts
	for _, n := range r.Perm(r.IntN(13)) {
		out = append(out, NodeFacts{
			Name: fmt.Sprintf("n%02d", n), Zone: fmt.Sprintf("z%d", r.IntN(3)),
			State: known[r.IntN(len(known))],
			// Few distinct ages, so that ties are common.
			Created:  t0.Add(-time.Duration(r.IntN(4)) * time.Hour),
			Deleting: r.IntN(6) == 0, DecommissionRequested: r.IntN(6) == 0,
			Version: versions[r.IntN(len(versions))],
		})
	}
	return out
}

func TestCountNodesTotalsAddUp(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	versions := []string{"", "10.4", "11.1"}
	for range 50000 {
		nodes := randomNodeFacts(r)
		target := versions[r.IntN(len(versions))]
		got := CountNodes(nodes, target)
		fail := func(rule string) { t.Fatalf("%s\nnodes %+v\ntarget %q\ntally %+v", rule, nodes, target, got) }

		var counted, leaving, unknown int
		seen := map[string]bool{}
		for _, n := range nodes {
			m := NodeMeaning(n.State)
			if m.Leaving() {
				leaving++
			}
			if NodeCounts(n) {
				counted++
				if m.Class == NodeClassUnknown {
					unknown++
				}
				if n.Version != "" {
					seen[n.Version] = true
				}
			}
		}
		if got.All != len(nodes) || got.Counted != counted || got.Leaving != leaving {
			fail("all, counted or leaving is not what the nodes say")
		}
		if got.Leaving+got.Counted > got.All {
			fail("a leaving node was counted")
		}
		if got.Joining+got.Online+got.Upgrading+got.Maintenance+got.Unhealthy+unknown != got.Counted {
			fail("the classes do not add up to the counted nodes")
		}
		if got.AtTarget+len(got.Candidates) != got.Online {
			fail("an Online node is neither at the target nor a candidate")
		}
		for _, c := range got.Candidates {
			if !NodeCounts(c) || NodeMeaning(c.State).Class != NodeClassOnline || c.Version == target {
				fail("a candidate is not a counted Online node off the target")
			}
		}
		if !slices.IsSortedFunc(got.Candidates, func(a, b NodeFacts) int {
			return cmp.Or(cmp.Compare(a.Zone, b.Zone), cmp.Compare(a.Name, b.Name))
		}) {
			fail("the candidates are not in upgrade order")
		}
		if !slices.IsSorted(got.ServerVersions) || len(slices.Compact(slices.Clone(got.ServerVersions))) != len(got.ServerVersions) || len(got.ServerVersions) != len(seen) {
			fail("the server versions are not the counted nodes' distinct versions, sorted")
		}
		for _, v := range got.ServerVersions {
			if !seen[v] {
				fail("a server version no counted node runs")
			}
		}
		var cs ClusterSnapshot
		got.FillCluster(&cs)
		if cs.NodesOnline+cs.NodesMaintenance+cs.NodesJoining+cs.NodesUnhealthy > cs.NodesTotal || cs.NodesTotal > cs.NodesAll {
			fail("the cluster's counts exceed their totals")
		}
	}
}
