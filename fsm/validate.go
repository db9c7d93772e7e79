package fsm

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	stateNameRE = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
	eventNameRE = regexp.MustCompile(`^[a-z][A-Za-z0-9]*$`)
)

// Validate checks the definition and returns every problem found, joined
// with errors.Join, or nil. The rules:
//
//   - the machine has a name and an initial state, which is declared;
//   - state names match ^[A-Z][A-Za-z0-9]*$, event and step names
//     ^[a-z][A-Za-z0-9]*$, and no name is declared twice;
//   - every state, event and step has a non-empty doc;
//   - transitions and steps reference only declared states and events,
//     every declared event is used by a transition, and no step shares a
//     name with an event;
//   - no transition is a self-loop, and no (event, from) pair leads to two
//     different targets;
//   - every state is reachable from the initial state;
//   - every non-terminal state has an exit, terminal states have none and
//     run no steps.
func (d *Definition) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("machine %q: "+format, append([]any{d.Machine}, args...)...))
	}

	if d.Machine == "" {
		bad("machine name is empty")
	}
	if strings.TrimSpace(d.Doc) == "" {
		bad("machine doc is empty")
	}

	states := map[State]bool{}
	for _, s := range d.States {
		if !stateNameRE.MatchString(string(s.Name)) {
			bad("state %q: name must match %s", s.Name, stateNameRE)
		}
		if states[s.Name] {
			bad("state %q declared twice", s.Name)
		}
		states[s.Name] = true
		if strings.TrimSpace(s.Doc) == "" {
			bad("state %q is undocumented", s.Name)
		}
	}
	events := map[Event]bool{}
	for _, e := range d.Events {
		if !eventNameRE.MatchString(string(e.Name)) {
			bad("event %q: name must match %s", e.Name, eventNameRE)
		}
		if events[e.Name] {
			bad("event %q declared twice", e.Name)
		}
		events[e.Name] = true
		if strings.TrimSpace(e.Doc) == "" {
			bad("event %q is undocumented", e.Name)
		}
	}
	steps := map[Step]bool{}
	for _, st := range d.Steps {
		if !eventNameRE.MatchString(string(st.Name)) {
			bad("step %q: name must match %s", st.Name, eventNameRE)
		}
		if steps[st.Name] {
			bad("step %q declared twice", st.Name)
		}
		if events[Event(st.Name)] {
			bad("step %q has the name of a transition event", st.Name)
		}
		steps[st.Name] = true
		if strings.TrimSpace(st.Doc) == "" {
			bad("step %q is undocumented", st.Name)
		}
		if len(st.In) == 0 {
			bad("step %q runs in no state", st.Name)
		}
		for _, s := range st.In {
			if !states[s] {
				bad("step %q runs in unknown state %q", st.Name, s)
			}
			if d.IsTerminal(s) {
				bad("step %q runs in terminal state %q", st.Name, s)
			}
		}
	}

	if d.Initial == "" {
		bad("no initial state")
	} else if !states[d.Initial] {
		bad("initial state %q is not declared", d.Initial)
	}
	for _, s := range d.Terminal {
		if !states[s] {
			bad("terminal state %q is not declared", s)
		}
	}

	used := map[Event]bool{}
	targets := map[[2]string]State{}
	exits := map[State]bool{}
	next := map[State][]State{}
	for _, t := range d.Transitions {
		used[t.Event] = true
		if !events[t.Event] {
			bad("transition uses unknown event %q", t.Event)
		}
		if !states[t.To] {
			bad("event %q leads to unknown state %q", t.Event, t.To)
		}
		if len(t.From) == 0 {
			bad("event %q has a transition with no source state", t.Event)
		}
		for _, f := range t.From {
			if !states[f] {
				bad("event %q starts from unknown state %q", t.Event, f)
			}
			if f == t.To {
				bad("event %q is a self-loop on %q; model in-state work as a step", t.Event, f)
			}
			key := [2]string{string(t.Event), string(f)}
			if prev, dup := targets[key]; dup && prev != t.To {
				bad("event %q from %q leads to both %q and %q", t.Event, f, prev, t.To)
			}
			targets[key] = t.To
			exits[f] = true
			next[f] = append(next[f], t.To)
		}
	}
	for _, e := range d.Events {
		if !used[e.Name] {
			bad("event %q is declared but no transition uses it", e.Name)
		}
	}

	for _, s := range d.States {
		terminal := d.IsTerminal(s.Name)
		switch {
		case terminal && exits[s.Name]:
			bad("terminal state %q has an exit", s.Name)
		case !terminal && !exits[s.Name]:
			bad("state %q has no exit and is not terminal", s.Name)
		}
	}

	if states[d.Initial] {
		seen := map[State]bool{d.Initial: true}
		queue := []State{d.Initial}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			for _, n := range next[s] {
				if !seen[n] {
					seen[n] = true
					queue = append(queue, n)
				}
			}
		}
		for _, s := range d.States {
			if !seen[s.Name] {
				bad("state %q is unreachable from %q", s.Name, d.Initial)
			}
		}
	}

	slices.SortStableFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return errors.Join(errs...)
}
