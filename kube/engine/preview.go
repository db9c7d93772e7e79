package engine

import (
	"context"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// Preview is one instance's decision as a sync would take it now, from
// facts gathered now, with nothing acted on and nothing written: what an
// admin's `explain` shows as the live decision.
type Preview[F any] struct {
	Instance[F]
	Decision states.Decision
	// To is where the decision leads: the event's target, else the state.
	To fsm.State
	// Refused says why the runner would refuse the decision (the state is
	// unknown, or the decision is not allowed in it); "" when it would not.
	Refused string
}

// Decide runs the first half of Sync on o — the instances at their
// persisted states, gather and decide (again from a live read when the
// decision acts), the state and decision checks —
// and stops before anything acts. Prepare is not called: it writes
// (finalizers). An object whose status a newer
// operator wrote is refused, as Sync refuses it, without gathering. An
// error is a failure to gather.
func Decide[O Object, F any](ctx context.Context, syncer MachineSyncer[O, F], o O) ([]Preview[F], error) {
	def := syncer.Definition()
	ins, err := syncer.Instances(ctx, o)
	if err != nil {
		return nil, err
	}
	newer, isNewer := newerStatus(o)
	out := make([]Preview[F], 0, len(ins))
	for _, in := range ins {
		at, err := machineAt(def, in.State)
		in.State = at.state
		p := Preview[F]{Instance: in, To: in.State}
		switch {
		case isNewer:
			p.Refused = newer
		case err != nil:
			p.Refused = err.Error()
		default:
			if p.Decision, err = decide(ctx, syncer, o, &p.Instance); err != nil {
				return nil, err
			}
			if p.To, err = at.check(p.Decision); err != nil {
				p.Refused = err.Error()
			}
		}
		out = append(out, p)
	}
	return out, nil
}
