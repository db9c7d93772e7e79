package kube

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// lookup returns the action of event e, or else of step st.
func lookup[A any](a transitions.Actions[A], e fsm.Event, st fsm.Step) (A, bool) {
	if e != "" {
		return a.Event(e)
	}
	return a.Step(st)
}

// applied says what applyDecision did.
type applied int

const (
	// appliedWait: the decision was to wait; nothing ran.
	appliedWait applied = iota
	// appliedStep: the step's action ran; the state is unchanged.
	appliedStep
	// appliedEvent: the event's action ran and the event fired; the
	// caller persists the returned transition.
	appliedEvent
)

// applyDecision is how every cluster-level machine acts on a decision: it
// checks that machine m allows d's event or step in its current state,
// runs the action (run; it is called only for an event or a step), and
// fires the event. A decision the machine does not allow is a permanent
// error, because the definition and the Decide function disagree. A failed
// action is reported by failed (a Warning Event whose reason names what GD2
// or Kubernetes refused, see refusalReason) and returned; nothing
// fires then, so the state stays where it was and the sync is retried.
func applyDecision(ctx context.Context, m *fsm.Machine, d states.Decision, run func(fsm.Event, fsm.Step) error, failed func(reason, msg string)) (applied, fsm.Transition, error) {
	e, step := string(d.Event), false
	if e == "" {
		e, step = string(d.Step), true
	}
	switch {
	case e == "":
		return appliedWait, fsm.Transition{}, nil
	case step && !m.CanStep(d.Step):
		return appliedWait, fsm.Transition{}, &PermanentError{Err: fmt.Errorf("%s: step %s is not allowed in state %s", m.Definition().Machine, e, m.Current())}
	case !step && !m.Can(d.Event):
		return appliedWait, fsm.Transition{}, &PermanentError{Err: fmt.Errorf("%s: decision %s is not allowed in state %s", m.Definition().Machine, e, m.Current())}
	}
	if err := run(d.Event, d.Step); err != nil {
		failed(refusalReason(err), fmt.Sprintf("%s %s failed: %v", m.Definition().Machine, e, err))
		return appliedWait, fsm.Transition{}, err
	}
	if step {
		return appliedStep, fsm.Transition{}, nil
	}
	tr, err := m.Fire(ctx, d.Event)
	if err != nil {
		return appliedWait, fsm.Transition{}, err
	}
	return appliedEvent, tr, nil
}
