package kube

import (
	"context"
	"errors"
	"testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

func TestApplyDecision(t *testing.T) {
	def := states.UpgradeDefinition()
	ctx := context.Background()
	machine := func(s fsm.State) *fsm.Machine {
		m, err := def.NewMachine(s)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	var ran []fsm.Event
	run := func(e fsm.Event, s fsm.Step) error { ran = append(ran, e+fsm.Event(s)); return nil }
	var warned []string
	failed := func(_, msg string) { warned = append(warned, msg) }

	did, tr, err := applyDecision(ctx, machine(states.UpgradeIdle), states.Decision{Event: states.UpgradeRequest}, run, failed)
	if err != nil || did != appliedEvent || tr.To != states.UpgradeValidating || len(ran) != 1 {
		t.Errorf("event: %v %+v %v, ran %v", did, tr, err, ran)
	}
	did, _, err = applyDecision(ctx, machine(states.UpgradeRollingServers), states.Decision{Step: states.UpgradeSelectNextNode}, run, failed)
	if err != nil || did != appliedStep || len(ran) != 2 {
		t.Errorf("step: %v %v, ran %v", did, err, ran)
	}
	did, _, err = applyDecision(ctx, machine(states.UpgradeIdle), states.Decision{Reason: "Steady"}, run, failed)
	if err != nil || did != appliedWait || len(ran) != 2 {
		t.Errorf("wait: %v %v, ran %v", did, err, ran)
	}

	// A decision the definition does not allow runs nothing and is
	// permanent: retrying cannot fix a definition/decision mismatch.
	var perm *PermanentError
	for _, d := range []states.Decision{{Event: states.UpgradeServersDone}, {Step: states.UpgradeRollClients}} {
		if _, _, err := applyDecision(ctx, machine(states.UpgradeIdle), d, run, failed); !errors.As(err, &perm) || len(ran) != 2 {
			t.Errorf("%+v in Idle: %v, ran %v", d, err, ran)
		}
	}

	// A failed action fires nothing and is reported.
	boom := errors.New("boom")
	m := machine(states.UpgradeIdle)
	did, _, err = applyDecision(ctx, m, states.Decision{Event: states.UpgradeRequest}, func(fsm.Event, fsm.Step) error { return boom }, failed)
	if !errors.Is(err, boom) || did != appliedWait || m.Current() != states.UpgradeIdle || len(warned) != 1 {
		t.Errorf("failed action: %v %v, state %s, warned %v", did, err, m.Current(), warned)
	}
}
