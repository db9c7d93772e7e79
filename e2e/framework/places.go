package framework

import (
	"sync"
	"time"
)

// Places lets at most a fixed number of a package's parallel tests run at
// once, as go test's -parallel does, but hands the places out in an order
// of its own rather than in the order the tests happen to reach them: the
// tests that take minutes start first, so that none of them is the last to
// start and runs on alone while the others' places stand empty (a set of
// tests takes about its tests' total time over the places, not that plus
// its longest test).
//
// A test queues (Queue) before it calls t.Parallel, so every top-level
// test is queued before go test lets the first parallel one run, and
// takes its place (Take) after t.Parallel returns. go test's own -parallel
// must then be at least the number of tests, or it could hold back a test
// whose turn has come.
type Places struct {
	mu      sync.Mutex
	size    int
	free    int
	waiting []*Place
}

// Rank says which tests a place goes to first.
type Rank int

const (
	// RankSub is a subtest of a test that runs and takes no place of its
	// own: it waits for its subtests, so they go before every other.
	RankSub Rank = iota
	// RankLong is a test that takes minutes.
	RankLong
	// RankShort is any other.
	RankShort
)

// Place is one test's turn.
type Place struct {
	rank  Rank
	given chan struct{}
}

// NewPlaces lets size tests run at once (at least one).
func NewPlaces(size int) *Places {
	size = max(size, 1)
	return &Places{size: size, free: size}
}

// Size is how many tests run at once.
func (p *Places) Size() int { return p.size }

// Queue puts a test in the queue: after every waiting test of its rank or
// a lower one, before the rest.
func (p *Places) Queue(rank Rank) *Place {
	w := &Place{rank: rank, given: make(chan struct{})}
	p.mu.Lock()
	defer p.mu.Unlock()
	i := len(p.waiting)
	for i > 0 && p.waiting[i-1].rank > rank {
		i--
	}
	p.waiting = append(p.waiting[:i], append([]*Place{w}, p.waiting[i:]...)...)
	return w
}

// Take waits until w is given a place and says how long it waited. Places
// are handed out only from here and Release, so none goes before every
// test is queued.
func (p *Places) Take(w *Place) time.Duration {
	start := time.Now()
	p.mu.Lock()
	p.handOut()
	p.mu.Unlock()
	<-w.given
	return time.Since(start)
}

// Release gives back the place of a test that has ended.
func (p *Places) Release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free++
	p.handOut()
}

// handOut gives the free places to the first tests in the queue.
func (p *Places) handOut() {
	for p.free > 0 && len(p.waiting) > 0 {
		close(p.waiting[0].given)
		p.waiting = p.waiting[1:]
		p.free--
	}
}
