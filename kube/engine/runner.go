package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// Object is a custom resource whose status persists one or more machine
// instances.
type Object interface {
	metav1.Object
	runtime.Object
}

// Instance is one machine instance as one sync gathered it.
type Instance[F any] struct {
	// Subject names the instance inside its object when the object holds
	// several (a volume, for the heal machine); "" otherwise.
	Subject string
	// State is the persisted cursor; "" stands for the initial state.
	State fsm.State
	// Facts is everything the decision and the action read. Gathering
	// only reads; the runner never writes facts back, and an action
	// returns what it learned (Outcome.Learned) instead of writing it here.
	Facts F
}

// OutcomeKind says what one sync did with one instance.
type OutcomeKind int

const (
	// Waited: the decision was to stay; nothing ran.
	Waited OutcomeKind = iota
	// Stepped: a step's action ran; the state is unchanged.
	Stepped
	// Fired: an event's action ran and the event fired.
	Fired
	// Failed: the action failed; the state is unchanged and the sync is
	// retried.
	Failed
	// Unknown: the persisted state is not one of the machine's. It is
	// never reset: an admin must look.
	Unknown
	// Refused: the decision is not allowed in the state (the definition
	// and the Decide function disagree); nothing ran.
	Refused
	// Noted: the decision's action must be on record before it runs
	// (Runner.Ledger), and was not: the record went into the status this
	// sync writes, and the action runs in a later sync, once the write
	// made the record durable. The state is unchanged.
	Noted
)

// Outcome is what happened to one instance in one sync.
type Outcome[F any] struct {
	Instance[F]
	Kind     OutcomeKind
	Decision states.Decision
	// To is the state after the sync: the transition's target when Fired,
	// the persisted state otherwise.
	To fsm.State
	// Err is why an action failed, or why the state or decision was
	// refused.
	Err error
	// Reason and Message say, for Failed and Unknown, what went wrong, in
	// the words of the Warning Event the runner records.
	Reason, Message string
	// Learned is what the action found out that the machine's Record
	// keeps (the peer a join added, a heal trigger GD2 could not deliver),
	// as Act returned it; nil when nothing ran or it learned nothing.
	Learned any
	// Committed is the transition to announce once the status write
	// succeeded. The runner sets it when Fired; a syncer's Record sets one
	// for a step it records in history like a transition (RecordStep).
	Committed *Committed
}

// RecordStep marks a step that must be found later (a forced pod deletion)
// to be announced like a transition from the state to itself, and returns
// the record for the syncer to append to its history.
func (o *Outcome[F]) RecordStep(machine string, obj metav1.Object, now time.Time) Committed {
	o.Committed = &Committed{
		Machine: machine, Namespace: obj.GetNamespace(), Name: obj.GetName(), Subject: o.Subject,
		From: o.To, To: o.To, Event: fsm.Event(o.Decision.Step), Reason: o.Decision.Reason, Message: o.Decision.Message, Time: now,
	}
	return *o.Committed
}

// MachineSyncer is one machine's part of the sync protocol: which machine it
// runs, where its objects and cursor live, how its facts are gathered and
// decided, how its actions run and how an outcome lands in its status.
// Everything else — loading, fencing, the machine at the persisted state,
// the live re-read, checking, recording ahead and firing, the one status
// write and the announcements — is the Runner's, once for all machines.
// What only some machines need is an optional interface the runner looks
// for: Forgets, Prepares, SurfacesUnknown, Finishes, ReadsLive; without
// one, the runner's default is nothing. What goes on record before an
// action runs is the decision's (Decision.Changes), which the runner puts
// in the Runner.Ledger.
type MachineSyncer[O Object, F any] interface {
	// Definition is the machine the runner builds at each persisted state.
	Definition() *fsm.Definition
	// Get reads the object from the informer cache.
	Get(key Key) (O, error)
	// Instances lists o's machine instances, each with its persisted
	// state, its cursor (and, for a machine whose instances one read
	// serves, what that read learned). It writes nothing.
	Instances(ctx context.Context, o O) ([]Instance[F], error)
	// Gather fills in the facts of one instance, at a state the machine
	// knows (it is never called for an unknown one), from listers and GD2.
	// It writes nothing.
	Gather(ctx context.Context, o O, in *Instance[F]) error
	// Decide is the instance's pure decision.
	Decide(in Instance[F]) states.Decision
	// Act runs the action of d's event or step for in, and returns what
	// it learned that Record keeps (Outcome.Learned). It writes no
	// status, and no facts.
	Act(ctx context.Context, o O, in Instance[F], d states.Decision) (learned any, err error)
	// Message is the instance's persisted message, to tell whether a
	// warning wait says something new.
	Message(o O, subject string) string
	// Record applies the outcomes of this sync, one per gathered instance
	// and in their order, to the machine's status slice of o: the entry
	// effects of a transition (cursor, reset fields, history, conditions),
	// the message of a wait, the condition of a failure. It may set an
	// outcome's Committed (see RecordStep).
	Record(o O, outs []Outcome[F], now time.Time)
}

// Forgets is implemented by a syncer that remembers something of an
// object (a GD2 client, a cache) beyond its status.
type Forgets interface {
	// Forget drops what the syncer remembers of an object that is gone.
	Forget(key Key)
}

// Prepares is implemented by a syncer with work before its machine runs.
type Prepares[O Object] interface {
	// Prepare does what comes before the machine (finalizers, an object
	// the machine no longer runs for) on o, a copy it may change. If done,
	// the sync ends with res and err.
	Prepare(ctx context.Context, o O) (done bool, res Result, err error)
}

// SurfacesUnknown is implemented by a syncer whose object's conditions
// are where the runner marks an unknown state (Degraded, reason
// UnknownState); a syncer without it surfaces one in its own entries.
type SurfacesUnknown[O Object] interface {
	// Conditions are o's status conditions.
	Conditions(o O) *[]metav1.Condition
}

// Finishes is implemented by a syncer with work after the status write.
type Finishes[O Object, F any] interface {
	// Finish runs after the status write (updated is what the API server
	// returned, or o when nothing needed writing): mirrors and clean-up.
	// It returns the sync's result, given the runner's default.
	Finish(ctx context.Context, updated O, outs []Outcome[F], res Result, err error) (Result, error)
}

// ReadsLive is implemented by a syncer whose Gather may read from caches
// or views shared between syncs: good enough to wait on, never to act on.
// A decision that acts is taken again from facts GatherLive read live, and
// that decision is the one the runner checks, records and acts on: the
// live re-read before an action is a phase of the protocol, not a return
// trip inside a machine.
type ReadsLive[O Object, F any] interface {
	// GatherLive reads again, live, what the action of d relies on. It
	// writes nothing.
	GatherLive(ctx context.Context, o O, in *Instance[F], d states.Decision) error
}

// Runner is the one sync protocol every machine runs through: load from
// the lister, fence a cache behind the last write, work on a deep copy,
// build the machine at the persisted state (an unknown state is surfaced,
// never reset), gather, decide (again from a live read when the decision
// acts, see ReadsLive), check the decision against the definition, put on
// record what the action is about to change (Decision.Changes, in the
// Ledger), act before
// firing (a failed action leaves the state), record every outcome in the
// status slice, write it once (nothing if unchanged), announce what the
// write made durable, and requeue as the decisions ask.
type Runner[O Object, F any] struct {
	Machine MachineSyncer[O, F]
	Writer  *StatusWriter[O]
	// Ledger keeps, in the object's status, the lasting changes a
	// decision's action makes before it runs (Decision.Changes), and those
	// a transition puts on record ahead (Decision.Ahead); nil: the
	// machine's actions make none.
	Ledger Ledger[O]
	Log    *TransitionLog
	Clock  clock.Clock
	// Refusal names a failed action's error as a bounded reason (what GD2
	// or Kubernetes refused); nil gives ReasonActionFailed.
	Refusal func(error) string
	// Rounds is how many decisions one sync may take in a row (0 and 1:
	// one). A round that committed a transition or put an action on
	// record, and did nothing else, is followed at once by another from
	// the object its write returned, gathered afresh: the write is
	// durable when it returns, so waiting for the informer to deliver it
	// (and for a worker to pick the key again) would only add time. A
	// node picked for an upgrade goes Quiescing, records its restart,
	// restarts and deletes its pod in one sync instead of four. Only a
	// round whose instances all end in a state Prompt names continues.
	Rounds int
	// Prompt reports whether a round that ends in state may be followed
	// by the next at once (see Rounds); nil: none may.
	Prompt func(state fsm.State) bool
}

// ReasonActionFailed is the reason of a failed action that Refusal does
// not name more precisely.
const ReasonActionFailed = "ActionFailed"

// MaxConditionMessage is the longest message a condition carries.
const MaxConditionMessage = 1024

// Truncate shortens s to at most n bytes, marking the cut with "...".
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}

// Sync runs one decision for every instance of the object named by key,
// and then, up to Rounds in all, one more from the object its write
// returned as long as the last one committed a transition or put an
// action on record and did nothing else (see Rounds).
func (r *Runner[O, F]) Sync(ctx context.Context, key Key) (Result, error) {
	cached, err := r.Machine.Get(key)
	if apierrors.IsNotFound(err) {
		if f, ok := r.Machine.(Forgets); ok {
			f.Forget(key)
		}
		return Result{}, nil
	}
	if err != nil {
		return Result{}, err
	}
	if r.Writer.behind(key, cached) {
		return Result{RequeueAfter: fenceRetry}, nil
	}
	if refused, ok := newerStatus(cached); ok {
		r.Log.Warn(cached, states.ReasonNewerStatus, refused)
		return Result{RequeueAfter: newerStatusRetry}, nil
	}
	for round := 1; ; round++ {
		res, next, more, err := r.round(ctx, key, cached, round >= r.Rounds)
		if !more {
			return res, err
		}
		cached = next
	}
}

// round is one decision for every instance of cached (a version from the
// cache, or the one the previous round's write returned). Unless it is
// the last the sync may take, next is the object this round wrote when
// another round follows at once (continues, more); Finish runs only after
// the round that ends the sync.
func (r *Runner[O, F]) round(ctx context.Context, key Key, cached O, last bool) (res Result, next O, more bool, err error) {
	var none O
	o := cached.DeepCopyObject().(O)
	if p, ok := r.Machine.(Prepares[O]); ok {
		if done, res, err := p.Prepare(ctx, o); done || err != nil {
			return res, none, false, err
		}
	}
	ins, err := r.Machine.Instances(ctx, o)
	if err != nil {
		return Result{}, none, false, err
	}
	now := r.Clock.Now()
	outs := make([]Outcome[F], len(ins))
	said := make([]string, len(ins))
	for i, in := range ins {
		said[i] = r.Machine.Message(o, in.Subject)
		if outs[i], err = r.advance(ctx, o, in, now); err != nil {
			// The facts could not be gathered: nothing is decided or
			// written, and the sync is retried.
			return Result{}, none, false, err
		}
	}
	r.Machine.Record(o, outs, now)
	surfaces, _ := r.Machine.(SurfacesUnknown[O])
	for i := range outs {
		if outs[i].Kind == Unknown && surfaces != nil {
			conds := surfaces.Conditions(o)
			apimeta.SetStatusCondition(conds, metav1.Condition{
				Type: operatorv1alpha1.ConditionDegraded, Status: metav1.ConditionTrue, Reason: states.ReasonUnknownState,
				Message: Truncate(outs[i].Message, MaxConditionMessage), ObservedGeneration: o.GetGeneration(),
			})
		}
		r.warn(o, outs[i], said[i])
	}
	updated, wrote, err := r.Writer.Write(ctx, key, cached, o)
	if err != nil {
		// Nothing was persisted, so nothing is announced; the next sync
		// decides again from live state (every action is idempotent).
		return Result{}, none, false, fmt.Errorf("persist %s status: %w", r.Machine.Definition().Machine, err)
	}
	if wrote {
		for _, out := range outs {
			if out.Committed != nil {
				r.Log.Announce(updated, *out.Committed)
			}
		}
	}
	if !last && wrote && r.Prompt != nil && continues(outs, r.Prompt) {
		// Finish (mirrors, clean-up) is the sync's, after its last
		// round: the next round's facts are the ones it mirrors.
		return Result{}, updated, true, nil
	}
	res, err = defaultResult(outs)
	if f, ok := r.Machine.(Finishes[O, F]); ok {
		res, err = f.Finish(ctx, updated, outs, res, err)
	}
	// A write that only says how a wait goes (its new message) is read
	// back at the time the sync set; its own delivery need not wake the
	// key sooner. After a commit (the fence waits for its delivery) or a
	// step (which changed the world the next sync reads) it must.
	if wrote && err == nil && onlyWaited(outs) && (res.Requeue || res.RequeueAfter > 0) {
		res.Echo = updated.GetResourceVersion()
	}
	return res, none, false, err
}

// continues reports whether a round's outcomes let the next round follow
// at once, from the object the round's write returned: some instance
// fired or put its action on record, every instance is in a prompt
// state, and none stepped (a step changed the world the next round reads
// through informers, which have not seen it yet) or failed.
func continues[F any](outs []Outcome[F], prompt func(fsm.State) bool) bool {
	progressed := false
	for _, out := range outs {
		switch out.Kind {
		case Fired, Noted:
			progressed = true
		case Waited:
		default:
			return false
		}
		if !prompt(out.To) {
			return false
		}
	}
	return progressed
}

// onlyWaited reports whether every instance waited.
func onlyWaited[F any](outs []Outcome[F]) bool {
	for _, out := range outs {
		if out.Kind != Waited {
			return false
		}
	}
	return len(outs) > 0
}

// advance takes one instance through the machine at its persisted state,
// gather, decide, check, act and fire. Its error is a failure to gather.
func (r *Runner[O, F]) advance(ctx context.Context, o O, in Instance[F], now time.Time) (Outcome[F], error) {
	def := r.Machine.Definition()
	at, err := machineAt(def, in.State)
	in.State = at.state
	out := Outcome[F]{Instance: in, To: in.State}
	what := def.Machine
	if in.Subject != "" {
		what += " " + in.Subject
	}
	if err != nil {
		out.Kind, out.Reason = Unknown, states.ReasonUnknownState
		out.Message = fmt.Sprintf("%s: %v", what, err)
		out.Err = &PermanentError{Err: errors.New(out.Message)}
		return out, nil
	}
	d, err := decide(ctx, r.Machine, o, &in)
	if err != nil {
		return out, err
	}
	out.Instance = in
	out.Decision = d
	to, err := at.check(d)
	if err != nil {
		out.Kind, out.Err = Refused, &PermanentError{Err: fmt.Errorf("%s: %w", what, err)}
		return out, nil
	}
	ac := ActionContext{
		Machine: def.Machine, Namespace: o.GetNamespace(), Name: o.GetName(), Subject: in.Subject,
		State: string(in.State), Reason: d.Reason,
	}
	switch {
	case d.Event != "":
		ac.Action, ac.Target = string(d.Event), string(to)
	case d.Step != "":
		ac.Action = string(d.Step)
	default:
		out.Kind = Waited
		return out, nil
	}
	name := ac.Action
	if r.Ledger != nil && r.Ledger.Note(o, d.Changes, now) {
		out.Kind = Noted
		return out, nil
	}
	learned, err := r.Machine.Act(WithAction(ctx, ac), o, in, d)
	out.Learned = learned
	if err != nil {
		out.Kind, out.Err = Failed, err
		out.Reason, out.Message = ReasonActionFailed, fmt.Sprintf("%s: %s failed: %v", what, name, err)
		if r.Refusal != nil {
			out.Reason = r.Refusal(err)
		}
		return out, nil
	}
	if d.Step != "" {
		out.Kind = Stepped
		return out, nil
	}
	tr, err := at.m.Fire(ctx, d.Event)
	if err != nil {
		out.Kind, out.Err = Refused, &PermanentError{Err: fmt.Errorf("%s: fire %s: %w", what, d.Event, err)}
		return out, nil
	}
	out.Kind, out.To = Fired, tr.To
	if r.Ledger != nil {
		// The step the new state runs first goes on record in this write.
		r.Ledger.Note(o, d.Ahead, now)
	}
	out.Committed = &Committed{
		Machine: def.Machine, Namespace: o.GetNamespace(), Name: o.GetName(), Subject: in.Subject,
		From: tr.From[0], To: tr.To, Event: tr.Event, Reason: d.Reason, Message: d.Message, Time: now,
	}
	return out, nil
}

// warn records the Warning Events of an outcome: every failed action and
// unknown state, and a warning wait when its message is new.
func (r *Runner[O, F]) warn(o O, out Outcome[F], said string) {
	switch {
	case out.Kind == Failed || out.Kind == Unknown:
		r.Log.Warn(o, out.Reason, out.Message)
	case out.Decision.Warning && (out.Kind == Waited || out.Kind == Stepped) && r.Machine.Message(o, out.Subject) != said:
		msg := out.Decision.Message
		if out.Subject != "" {
			msg = out.Subject + ": " + msg
		}
		r.Log.Warn(o, out.Decision.Reason, msg)
	}
}

// defaultResult is the sync's result unless the syncer's Finish says
// otherwise: failed actions and refused or unknown states are errors (the
// dispatcher backs off; a PermanentError marks the latter); a sync that
// fired or noted waits for the informer to deliver its own write; waits and steps
// requeue after the shortest interval their decisions ask for.
func defaultResult[F any](outs []Outcome[F]) (Result, error) {
	var errs []error
	var res Result
	for _, out := range outs {
		switch out.Kind {
		case Failed, Unknown, Refused:
			errs = append(errs, out.Err)
		case Waited, Stepped:
			if after := out.Decision.RequeueAfter; after > 0 && (res.RequeueAfter == 0 || after < res.RequeueAfter) {
				res.RequeueAfter = after
			}
		}
	}
	return res, errors.Join(errs...)
}
