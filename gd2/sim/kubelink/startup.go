package kubelink

import (
	"sync"
	"time"

	"github.com/gluster/anthill/gd2/sim"
)

// startupSink models GD2's start-up time: a host whose pod has just become
// Ready is reported alive only after delay (GD2 reaching its store and
// spawning its bricks), so a restart costs what it costs on a real server.
// Going down is reported at once.
type startupSink struct {
	next   HostSink
	delay  time.Duration
	report func(error)

	mu     sync.Mutex
	up     map[string]time.Time // host → when its pod was first seen Ready
	latest map[string]sim.HostSpec
	timers map[string]*time.Timer
	closed bool
}

func newStartupSink(next HostSink, delay time.Duration, report func(error)) *startupSink {
	return &startupSink{next: next, delay: delay, report: report,
		up: map[string]time.Time{}, latest: map[string]sim.HostSpec{}, timers: map[string]*time.Timer{}}
}

// UpsertHost forwards h, holding back its liveness until the host has been
// Ready for the whole delay.
func (s *startupSink) UpsertHost(h sim.HostSpec) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.latest[h.Name] = h
	if !h.Alive {
		delete(s.up, h.Name)
		s.mu.Unlock()
		return s.next.UpsertHost(h)
	}
	since, ok := s.up[h.Name]
	if !ok {
		since = time.Now()
		s.up[h.Name] = since
	}
	wait := s.delay - time.Since(since)
	if wait > 0 {
		if t := s.timers[h.Name]; t != nil {
			t.Stop()
		}
		name := h.Name
		s.timers[name] = time.AfterFunc(wait, func() { s.release(name) })
		h.Alive = false
	}
	s.mu.Unlock()
	return s.next.UpsertHost(h)
}

// release forwards the latest spec of a host whose delay has passed.
func (s *startupSink) release(name string) {
	s.mu.Lock()
	h, ok := s.latest[name]
	_, up := s.up[name]
	delete(s.timers, name)
	if s.closed || !ok || !up {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	if err := s.UpsertHost(h); err != nil {
		s.report(err)
	}
}

// close stops pending releases.
func (s *startupSink) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for _, t := range s.timers {
		t.Stop()
	}
}
