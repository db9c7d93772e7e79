package fsm

import "fmt"

// UnknownStateError means a persisted state is not a state of the machine:
// status was written by a newer or older operator, or edited by hand. It is
// permanent — retrying cannot fix it — and the machine must never be reset
// to its initial state in response, because that would re-run provisioning
// against a live node. The dispatcher should surface it as a condition and
// stop advancing the object until a human intervenes.
type UnknownStateError struct {
	Machine string
	State   State
}

func (e *UnknownStateError) Error() string {
	return fmt.Sprintf("machine %q: unknown persisted state %q", e.Machine, e.State)
}

// Permanent marks the error as not retryable.
func (e *UnknownStateError) Permanent() bool { return true }

// InvalidTransitionError means an event may not fire in the current state,
// either because the event does not exist or because it has no transition
// from here. It indicates a bug in a decision function (decisions must only
// return events allowed in the state they were computed for) or a stale
// machine; it is permanent for this state. Cause is looplab's original error
// when there is one, so errors.As with looplab's error types still works.
type InvalidTransitionError struct {
	Machine string
	State   State
	Event   Event
	Cause   error
}

func (e *InvalidTransitionError) Error() string {
	msg := fmt.Sprintf("machine %q: event %q cannot fire in state %q", e.Machine, e.Event, e.State)
	if e.Cause != nil {
		msg += ": " + e.Cause.Error()
	}
	return msg
}

func (e *InvalidTransitionError) Unwrap() error { return e.Cause }

// Permanent marks the error as not retryable.
func (e *InvalidTransitionError) Permanent() bool { return true }
