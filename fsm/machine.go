package fsm

import (
	"context"
	"errors"

	looplab "github.com/looplab/fsm"
)

// Machine is one machine instance positioned at a persisted state. It is
// built fresh on every sync (it holds no state worth keeping) and is not
// meant to be shared between goroutines or kept across syncs.
//
// Machine registers no looplab callbacks: side effects belong to actions
// that run before Fire, so that a failed action leaves the state unchanged.
type Machine struct {
	def *Definition
	f   *looplab.FSM
}

// NewMachine returns a machine of d at state current. An undeclared current
// state yields *UnknownStateError; it is checked here because looplab itself
// accepts any string as a state and would silently strand the machine.
// NewMachine does not validate d: definitions are validated by their own
// tests, and Validate is too costly to repeat on every sync.
func (d *Definition) NewMachine(current State) (*Machine, error) {
	if !d.HasState(current) {
		return nil, &UnknownStateError{Machine: d.Machine, State: current}
	}
	descs := make([]looplab.EventDesc, 0, len(d.Transitions))
	for _, t := range d.Transitions {
		src := make([]string, len(t.From))
		for i, f := range t.From {
			src[i] = string(f)
		}
		descs = append(descs, looplab.EventDesc{Name: string(t.Event), Src: src, Dst: string(t.To)})
	}
	return &Machine{def: d, f: looplab.NewFSM(string(current), descs, nil)}, nil
}

// Definition returns the definition the machine was built from.
func (m *Machine) Definition() *Definition { return m.def }

// Current returns the machine's state.
func (m *Machine) Current() State { return State(m.f.Current()) }

// Can reports whether transition event e may fire in the current state.
func (m *Machine) Can(e Event) bool { return m.f.Can(string(e)) }

// CanStep reports whether in-state step e may run in the current state.
func (m *Machine) CanStep(e Step) bool { return m.def.StepAllowed(e, m.Current()) }

// Fire moves the machine along event e and returns the transition taken,
// with From holding the single state it left. An event that is unknown or
// not allowed in the current state yields *InvalidTransitionError and leaves
// the state unchanged. A cancelled ctx yields ctx.Err() before anything
// happens.
//
// Fire commits only the in-memory state; persisting it (status write) is the
// caller's job, after the event's action succeeded.
func (m *Machine) Fire(ctx context.Context, e Event) (Transition, error) {
	if err := ctx.Err(); err != nil {
		return Transition{}, err
	}
	from := m.Current()
	err := m.f.Event(ctx, string(e))
	if err == nil {
		return Transition{Event: e, From: []State{from}, To: m.Current()}, nil
	}
	invalid := &InvalidTransitionError{Machine: m.def.Machine, State: from, Event: e, Cause: err}
	var (
		unknown looplab.UnknownEventError
		badEv   looplab.InvalidEventError
		noTrans looplab.NoTransitionError
	)
	switch {
	case errors.As(err, &unknown), errors.As(err, &badEv):
		return Transition{}, invalid
	case errors.As(err, &noTrans):
		// Only reachable with an unvalidated definition holding a
		// self-loop; our machines have none, so report it as a bug.
		return Transition{}, invalid
	}
	return Transition{}, err
}
