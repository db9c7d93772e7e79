package engine

import (
	"context"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// machineState is a machine built at an instance's persisted state, where
// the instance's decision is checked. The runner and Decide both check
// through it, so a preview refuses exactly what a sync refuses.
type machineState struct {
	def *fsm.Definition
	// state is the persisted state, the initial one for "".
	state fsm.State
	// m is the machine at state; nil when state is not the machine's.
	m *fsm.Machine
}

// machineAt builds def's machine at state ("" stands for the initial
// state). The error says the state is not one of the machine's: the
// runner surfaces it and never resets it, and nothing is gathered or
// decided there. The returned state is set either way.
func machineAt(def *fsm.Definition, state fsm.State) (machineState, error) {
	if state == "" {
		state = def.Initial
	}
	m, err := def.NewMachine(state)
	if err != nil {
		return machineState{def: def, state: state}, err
	}
	return machineState{def: def, state: state, m: m}, nil
}

// check holds decision d to the machine at its state: it sets at most one
// of an event and a step, and the one it sets is allowed in the state. It
// returns where d leads — the event's target, else the state itself — and,
// when d is refused, why.
func (s machineState) check(d states.Decision) (fsm.State, error) {
	switch {
	case d.Event != "" && d.Step != "":
		return s.state, fmt.Errorf("decision sets both event %s and step %s", d.Event, d.Step)
	case d.Event != "":
		if !s.m.Can(d.Event) {
			return s.state, fmt.Errorf("decision %s is not allowed in state %s", d.Event, s.state)
		}
		if to, ok := s.def.Target(d.Event, s.state); ok {
			return to, nil
		}
	case d.Step != "":
		if !s.m.CanStep(d.Step) {
			return s.state, fmt.Errorf("step %s is not allowed in state %s", d.Step, s.state)
		}
	}
	return s.state, nil
}

// decide gathers in's facts and takes its decision, again from a live read
// when the decision acts and the syncer reads live (ReadsLive). The runner
// and Decide both decide through it. Its error is a failure to gather.
func decide[O Object, F any](ctx context.Context, syncer MachineSyncer[O, F], o O, in *Instance[F]) (states.Decision, error) {
	if err := syncer.Gather(ctx, o, in); err != nil {
		return states.Decision{}, err
	}
	d := syncer.Decide(*in)
	live, ok := syncer.(ReadsLive[O, F])
	if !ok || (d.Event == "" && d.Step == "") {
		return d, nil
	}
	if err := live.GatherLive(ctx, o, in, d); err != nil {
		return states.Decision{}, err
	}
	return syncer.Decide(*in), nil
}
