package fsm

import (
	"strings"
	"testing"
)

func TestValidateAcceptsTheSample(t *testing.T) {
	if err := sample().Validate(); err != nil {
		t.Fatalf("Validate() = %v, want nil", err)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(d *Definition)
		want   []string
	}{
		{
			name:   "a state name that is not PascalCase is rejected",
			mutate: func(d *Definition) { d.States = append(d.States, StateDoc{Name: "on hold", Doc: "x"}) },
			want:   []string{`state "on hold": name must match`},
		},
		{
			name:   "an event name that is not lowerCamel is rejected",
			mutate: func(d *Definition) { d.Events[0].Name = "Start" },
			want:   []string{`event "Start": name must match`},
		},
		{
			name:   "an undocumented state is rejected",
			mutate: func(d *Definition) { d.States[1].Doc = " " },
			want:   []string{`state "Working" is undocumented`},
		},
		{
			name:   "an undocumented event is rejected",
			mutate: func(d *Definition) { d.Events[1].Doc = "" },
			want:   []string{`event "park" is undocumented`},
		},
		{
			name: "a state nothing leads to is unreachable",
			mutate: func(d *Definition) {
				d.States = append(d.States, StateDoc{Name: "Lost", Doc: "x"})
				d.Transitions = append(d.Transitions, Transition{Event: "close", From: []State{"Lost"}, To: "Closed"})
			},
			want: []string{`state "Lost" is unreachable from "Open"`},
		},
		{
			name:   "a non-terminal state without an exit is a dead end",
			mutate: func(d *Definition) { d.Transitions[0].From = []State{"Open"} },
			want:   []string{`state "Parked" has no exit and is not terminal`},
		},
		{
			name: "a terminal state with an exit is rejected",
			mutate: func(d *Definition) {
				d.Transitions = append(d.Transitions, Transition{Event: "start", From: []State{"Closed"}, To: "Working"})
			},
			want: []string{`terminal state "Closed" has an exit`},
		},
		{
			name:   "a transition to an unknown state is rejected",
			mutate: func(d *Definition) { d.Transitions[1].To = "Nowhere" },
			want:   []string{`event "park" leads to unknown state "Nowhere"`},
		},
		{
			name:   "a transition from an unknown state is rejected",
			mutate: func(d *Definition) { d.Transitions[1].From = append(d.Transitions[1].From, "Limbo") },
			want:   []string{`event "park" starts from unknown state "Limbo"`},
		},
		{
			name: "a transition using an undeclared event is rejected",
			mutate: func(d *Definition) {
				d.Transitions = append(d.Transitions, Transition{Event: "reopen", From: []State{"Parked"}, To: "Open"})
			},
			want: []string{`transition uses unknown event "reopen"`},
		},
		{
			name: "one event from one state leading to two targets is rejected",
			mutate: func(d *Definition) {
				d.Transitions = append(d.Transitions, Transition{Event: "start", From: []State{"Open"}, To: "Parked"})
			},
			want: []string{`event "start" from "Open" leads to both "Working" and "Parked"`},
		},
		{
			name: "a self-loop is rejected because it is not a transition",
			mutate: func(d *Definition) {
				d.Transitions = append(d.Transitions, Transition{Event: "park", From: []State{"Parked"}, To: "Parked"})
			},
			want: []string{`event "park" is a self-loop on "Parked"`},
		},
		{
			name:   "a declared event no transition uses is rejected",
			mutate: func(d *Definition) { d.Events = append(d.Events, EventDoc{Name: "escalate", Doc: "x"}) },
			want:   []string{`event "escalate" is declared but no transition uses it`},
		},
		{
			name:   "an unknown initial state is rejected",
			mutate: func(d *Definition) { d.Initial = "New" },
			want:   []string{`initial state "New" is not declared`},
		},
		{
			name:   "a step sharing an event's name is rejected",
			mutate: func(d *Definition) { d.Steps[0].Name = "park" },
			want:   []string{`step "park" has the name of a transition event`},
		},
		{
			name:   "a step in a terminal state is rejected",
			mutate: func(d *Definition) { d.Steps[0].In = []State{"Closed"} },
			want:   []string{`step "ping" runs in terminal state "Closed"`},
		},
		{
			name: "several problems are all reported at once",
			mutate: func(d *Definition) {
				d.States[0].Doc = ""
				d.Events[2].Doc = ""
			},
			want: []string{`state "Open" is undocumented`, `event "close" is undocumented`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := sample()
			tt.mutate(d)
			err := d.Validate()
			if err == nil {
				t.Fatal("Validate() = nil, want errors")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("Validate() = %v\nwant it to contain %q", err, w)
				}
			}
		})
	}
}
