package kubelink

import (
	"sync"
	"testing"
	"time"

	"github.com/gluster/anthill/gd2/sim"
)

type recordingSink struct {
	mu  sync.Mutex
	got []sim.HostSpec
}

func (r *recordingSink) UpsertHost(h sim.HostSpec) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, h)
	return nil
}

func (r *recordingSink) alive() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []bool
	for _, h := range r.got {
		out = append(out, h.Alive)
	}
	return out
}

func waitAlive(t *testing.T, r *recordingSink, want []bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		got := r.alive()
		if len(got) == len(want) {
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("reported liveness %v, want %v", got, want)
				}
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("reported liveness %v, want %v", got, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestStartupSinkHoldsBackLivenessForTheDelay(t *testing.T) {
	r := &recordingSink{}
	s := newStartupSink(r, 50*time.Millisecond, func(err error) { t.Error(err) })
	defer s.close()

	// A pod that becomes Ready is reported down, then alive after the delay.
	if err := s.UpsertHost(sim.HostSpec{Name: "h", Alive: true}); err != nil {
		t.Fatal(err)
	}
	waitAlive(t, r, []bool{false, true})

	// Going down is immediate, and a pod that goes down again before its
	// delay is over is never reported alive.
	_ = s.UpsertHost(sim.HostSpec{Name: "h", Alive: false})
	_ = s.UpsertHost(sim.HostSpec{Name: "h", Alive: true})
	_ = s.UpsertHost(sim.HostSpec{Name: "h", Alive: false})
	time.Sleep(150 * time.Millisecond)
	waitAlive(t, r, []bool{false, true, false, false, false})
}
