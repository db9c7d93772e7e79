package fsm

// sample returns a small valid definition used across this package's
// tests: a ticket that is opened, worked on, possibly parked, and closed.
func sample() *Definition {
	return &Definition{
		Machine: "ticket",
		Doc:     "A support ticket, used to exercise the engine.",
		Initial: "Open",
		States: []StateDoc{
			{Name: "Open", Doc: "Entered on creation. Waits for someone to pick it up; left by start or close."},
			{Name: "Working", Doc: "Entered by start. Left by park or close."},
			{Name: "Parked", Doc: "Entered by park. Left by start."},
			{Name: "Closed", Doc: "Entered by close. Terminal."},
		},
		Events: []EventDoc{
			{Name: "start", Doc: "Someone picks the ticket up."},
			{Name: "park", Doc: "Work waits for the reporter."},
			{Name: "close", Doc: "The ticket is done | or dropped."},
		},
		Transitions: []Transition{
			{Event: "start", From: []State{"Open", "Parked"}, To: "Working"},
			{Event: "park", From: []State{"Working"}, To: "Parked"},
			{Event: "close", From: []State{"Working", "Open"}, To: "Closed"},
		},
		Steps: []StepDoc{
			{Name: "ping", In: []State{"Parked"}, Doc: "Remind the reporter; idempotent per day."},
		},
		Terminal: []State{"Closed"},
	}
}
