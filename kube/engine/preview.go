package engine

import (
	"context"
	"fmt"

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
		if in.State == "" {
			in.State = def.Initial
		}
		p := Preview[F]{Instance: in, To: in.State}
		if isNewer {
			p.Refused = newer
			out = append(out, p)
			continue
		}
		m, err := def.NewMachine(in.State)
		if err != nil {
			p.Refused = err.Error()
			out = append(out, p)
			continue
		}
		if err := syncer.Gather(ctx, o, &p.Instance); err != nil {
			return nil, err
		}
		p.Decision = syncer.Decide(p.Instance)
		if live, ok := syncer.(ReadsLive[O, F]); ok && (p.Decision.Event != "" || p.Decision.Step != "") {
			if err := live.GatherLive(ctx, o, &p.Instance, p.Decision); err != nil {
				return nil, err
			}
			p.Decision = syncer.Decide(p.Instance)
		}
		switch d := p.Decision; {
		case d.Event != "" && d.Step != "":
			p.Refused = fmt.Sprintf("decision sets both event %s and step %s", d.Event, d.Step)
		case d.Event != "":
			if !m.Can(d.Event) {
				p.Refused = fmt.Sprintf("decision %s is not allowed in state %s", d.Event, in.State)
			} else if to, ok := def.Target(d.Event, in.State); ok {
				p.To = to
			}
		case d.Step != "" && !m.CanStep(d.Step):
			p.Refused = fmt.Sprintf("step %s is not allowed in state %s", d.Step, in.State)
		}
		out = append(out, p)
	}
	return out, nil
}
