package fsm

import (
	"context"
	"errors"
	"slices"
	"testing"

	looplab "github.com/looplab/fsm"
)

func TestNewMachineRefusesAnUnknownPersistedState(t *testing.T) {
	_, err := sample().NewMachine("Reopened")
	var use *UnknownStateError
	if !errors.As(err, &use) {
		t.Fatalf("NewMachine() error = %v, want *UnknownStateError", err)
	}
	if use.State != "Reopened" || use.Machine != "ticket" || !use.Permanent() {
		t.Errorf("error = %+v, want machine ticket, state Reopened, permanent", use)
	}
}

func TestFireMovesAlongAnAllowedTransition(t *testing.T) {
	m, err := sample().NewMachine("Parked")
	if err != nil {
		t.Fatal(err)
	}
	if !m.Can("start") || m.Can("close") {
		t.Errorf("Can(start), Can(close) = %v, %v; want true, false", m.Can("start"), m.Can("close"))
	}
	tr, err := m.Fire(context.Background(), "start")
	if err != nil {
		t.Fatalf("Fire(start) = %v", err)
	}
	want := Transition{Event: "start", From: []State{"Parked"}, To: "Working"}
	if tr.Event != want.Event || !slices.Equal(tr.From, want.From) || tr.To != want.To {
		t.Errorf("Fire(start) = %+v, want %+v", tr, want)
	}
	if m.Current() != "Working" {
		t.Errorf("Current() = %q, want Working", m.Current())
	}
}

func TestFireRejectsAnEventNotAllowedInTheCurrentState(t *testing.T) {
	m, _ := sample().NewMachine("Parked")
	_, err := m.Fire(context.Background(), "close")
	var ite *InvalidTransitionError
	if !errors.As(err, &ite) {
		t.Fatalf("Fire(close) error = %v, want *InvalidTransitionError", err)
	}
	if ite.State != "Parked" || ite.Event != "close" {
		t.Errorf("error = %+v", ite)
	}
	var cause looplab.InvalidEventError
	if !errors.As(err, &cause) {
		t.Errorf("looplab's InvalidEventError is not reachable through errors.As: %v", err)
	}
	if m.Current() != "Parked" {
		t.Errorf("state changed to %q after a rejected event", m.Current())
	}
}

func TestFireRejectsAnUndeclaredEvent(t *testing.T) {
	m, _ := sample().NewMachine("Open")
	_, err := m.Fire(context.Background(), "explode")
	var ite *InvalidTransitionError
	if !errors.As(err, &ite) {
		t.Fatalf("Fire(explode) error = %v, want *InvalidTransitionError", err)
	}
	var cause looplab.UnknownEventError
	if !errors.As(err, &cause) {
		t.Errorf("looplab's UnknownEventError is not reachable through errors.As: %v", err)
	}
}

func TestFireWithACancelledContextChangesNothing(t *testing.T) {
	m, _ := sample().NewMachine("Open")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Fire(ctx, "start"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Fire() error = %v, want context.Canceled", err)
	}
	if m.Current() != "Open" {
		t.Errorf("state changed to %q", m.Current())
	}
}

func TestCanStepOnlyInTheStepsStates(t *testing.T) {
	d := sample()
	parked, _ := d.NewMachine("Parked")
	open, _ := d.NewMachine("Open")
	if !parked.CanStep("ping") || open.CanStep("ping") || parked.CanStep("start") {
		t.Errorf("CanStep: parked/ping=%v open/ping=%v parked/start=%v; want true false false",
			parked.CanStep("ping"), open.CanStep("ping"), parked.CanStep("start"))
	}
}

func TestExitsAreSortedAndDeduplicated(t *testing.T) {
	got := sample().Exits("Working")
	if want := []Event{"close", "park"}; !slices.Equal(got, want) {
		t.Errorf("Exits(Working) = %v, want %v", got, want)
	}
}
