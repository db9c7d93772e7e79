package fsm

import (
	"cmp"
	"slices"
)

// State is a machine state. Names are PascalCase (see Validate).
type State string

// Event is the name of a transition. Names are lowerCamel (see Validate).
type Event string

// Step is the name of an in-state step: work done without leaving the
// state. It is a type apart from Event so that a step can never be fired
// as a transition (nor a transition run as a step). Names are lowerCamel.
type Step string

// StateDoc documents one state: how it is entered, what it observes or waits
// for, and which events leave it. Doc must be full sentences; it is printed
// verbatim in the generated documentation.
type StateDoc struct {
	Name State
	Doc  string
}

// EventDoc documents one transition event: when it fires and what its action
// (if any) does before the transition commits.
type EventDoc struct {
	Name Event
	Doc  string
}

// StepDoc documents an in-state step: an idempotent piece of work done while
// the machine stays in one of the In states.
type StepDoc struct {
	Name Step
	In   []State
	Doc  string
}

// Transition is one edge group: firing Event in any of From moves the
// machine to To.
type Transition struct {
	Event Event
	From  []State
	To    State
}

// Definition is the complete, documented description of one machine. It is
// plain data so that it can be validated, rendered and tested without
// building a Machine.
type Definition struct {
	// Machine is the lowercase machine name ("node", "heal", ...), used in
	// errors, logs and file names.
	Machine string
	// Doc is a paragraph describing what one instance of the machine tracks
	// and where its state is persisted.
	Doc         string
	Initial     State
	States      []StateDoc
	Events      []EventDoc
	Transitions []Transition
	Steps       []StepDoc
	// Terminal states have no exits; reaching one ends the machine.
	Terminal []State
}

// HasState reports whether s is a declared state.
func (d *Definition) HasState(s State) bool {
	return slices.ContainsFunc(d.States, func(sd StateDoc) bool { return sd.Name == s })
}

// HasEvent reports whether e is a declared transition event.
func (d *Definition) HasEvent(e Event) bool {
	return slices.ContainsFunc(d.Events, func(ed EventDoc) bool { return ed.Name == e })
}

// HasStep reports whether e is a declared in-state step.
func (d *Definition) HasStep(e Step) bool {
	return slices.ContainsFunc(d.Steps, func(sd StepDoc) bool { return sd.Name == e })
}

// IsTerminal reports whether s is a terminal state.
func (d *Definition) IsTerminal(s State) bool {
	return slices.Contains(d.Terminal, s)
}

// Target returns the state that event e leads to from state from, and
// whether such a transition exists. The first matching transition wins;
// Validate rejects definitions where two would disagree.
func (d *Definition) Target(e Event, from State) (State, bool) {
	for _, t := range d.Transitions {
		if t.Event == e && slices.Contains(t.From, from) {
			return t.To, true
		}
	}
	return "", false
}

// StepAllowed reports whether step e may run in state s.
func (d *Definition) StepAllowed(e Step, s State) bool {
	for _, st := range d.Steps {
		if st.Name == e && slices.Contains(st.In, s) {
			return true
		}
	}
	return false
}

// Exits returns the events that leave state s, sorted.
func (d *Definition) Exits(s State) []Event {
	var out []Event
	for _, t := range d.Transitions {
		if slices.Contains(t.From, s) && !slices.Contains(out, t.Event) {
			out = append(out, t.Event)
		}
	}
	slices.Sort(out)
	return out
}

// StateDocOf returns the documentation of s, or "" if s is unknown.
func (d *Definition) StateDocOf(s State) string {
	for _, sd := range d.States {
		if sd.Name == s {
			return sd.Doc
		}
	}
	return ""
}

// EventDocOf returns the documentation of transition event e, or "".
func (d *Definition) EventDocOf(e Event) string {
	for _, ed := range d.Events {
		if ed.Name == e {
			return ed.Doc
		}
	}
	return ""
}

// edge is one (from, event, to) triple, the unit the renderers draw.
type edge struct {
	From  State
	Event Event
	To    State
}

// edges flattens the transitions and sorts them by the declaration order of
// their source state, then by event, then by the declaration order of the
// target. States are declared along the happy path, so diagrams read (and
// lay out) in that order; the output does not depend on the order the
// transitions are declared in, and is stable for golden files.
func (d *Definition) edges() []edge {
	rank := make(map[State]int, len(d.States))
	for i, s := range d.States {
		rank[s.Name] = i
	}
	var out []edge
	for _, t := range d.Transitions {
		for _, f := range t.From {
			out = append(out, edge{From: f, Event: t.Event, To: t.To})
		}
	}
	slices.SortFunc(out, func(a, b edge) int {
		return cmp.Or(
			cmp.Compare(rank[a.From], rank[b.From]),
			cmp.Compare(a.From, b.From),
			cmp.Compare(a.Event, b.Event),
			cmp.Compare(rank[a.To], rank[b.To]),
			cmp.Compare(a.To, b.To),
		)
	})
	return out
}
