package states

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestNextBatch(t *testing.T) {
	cands := []NodeFacts{{Name: "n-a", Zone: "z1"}, {Name: "n-b", Zone: "z1"}, {Name: "n-c", Zone: "z2"}, {Name: "n-d", Zone: "z2"}}
	for _, tc := range []struct {
		name        string
		candidates  []NodeFacts
		maxParallel int
		perZone     bool
		want        []string
	}{
		{"no candidates, no batch", nil, 3, false, nil},
		{"one at a time by default", cands, 0, false, []string{"n-a"}},
		{"a negative parallelism still upgrades one", cands, -2, true, []string{"n-a"}},
		{"across zones: the first ones in upgrade order", cands, 3, false, []string{"n-a", "n-b", "n-c"}},
		{"per zone: the batch stays in the first candidate's zone", cands, 3, true, []string{"n-a", "n-b"}},
		{"per zone skips other zones' nodes, not just stops at them", []NodeFacts{{Name: "x", Zone: "z1"}, {Name: "y", Zone: "z2"}, {Name: "z", Zone: "z1"}}, 2, true, []string{"x", "z"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := NextBatch(tc.candidates, tc.maxParallel, tc.perZone); !slices.Equal(got, tc.want) {
				t.Errorf("NextBatch = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestUpgradeBatch(t *testing.T) {
	cands := []NodeFacts{{Name: "n-a", Zone: "z1"}, {Name: "n-b", Zone: "z1"}, {Name: "n-c", Zone: "z2"}}
	for _, tc := range []struct {
		name    string
		current []string
		want    []string
	}{
		{"nothing selected: the next batch", nil, []string{"n-a", "n-b"}},
		{"a selected batch keeps its turn, in candidate order", []string{"n-c", "n-b"}, []string{"n-b", "n-c"}},
		{"a selected node that is no candidate any more drops out", []string{"n-c", "gone"}, []string{"n-c"}},
		{"a batch none of whose nodes is a candidate gives way to the next", []string{"gone"}, []string{"n-a", "n-b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpgradeBatch(cands, tc.current, 2, false); !slices.Equal(got, tc.want) {
				t.Errorf("UpgradeBatch(%v) = %v, want %v", tc.current, got, tc.want)
			}
		})
	}
}

func TestNextBatchIsABoundedOrderedSubsetOfOneZone(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for range 50000 {
		cands := CountNodes(randomNodeFacts(r), "11.1").Candidates
		maxParallel, perZone := r.IntN(5)-1, r.IntN(2) == 0
		got := NextBatch(cands, maxParallel, perZone)
		fail := func(rule string) {
			t.Fatalf("%s\ncandidates %+v\nmaxParallel %d perZone %t\nbatch %v", rule, cands, maxParallel, perZone, got)
		}
		if len(got) > max(1, maxParallel) {
			fail("the batch is larger than maxParallel (at least one)")
		}
		if (len(got) == 0) != (len(cands) == 0) {
			fail("a batch is empty with candidates, or not without")
		}
		last, eligible := -1, 0
		for _, c := range cands {
			if !perZone || c.Zone == cands[0].Zone {
				eligible++
			}
		}
		if len(got) != min(eligible, max(1, maxParallel)) {
			fail("the batch leaves out an eligible candidate it had room for")
		}
		for _, name := range got {
			i := slices.IndexFunc(cands, func(c NodeFacts) bool { return c.Name == name })
			switch {
			case i < 0:
				fail("the batch names a node that is no candidate")
			case i <= last:
				fail("the batch is not in candidate order")
			case perZone && cands[i].Zone != cands[0].Zone:
				fail("a per-zone batch spans two zones")
			}
			last = i
		}
		current := []string{"n00", "n05", "n11"}[:r.IntN(4)]
		kept := UpgradeBatch(cands, current, maxParallel, perZone)
		for _, name := range kept {
			if !slices.ContainsFunc(cands, func(c NodeFacts) bool { return c.Name == name }) {
				fail("the upgrade batch names a node that is no candidate")
			}
		}
	}
}
