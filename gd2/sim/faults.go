package sim

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"
)

// Faults injects failures into GD2 routes. Rates are probabilities per
// request in [0,1]; decisions come from a generator seeded with
// Config.Seed, so the same request sequence fails the same way every run.
type Faults struct {
	// ErrorRate answers 500 without running the operation (code 2 for
	// operations on GD2's v1 transaction engine, code 1 otherwise).
	ErrorRate float64 `json:"errorRate,omitempty"`
	// ConflictRate answers GD2's 409 lock error without running it.
	ConflictRate float64 `json:"conflictRate,omitempty"`
	// HangRate runs the operation, then holds the response until the client
	// gives up (or HangFor passes) and drops the connection, like a GD2
	// handler outliving its 30 s write timeout.
	HangRate float64 `json:"hangRate,omitempty"`
	// HangFor bounds a hang; default 35 s (past GD2's write timeout).
	HangFor time.Duration `json:"hangFor,omitempty"`
	// Latency is added before every operation.
	Latency time.Duration `json:"latency,omitempty"`
	// PerOp overrides the rates for one operation name (see /endpoints).
	PerOp map[string]OpFaults `json:"perOp,omitempty"`
	// HealTriggerFailRate fails heal triggers (POST /v1/volumes/{v}/heal)
	// the way GD2 does when its brick-op RPC to the self-heal daemon fails:
	// after the liveness gate, 500 with one code-2 error per brick node at
	// step selfheal.Heal, while the daemon keeps crawling (the backlog
	// drains as if the trigger had worked). It shares the request's one
	// draw with the other rates, after them.
	HealTriggerFailRate float64 `json:"healTriggerFailRate,omitempty"`
}

// OpFaults are the rates for one operation.
type OpFaults struct {
	ErrorRate    float64       `json:"errorRate,omitempty"`
	ConflictRate float64       `json:"conflictRate,omitempty"`
	HangRate     float64       `json:"hangRate,omitempty"`
	Latency      time.Duration `json:"latency,omitempty"`
}

// Validate checks rates are probabilities summing to at most 1.
func (f Faults) Validate() error {
	check := func(o OpFaults) error {
		for _, r := range []float64{o.ErrorRate, o.ConflictRate, o.HangRate} {
			if r < 0 || r > 1 {
				return errors.New("fault rates must be within [0,1]")
			}
		}
		if o.ErrorRate+o.ConflictRate+o.HangRate > 1 {
			return errors.New("fault rates must sum to at most 1")
		}
		if o.Latency < 0 {
			return errors.New("fault latency must not be negative")
		}
		return nil
	}
	if err := check(f.rates("")); err != nil {
		return err
	}
	if r := f.HealTriggerFailRate; r < 0 || r > 1 {
		return errors.New("heal trigger failure rate must be within [0,1]")
	}
	if o := f.rates(opHealTrigger); o.ErrorRate+o.ConflictRate+o.HangRate+f.HealTriggerFailRate > 1 {
		return errors.New("fault rates of SelfHeal and the heal trigger failure rate must sum to at most 1")
	}
	for _, o := range f.PerOp {
		if err := check(o); err != nil {
			return err
		}
	}
	if f.HangFor < 0 {
		return errors.New("fault hang duration must not be negative")
	}
	return nil
}

func (f Faults) rates(op string) OpFaults {
	if o, ok := f.PerOp[op]; ok {
		return o
	}
	return OpFaults{ErrorRate: f.ErrorRate, ConflictRate: f.ConflictRate, HangRate: f.HangRate, Latency: f.Latency}
}

type faultKind int

const (
	faultNone faultKind = iota
	faultError
	faultConflict
	faultHang
	// faultShdRPC makes a heal trigger's selfheal.Heal step fail on every
	// brick node (the RPC to the self-heal daemon failed).
	faultShdRPC
)

// opHealTrigger is the heal trigger's operation name.
const opHealTrigger = "SelfHeal"

type faultDecision struct {
	kind    faultKind
	latency time.Duration
}

type faultInjector struct {
	mu  sync.Mutex
	rng *rand.Rand
	f   Faults
	// injected counts the faults decided, by kind (see InjectedFaults).
	injected map[string]int
}

// String names a fault kind as InjectedFaults counts it.
func (k faultKind) String() string {
	switch k {
	case faultError:
		return "error"
	case faultConflict:
		return "conflict"
	case faultHang:
		return "hang"
	case faultShdRPC:
		return "shd-rpc"
	}
	return "none"
}

func newFaultInjector(seed int64, f Faults) *faultInjector {
	return &faultInjector{rng: rand.New(rand.NewPCG(uint64(seed), 0x6661756c7473)), f: f}
}

// decide draws exactly one number per request, whatever the rates, so
// changing one rate does not reshuffle the decisions of other requests.
func (fi *faultInjector) decide(op string) faultDecision {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	o := fi.f.rates(op)
	x := fi.rng.Float64()
	d := faultDecision{latency: o.Latency}
	switch {
	case x < o.ErrorRate:
		d.kind = faultError
	case x < o.ErrorRate+o.ConflictRate:
		d.kind = faultConflict
	case x < o.ErrorRate+o.ConflictRate+o.HangRate:
		d.kind = faultHang
	case op == opHealTrigger && x < o.ErrorRate+o.ConflictRate+o.HangRate+fi.f.HealTriggerFailRate:
		d.kind = faultShdRPC
	}
	if d.kind != faultNone {
		if fi.injected == nil {
			fi.injected = map[string]int{}
		}
		fi.injected[d.kind.String()]++
	}
	return d
}

func (fi *faultInjector) hangFor() time.Duration {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if fi.f.HangFor > 0 {
		return fi.f.HangFor
	}
	return 35 * time.Second
}

func (fi *faultInjector) set(f Faults) error {
	if err := f.Validate(); err != nil {
		return err
	}
	fi.mu.Lock()
	defer fi.mu.Unlock()
	fi.f = f
	return nil
}

func (fi *faultInjector) get() Faults {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	return fi.f
}

// SetFaults replaces the fault profile at run time.
func (s *Simulator) SetFaults(f Faults) error { return s.faults.set(f) }

// CurrentFaults returns the fault profile in force.
func (s *Simulator) CurrentFaults() Faults { return s.faults.get() }

// InjectedFaults counts the faults injected since the simulator started,
// by kind: "error" (500), "conflict" (409), "hang" (run, then no
// answer) and "shd-rpc" (a heal trigger's self-heal daemon RPC failed).
// Latency alone is not counted.
func (s *Simulator) InjectedFaults() map[string]int {
	s.faults.mu.Lock()
	defer s.faults.mu.Unlock()
	out := make(map[string]int, len(s.faults.injected))
	for k, v := range s.faults.injected {
		out[k] = v
	}
	return out
}

// ChaosFaults is the "chaos" profile (anthill-dev gd2sim -faults chaos)
// the fault tests run the operator against: one request in five fails — 10 % answer 500, 6 %
// GD2's 409 lock conflict, 4 % run and then hang past GD2's 30 s write
// timeout (the caller cannot tell whether they happened) — and every
// request is 50 ms slower.
func ChaosFaults() Faults {
	return Faults{ErrorRate: 0.10, ConflictRate: 0.06, HangRate: 0.04, Latency: 50 * time.Millisecond}
}
