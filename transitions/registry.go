package transitions

import (
	"maps"
	"slices"
	"sync"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// Actions is one machine's part of the action registry: the side effect of
// each event and step that has one, of the machine's action type A. Events
// and steps are keyed by their own types, so a step's action can never be
// looked up (or fired) as an event's.
type Actions[A any] struct {
	// Machine is the machine's name (fsm.Definition.Machine).
	Machine string
	Events  map[fsm.Event]A
	Steps   map[fsm.Step]A
}

// Event returns the action of event e, if it has one.
func (a Actions[A]) Event(e fsm.Event) (A, bool) {
	act, ok := a.Events[e]
	return act, ok
}

// Step returns the action of step s, if it has one.
func (a Actions[A]) Step(s fsm.Step) (A, bool) {
	act, ok := a.Steps[s]
	return act, ok
}

// Names lists what the machine has actions for: its events and its steps,
// each sorted.
type Names struct {
	Events []fsm.Event
	Steps  []fsm.Step
}

var (
	registryMu sync.Mutex
	registry   = map[string]Names{}
)

// register records a machine's actions in the one registry and returns
// them, so that each machine's table is declared and registered at once.
func register[A any](a Actions[A]) Actions[A] {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[a.Machine]; dup {
		panic("transitions: actions of machine " + a.Machine + " registered twice")
	}
	registry[a.Machine] = Names{Events: slices.Sorted(maps.Keys(a.Events)), Steps: slices.Sorted(maps.Keys(a.Steps))}
	return a
}

// For returns the action of the decision's event, or of its step.
func (a Actions[A]) For(d states.Decision) (A, bool) {
	if d.Event != "" {
		return a.Event(d.Event)
	}
	return a.Step(d.Step)
}
