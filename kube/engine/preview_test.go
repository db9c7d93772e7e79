package engine

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/gluster/anthill/states"
)

// TestDecidePreviewsASyncWithoutActingOrWriting: Decide gathers and
// decides every instance at its persisted state (the initial one for
// none), names an event's target, says what the runner would refuse, and
// acts on, writes and prepares nothing.
func TestDecidePreviewsASyncWithoutActingOrWriting(t *testing.T) {
	w := newWorld(t, map[string]string{"state/b": "Working", "state/c": "Lost", "state/d": "Working"})
	w.subjects = []string{"a", "b", "c", "d"}
	w.decide = func(in Instance[string]) states.Decision {
		switch in.Subject {
		case "a":
			return states.Decision{Event: "start", Reason: "Go"}
		case "b":
			return states.Decision{Reason: "Busy", Message: "working"}
		}
		return states.Decision{Step: "poke", Reason: "Nudge"} // not allowed in Working
	}
	ps, err := Decide(context.Background(), w, w.cached.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range ps {
		got = append(got, fmt.Sprintf("%s %s->%s %s%s refused=%t", p.Subject, p.State, p.To, p.Decision.Event, p.Decision.Step, p.Refused != ""))
	}
	want := "[a Open->Working start refused=false b Working->Working  refused=false c Lost->Lost  refused=true d Working->Working poke refused=true]"
	if fmt.Sprint(got) != want {
		t.Fatalf("previews\n %v\nwant\n %s", got, want)
	}
	if len(w.acted) != 0 || w.writes != 0 || w.prepared != 0 {
		t.Fatalf("Decide acted %v, wrote %d times, prepared %d times", w.acted, w.writes, w.prepared)
	}
}

// TestDecideRefusesExactlyWhatTheRunnerRefuses: for every state (the
// initial one for none, an unknown one) and every kind of decision (a
// wait, an allowed or forbidden event, an allowed or forbidden step, both
// at once, an event the machine does not have), the preview refuses what
// a sync refuses, for the same reason, and leads where the sync leads.
func TestDecideRefusesExactlyWhatTheRunnerRefuses(t *testing.T) {
	decisions := map[string]states.Decision{
		"a wait":            {Reason: "Busy"},
		"start":             {Event: "start", Reason: "Go"},
		"close":             {Event: "close", Reason: "Done"},
		"poke":              {Step: "poke", Reason: "Nudge"},
		"start and poke":    {Event: "start", Step: "poke", Reason: "Both"},
		"an event it lacks": {Event: "reopen", Reason: "Again"},
	}
	refusals := 0
	for _, state := range []string{"", "Open", "Working", "Closed", "Lost"} {
		for name, d := range decisions {
			t.Run(fmt.Sprintf("%s in %q", name, state), func(t *testing.T) {
				w := newWorld(t, map[string]string{"state": state})
				w.decide = func(Instance[string]) states.Decision { return d }
				ps, err := Decide(context.Background(), w, w.cached.DeepCopy())
				if err != nil || len(ps) != 1 {
					t.Fatalf("Decide: %v, %d previews", err, len(ps))
				}
				p := ps[0]
				r, _ := w.runner()
				o := w.cached.DeepCopy()
				ins, err := w.Instances(context.Background(), o)
				if err != nil {
					t.Fatal(err)
				}
				out, err := r.advance(context.Background(), o, ins[0], time.Now())
				if err != nil {
					t.Fatal(err)
				}
				refused := out.Kind == Refused || out.Kind == Unknown
				if refused != (p.Refused != "") {
					t.Fatalf("runner %v (%v), preview refused %q", out.Kind, out.Err, p.Refused)
				}
				if refused {
					refusals++
					if want := "ticket: " + p.Refused; out.Err.Error() != want {
						t.Errorf("runner refused with %q, preview with %q", out.Err, want)
					}
				}
				if out.State != p.State || out.To != p.To {
					t.Errorf("runner %s->%s, preview %s->%s", out.State, out.To, p.State, p.To)
				}
			})
		}
	}
	if refusals == 0 {
		t.Fatal("no decision was refused: the table tests nothing")
	}
}
