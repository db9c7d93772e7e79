package engine

import (
	"context"
	"fmt"
	"testing"

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
