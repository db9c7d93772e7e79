package framework

import (
	"sync"
	"testing"
)

// The places go to the subtests of running tests first, then to the long
// tests, then to the rest, each rank in the order it queued; never more
// than the size at once, and none before the first Take.
func TestPlacesGoLongestFirst(t *testing.T) {
	p := NewPlaces(2)
	type queued struct {
		name string
		w    *Place
	}
	var all []queued
	for _, q := range []struct {
		name string
		rank Rank
	}{{"short1", RankShort}, {"long1", RankLong}, {"short2", RankShort}, {"long2", RankLong}, {"long3", RankLong}} {
		all = append(all, queued{q.name, p.Queue(q.rank)})
	}
	given := func() []string {
		var names []string
		for _, q := range all {
			select {
			case <-q.w.given:
				names = append(names, q.name)
			default:
			}
		}
		return names
	}
	if g := given(); len(g) != 0 {
		t.Fatalf("places given before any test took one: %v", g)
	}
	// short1 reaches its Take first; the places still go to the long ones.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); p.Take(all[0].w) }()
	long1 := all[1].w
	p.Take(long1)
	if g := given(); len(g) != 2 || g[0] != "long1" || g[1] != "long2" {
		t.Fatalf("first places went to %v, want long1 and long2", g)
	}
	sub := p.Queue(RankSub)
	p.Release()
	select {
	case <-sub.given:
	default:
		t.Fatal("a subtest of a running test did not go first")
	}
	if g := given(); len(g) != 2 {
		t.Fatalf("more places given than released: %v", g)
	}
	p.Release()
	if g := given(); len(g) != 3 || g[2] != "long3" {
		t.Fatalf("after the subtest the next place went to %v, want long3", g)
	}
	p.Release()
	// given lists in the order of queueing: short1, long1, long2, long3.
	if g := given(); len(g) != 4 || g[0] != "short1" || g[3] != "long3" {
		t.Fatalf("after three releases the places went to %v, want short1 next (not short2)", g)
	}
	wg.Wait()
	p.Release()
	p.Release()
	if g := given(); len(g) != 5 {
		t.Fatalf("every test should have had a place: %v", g)
	}
}
