package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// The runner's protocol is tested once, here, with a fake machine: a
// ticket whose cursor lives in its object's data ("state" for a single
// instance, "state/<subject>" for several), decided by a script.

var ticket = &fsm.Definition{
	Machine: "ticket",
	Doc:     "A ticket, to exercise the runner.",
	Initial: "Open",
	States: []fsm.StateDoc{
		{Name: "Open", Doc: "Entered on creation. Left by `start`; runs `poke`."},
		{Name: "Working", Doc: "Entered by `start`. Left by `close`."},
		{Name: "Closed", Doc: "Entered by `close`. Terminal."},
	},
	Events: []fsm.EventDoc{
		{Name: "start", Doc: "Work begins. Action: counted."},
		{Name: "close", Doc: "Work ends. No action."},
	},
	Transitions: []fsm.Transition{
		{Event: "start", From: []fsm.State{"Open"}, To: "Working"},
		{Event: "close", From: []fsm.State{"Working"}, To: "Closed"},
	},
	Steps:    []fsm.StepDoc{{Name: "poke", In: []fsm.State{"Open"}, Doc: "Remind someone. Action: counted."}},
	Terminal: []fsm.State{"Closed"},
}

// ticketObject is the fake machine's custom resource: its cursor and
// messages live in Data, beside its conditions.
type ticketObject struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	Data       map[string]string
	Conditions []metav1.Condition
	// Schema is the status schema level of the status's writer.
	Schema int32
}

func (o *ticketObject) GetStatusSchema() int32 { return o.Schema }

func (o *ticketObject) DeepCopyObject() runtime.Object {
	c := *o
	o.ObjectMeta.DeepCopyInto(&c.ObjectMeta)
	c.Data = maps.Clone(o.Data)
	c.Conditions = slices.Clone(o.Conditions)
	return &c
}

func (o *ticketObject) DeepCopy() *ticketObject { return o.DeepCopyObject().(*ticketObject) }

// world is the fake API server and the fake machine's spec.
type world struct {
	t *testing.T
	// stored is the object as the API server has it; cached what the
	// informer cache returns (the test decides when it catches up).
	stored, cached *ticketObject
	rv             int
	// subjects are the instances (nil: one instance without a subject).
	subjects []string
	decide   func(in Instance[string]) states.Decision
	actErr   error
	learned  any
	writeErr error
	acted    []string
	writes   int
	prepared int
	finished int
}

func newWorld(t *testing.T, data map[string]string) *world {
	w := &world{t: t, rv: 1}
	w.stored = &ticketObject{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "t", ResourceVersion: "1", Generation: 3}, Data: data}
	w.cached = w.stored.DeepCopy()
	return w
}

func (w *world) Definition() *fsm.Definition { return ticket }
func (w *world) Get(Key) (*ticketObject, error) {
	if w.cached == nil {
		return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "configmaps"}, "t")
	}
	return w.cached, nil
}
func (w *world) Forget(Key) {}
func (w *world) Prepare(context.Context, *ticketObject) (bool, Result, error) {
	w.prepared++
	return false, Result{}, nil
}

func cursor(subject string) string {
	if subject == "" {
		return "state"
	}
	return "state/" + subject
}

func (w *world) Gather(_ context.Context, _ *ticketObject, in *Instance[string]) error {
	if in.State == "Lost" || in.State == "Gone" {
		w.t.Errorf("gathered for the unknown state %s", in.State)
	}
	in.Facts = "facts of " + in.Subject
	return nil
}
func (w *world) Instances(_ context.Context, o *ticketObject) ([]Instance[string], error) {
	subjects := w.subjects
	if subjects == nil {
		subjects = []string{""}
	}
	var ins []Instance[string]
	for _, s := range subjects {
		ins = append(ins, Instance[string]{Subject: s, State: fsm.State(o.Data[cursor(s)])})
	}
	return ins, nil
}
func (w *world) Decide(in Instance[string]) states.Decision {
	if in.Facts != "facts of "+in.Subject {
		w.t.Errorf("decided %q without its facts (%q)", in.Subject, in.Facts)
	}
	return w.decide(in)
}
func (w *world) Act(_ context.Context, _ *ticketObject, in Instance[string], d states.Decision) (any, error) {
	w.acted = append(w.acted, in.Subject+":"+string(d.Event)+string(d.Step))
	return w.learned, w.actErr
}
func (w *world) Conditions(o *ticketObject) *[]metav1.Condition { return &o.Conditions }
func (w *world) Message(o *ticketObject, subject string) string {
	return o.Data["message/"+subject]
}
func (w *world) Record(o *ticketObject, outs []Outcome[string], _ time.Time) {
	if o.Data == nil {
		o.Data = map[string]string{}
	}
	for _, out := range outs {
		if out.Learned != nil {
			o.Data["learned/"+out.Subject] = fmt.Sprint(out.Learned)
		}
		switch out.Kind {
		case Fired, Waited, Stepped:
			o.Data[cursor(out.Subject)] = string(out.To)
			o.Data["message/"+out.Subject] = out.Decision.Message
		case Failed, Unknown:
			o.Data["message/"+out.Subject] = out.Message
		}
	}
}
func (w *world) Finish(_ context.Context, _ *ticketObject, _ []Outcome[string], res Result, err error) (Result, error) {
	w.finished++
	return res, err
}

// update is the API server's UpdateStatus: it fails on a stale version.
func (w *world) update(_ context.Context, o *ticketObject) (*ticketObject, error) {
	if w.writeErr != nil {
		return nil, w.writeErr
	}
	if o.ResourceVersion != w.stored.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, o.Name, errors.New("stale"))
	}
	w.writes++
	w.rv++
	w.stored = o.DeepCopy()
	w.stored.ResourceVersion = strconv.Itoa(w.rv)
	return w.stored.DeepCopy(), nil
}

// catchUp lets the informer cache see the stored object.
func (w *world) catchUp() { w.cached = w.stored.DeepCopy() }

func (w *world) runner() (*Runner[*ticketObject, string], *record.FakeRecorder) {
	rec := record.NewFakeRecorder(20)
	return &Runner[*ticketObject, string]{
		Machine: w,
		Writer:  &StatusWriter[*ticketObject]{Update: w.update, Slice: func(o *ticketObject) any { return []any{o.Data, o.Conditions} }},
		Log:     &TransitionLog{Log: zap.NewNop(), Recorder: rec},
		Clock:   clocktesting.NewFakeClock(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)),
		Refusal: func(err error) string {
			if strings.Contains(err.Error(), "refused") {
				return "Refused"
			}
			return ""
		},
	}, rec
}

func events(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

var key = Key{Machine: "ticket", Namespace: "ns", Name: "t"}

func fire(e fsm.Event) func(Instance[string]) states.Decision {
	return func(Instance[string]) states.Decision {
		return states.Decision{Event: e, Reason: "Go", Message: "go " + string(e)}
	}
}

func TestRunnerActsBeforeItFiresAndAnnouncesAfterTheWrite(t *testing.T) {
	w := newWorld(t, nil)
	w.decide = fire("start")
	r, rec := w.runner()
	res, err := r.Sync(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if w.stored.Data["state"] != "Working" || w.writes != 1 {
		t.Fatalf("stored %v after %d writes; want Working after one", w.stored.Data, w.writes)
	}
	if fmt.Sprint(w.acted) != "[:start]" {
		t.Errorf("acted %v, want the start action once", w.acted)
	}
	if res != (Result{}) {
		t.Errorf("result %+v: a sync that fired waits for the informer to deliver its write", res)
	}
	if ev := events(rec); len(ev) != 1 || !strings.Contains(ev[0], "Normal Go ticket: Open -> Working (start)") {
		t.Errorf("events %q, want one Normal event announcing the transition", ev)
	}
}

func TestWhatAnActionLearnedReachesRecordNotTheFacts(t *testing.T) {
	w := newWorld(t, nil)
	w.decide = func(in Instance[string]) states.Decision {
		if in.Facts != "facts of " {
			t.Errorf("decided on facts %q, want them as Gather read them", in.Facts)
		}
		return states.Decision{Event: "start", Reason: "Go", Message: "go start"}
	}
	w.learned = "ticket 42"
	r, _ := w.runner()
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if got := w.stored.Data["learned/"]; got != "ticket 42" {
		t.Errorf("Record kept %q of what the action learned, want %q", got, "ticket 42")
	}
}

func TestRunnerFailingActionLeavesTheState(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.decide = fire("start")
	w.actErr = errors.New("GD2 refused the call")
	r, rec := w.runner()
	_, err := r.Sync(context.Background(), key)
	if err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("error %v, want the action's error so the dispatcher backs off", err)
	}
	if ErrorClass(err) != ClassTransient {
		t.Errorf("a failed action is class %s, want transient", ErrorClass(err))
	}
	if got := w.stored.Data["state"]; got != "Open" {
		t.Errorf("state %q after a failed action, want Open", got)
	}
	if got := w.stored.Data["message/"]; !strings.Contains(got, "start failed: GD2 refused the call") {
		t.Errorf("recorded message %q does not say what failed", got)
	}
	if ev := events(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning Refused ") {
		t.Errorf("events %q, want one Warning with the refusal's reason and no announcement", ev)
	}
}

func TestRunnerRetriesAFailedWriteWithoutAnnouncing(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.decide = fire("start")
	w.writeErr = errors.New("etcd timed out")
	r, rec := w.runner()
	if _, err := r.Sync(context.Background(), key); err == nil || !strings.Contains(err.Error(), "etcd timed out") {
		t.Fatalf("error %v, want the write's error", err)
	}
	if ev := events(rec); len(ev) != 0 {
		t.Errorf("events %q after a failed write: nothing durable happened, nothing may be announced", ev)
	}
	// The retry decides again from the unchanged object, re-runs the
	// (idempotent) action and commits.
	w.writeErr = nil
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if w.stored.Data["state"] != "Working" || fmt.Sprint(w.acted) != "[:start :start]" {
		t.Errorf("after the retry: stored %v, acted %v", w.stored.Data, w.acted)
	}
	if ev := events(rec); len(ev) != 1 {
		t.Errorf("events %q, want the one announcement of the retried commit", ev)
	}
}

func TestRunnerSurfacesAnUnknownStateAndNeverResetsIt(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Lost"})
	w.decide = func(Instance[string]) states.Decision {
		t.Fatal("an unknown state must not be decided")
		return states.Decision{}
	}
	r, rec := w.runner()
	_, err := r.Sync(context.Background(), key)
	var perm *PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("error %v, want a PermanentError", err)
	}
	if w.stored.Data["state"] != "Lost" {
		t.Errorf("state reset to %q", w.stored.Data["state"])
	}
	if !strings.Contains(w.stored.Data["message/"], "Lost") {
		t.Errorf("message %q does not name the unknown state", w.stored.Data["message/"])
	}
	if c := apimeta.FindStatusCondition(w.stored.Conditions, "Degraded"); c == nil || c.Status != metav1.ConditionTrue || c.Reason != states.ReasonUnknownState || c.ObservedGeneration != 3 {
		t.Errorf("Degraded condition %+v, want True with reason %s for generation 3", c, states.ReasonUnknownState)
	}
	if ev := events(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+states.ReasonUnknownState) {
		t.Errorf("events %q, want one %s Warning", ev, states.ReasonUnknownState)
	}
	if len(w.acted) != 0 {
		t.Errorf("acted %v in an unknown state", w.acted)
	}
}

// TestRunnerRefusesAStatusANewerOperatorWrote: an object whose status
// carries a schema level above this operator's is not prepared, decided,
// acted on or written (a write would drop what this operator does not
// know); a Warning Event says why, and the sync looks again later.
func TestRunnerRefusesAStatusANewerOperatorWrote(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.stored.Schema = operatorv1alpha1.StatusSchemaLevel + 1
	w.catchUp()
	w.decide = func(Instance[string]) states.Decision {
		t.Fatal("a newer status must not be decided")
		return states.Decision{}
	}
	r, rec := w.runner()
	res, err := r.Sync(context.Background(), key)
	if err != nil || res.RequeueAfter == 0 {
		t.Fatalf("Sync = %+v, %v; want a later look and no error", res, err)
	}
	if w.prepared != 0 || w.writes != 0 || len(w.acted) != 0 {
		t.Errorf("prepared %d, wrote %d, acted %v on a newer status", w.prepared, w.writes, w.acted)
	}
	if ev := events(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning "+states.ReasonNewerStatus) || !strings.Contains(ev[0], "statusSchema") {
		t.Errorf("events %q, want one %s Warning naming status.statusSchema", ev, states.ReasonNewerStatus)
	}

	// At this operator's level (or below: written before levels existed)
	// the object is worked on as usual.
	w.stored.Schema = operatorv1alpha1.StatusSchemaLevel
	w.catchUp()
	w.decide = fire("start")
	if _, err := r.Sync(context.Background(), key); err != nil || w.stored.Data["state"] != "Working" {
		t.Fatalf("at its own level: %v, state %q", err, w.stored.Data["state"])
	}
}

func TestRunnerRefusesADecisionTheDefinitionDoesNotAllow(t *testing.T) {
	for _, d := range []states.Decision{
		{Event: "close", Reason: "Go", Message: "close from Open"},
		{Step: "poke", Event: "start", Reason: "Go", Message: "both"},
	} {
		w := newWorld(t, map[string]string{"state": "Open"})
		w.decide = func(Instance[string]) states.Decision { return d }
		r, _ := w.runner()
		_, err := r.Sync(context.Background(), key)
		if ErrorClass(err) != ClassPermanent || len(w.acted) != 0 || w.writes != 0 {
			t.Errorf("%+v: error %v (class %s), acted %v, writes %d; want a permanent error and nothing done", d, err, ErrorClass(err), w.acted, w.writes)
		}
	}
}

func TestRunnerRequeuesAWaitAndWritesOnlyWhatChanged(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.decide = func(Instance[string]) states.Decision {
		return states.Decision{Reason: "Later", Message: "not yet", RequeueAfter: 5 * time.Second, Warning: true}
	}
	r, rec := w.runner()
	for i := range 3 {
		res, err := r.Sync(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		if res.RequeueAfter != 5*time.Second {
			t.Errorf("sync %d: requeue after %v, want the decision's 5s", i, res.RequeueAfter)
		}
		// The wait's own write need not wake it before its 5s.
		if want := map[bool]string{true: w.stored.ResourceVersion}[i == 0]; res.Echo != want {
			t.Errorf("sync %d: echo %q, want %q (the version of its write, if it wrote)", i, res.Echo, want)
		}
		w.catchUp()
	}
	if w.writes != 1 {
		t.Errorf("%d writes for a steady wait, want one (the first records the message)", w.writes)
	}
	if ev := events(rec); len(ev) != 1 || !strings.HasPrefix(ev[0], "Warning Later") {
		t.Errorf("events %q, want one Warning for the warning wait's new message", ev)
	}
}

func TestRunnerFencesACacheBehindItsLastCommit(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.decide = func(in Instance[string]) states.Decision {
		if in.State == "Open" {
			return states.Decision{Event: "start", Reason: "Go", Message: "start"}
		}
		return states.Decision{Reason: "Busy", Message: "working"}
	}
	r, _ := w.runner()
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	// The cache still shows the version the commit replaced.
	res, err := r.Sync(context.Background(), key)
	if err != nil || res.RequeueAfter != fenceRetry {
		t.Fatalf("sync on a stale cache: %+v, %v; want a requeue after %v", res, err, fenceRetry)
	}
	if fmt.Sprint(w.acted) != "[:start]" || w.prepared != 1 {
		t.Errorf("acted %v, prepared %d: a fenced sync must do nothing", w.acted, w.prepared)
	}
	w.catchUp()
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if w.prepared != 2 {
		t.Error("the fence did not lift once the cache caught up")
	}
}

func TestRunnerStepsWithoutLeavingTheState(t *testing.T) {
	w := newWorld(t, map[string]string{"state": "Open"})
	w.decide = func(Instance[string]) states.Decision {
		return states.Decision{Step: "poke", Reason: "Poke", Message: "poking", RequeueAfter: time.Second}
	}
	r, rec := w.runner()
	res, err := r.Sync(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	if w.stored.Data["state"] != "Open" || fmt.Sprint(w.acted) != "[:poke]" || res.RequeueAfter != time.Second {
		t.Errorf("stored %v, acted %v, result %+v", w.stored.Data, w.acted, res)
	}
	if w.writes != 1 || res.Echo != "" {
		t.Errorf("%d writes, echo %q: a step's write must wake its key (the next sync reads what the step changed)", w.writes, res.Echo)
	}
	if ev := events(rec); len(ev) != 0 {
		t.Errorf("events %q for a step that is not recorded", ev)
	}
}

// Several instances in one object (the heal machine's volumes): each is
// decided on its own, all land in one write, each transition is
// announced with its subject.
func TestRunnerAdvancesEveryInstanceWithOneWrite(t *testing.T) {
	w := newWorld(t, map[string]string{"state/a": "Open", "state/b": "Working", "state/c": "Gone"})
	w.subjects = []string{"a", "b", "c"}
	w.decide = func(in Instance[string]) states.Decision {
		switch in.Subject {
		case "a":
			return states.Decision{Event: "start", Reason: "Go", Message: "start a"}
		default:
			return states.Decision{Reason: "Wait", Message: "waiting", RequeueAfter: time.Minute}
		}
	}
	r, rec := w.runner()
	_, err := r.Sync(context.Background(), key)
	if ErrorClass(err) != ClassPermanent {
		t.Errorf("error %v: the unknown state of c must surface as permanent", err)
	}
	if w.writes != 1 || w.stored.Data["state/a"] != "Working" || w.stored.Data["state/b"] != "Working" || w.stored.Data["state/c"] != "Gone" {
		t.Errorf("after %d writes: %v", w.writes, w.stored.Data)
	}
	// Warnings are recorded as the sync goes, announcements after the write.
	ev := events(rec)
	if len(ev) != 2 || !strings.HasPrefix(ev[0], "Warning "+states.ReasonUnknownState+" ticket c:") || !strings.Contains(ev[1], "ticket a: Open -> Working") {
		t.Errorf("events %q, want c's unknown state, then a's transition", ev)
	}
}

func TestRunnerForgetsAnObjectThatIsGone(t *testing.T) {
	w := newWorld(t, nil)
	w.cached = nil
	r, _ := w.runner()
	if res, err := r.Sync(context.Background(), key); err != nil || res != (Result{}) || w.prepared != 0 {
		t.Errorf("sync of a deleted object: %+v, %v, prepared %d", res, err, w.prepared)
	}
}

// aheadWorld is the fake machine with a record that must be written
// before its start action runs ("record" in its data, which ticketLedger
// keeps), and facts that a live read may change.
type aheadWorld struct {
	*world
	// liveFacts, when set, is what a live read finds; liveReads counts
	// the live reads.
	liveFacts string
	liveReads int
}

// ticketLedger keeps a ticket's one record: the change of a start ("start
// to <state> on <facts>"), and the change a transition puts on record
// ahead ("ahead").
type ticketLedger struct{}

func (ticketLedger) Note(o *ticketObject, changes []states.Change, _ time.Time) bool {
	changed := false
	for _, c := range changes {
		key, line := "record", c.Action+" to "+c.State+" on "+c.Reason
		if c.Action == "ahead" {
			key = "ahead"
		}
		if o.Data[key] == line {
			continue
		}
		if o.Data == nil {
			o.Data = map[string]string{}
		}
		o.Data[key], changed = line, true
	}
	return changed
}

// recordedStart is a start whose change goes on record first, naming the
// facts it was decided on; ahead, a change the transition puts on record
// ahead.
func recordedStart(ahead bool) func(Instance[string]) states.Decision {
	return func(in Instance[string]) states.Decision {
		d := states.Decision{Event: "start", Reason: "Go", Message: "go start",
			Changes: []states.Change{{Action: "start", State: "Working", Reason: in.Facts}}}
		if ahead {
			d.Ahead = []states.Change{{Action: "ahead", State: "Working", Reason: in.Facts}}
		}
		return d
	}
}

func (w *aheadWorld) GatherLive(_ context.Context, _ *ticketObject, in *Instance[string], _ states.Decision) error {
	w.liveReads++
	if w.liveFacts != "" {
		in.Facts = w.liveFacts
	}
	return nil
}

func (w *aheadWorld) runner() *Runner[*ticketObject, string] {
	r, _ := w.world.runner()
	r.Machine, r.Ledger = w, ticketLedger{}
	return r
}

// TestRunnerPutsAnActionOnRecordBeforeItRuns: a decision whose action must
// be on record first writes the record and acts on nothing; the sync
// waits for the informer to deliver the write (the key is fenced), and
// the next sync finds the record and acts, once.
func TestRunnerPutsAnActionOnRecordBeforeItRuns(t *testing.T) {
	w := &aheadWorld{world: newWorld(t, map[string]string{"state": "Open"})}
	w.decide = recordedStart(false)
	r := w.runner()
	res, err := r.Sync(context.Background(), key)
	if err != nil || res != (Result{}) {
		t.Fatalf("sync = %+v, %v; want no requeue: the write brings the next sync", res, err)
	}
	if w.stored.Data["record"] != "start to Working on facts of " || w.stored.Data["state"] != "Open" || len(w.acted) != 0 {
		t.Fatalf("stored %v, acted %v; want the record written and nothing acted", w.stored.Data, w.acted)
	}
	if res, err := r.Sync(context.Background(), key); err != nil || res.RequeueAfter == 0 || len(w.acted) != 0 {
		t.Fatalf("a sync on the cache from before the record: %+v, %v, acted %v; want it fenced", res, err, w.acted)
	}
	w.catchUp()
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(w.acted) != "[:start]" || w.stored.Data["state"] != "Working" || w.writes != 2 {
		t.Fatalf("acted %v, stored %v after %d writes; want one start, Working, two writes", w.acted, w.stored.Data, w.writes)
	}
}

// TestRunnerActsOnNothingWhenItsRecordIsLost: when the write of the record
// fails, nothing acts, and the next sync records again before acting.
func TestRunnerActsOnNothingWhenItsRecordIsLost(t *testing.T) {
	w := &aheadWorld{world: newWorld(t, map[string]string{"state": "Open"})}
	w.decide = recordedStart(false)
	w.writeErr = errors.New("injected: etcd timeout")
	r := w.runner()
	if _, err := r.Sync(context.Background(), key); err == nil {
		t.Fatal("a failed write of the record must fail the sync")
	}
	if len(w.acted) != 0 || w.stored.Data["record"] != "" {
		t.Fatalf("acted %v, stored %v after a lost record", w.acted, w.stored.Data)
	}
	w.writeErr = nil
	for range 2 {
		if _, err := r.Sync(context.Background(), key); err != nil {
			t.Fatal(err)
		}
		w.catchUp()
	}
	if fmt.Sprint(w.acted) != "[:start]" || w.stored.Data["record"] == "" {
		t.Fatalf("acted %v, stored %v; want the record, then one start", w.acted, w.stored.Data)
	}
}

// TestRunnerPutsTheStepAheadOnRecordWithItsTransition: the changes a
// transition puts on record ahead (Decision.Ahead) go into the write that
// commits it, after its action ran, and a record already there is kept.
func TestRunnerPutsTheStepAheadOnRecordWithItsTransition(t *testing.T) {
	w := &aheadWorld{world: newWorld(t, map[string]string{"state": "Open", "record": "start to Working on facts of "})}
	w.decide = recordedStart(true)
	r := w.runner()
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(w.acted) != "[:start]" || w.stored.Data["state"] != "Working" || w.stored.Data["ahead"] != "ahead to Working on facts of " || w.writes != 1 {
		t.Fatalf("acted %v, stored %v after %d writes; want the start and its ahead record in one write", w.acted, w.stored.Data, w.writes)
	}
	// A failed action fires nothing and puts nothing ahead.
	w2 := &aheadWorld{world: newWorld(t, map[string]string{"state": "Open", "record": "start to Working on facts of "})}
	w2.decide, w2.actErr = recordedStart(true), errors.New("injected: refused")
	if _, err := w2.runner().Sync(context.Background(), key); err == nil || w2.stored.Data["ahead"] != "" {
		t.Fatalf("a failed start: %v, stored %v", err, w2.stored.Data)
	}
}

// TestRunnerDecidesAnActionAgainOnALiveRead: a decision that acts is
// taken again from facts read live, and the runner records and acts on
// that decision; a wait reads nothing live.
func TestRunnerDecidesAnActionAgainOnALiveRead(t *testing.T) {
	w := &aheadWorld{world: newWorld(t, map[string]string{"state": "Open", "record": "start to Working on facts of "}), liveFacts: "live facts"}
	waitOnCache := false
	w.decide = func(in Instance[string]) states.Decision {
		if in.Facts == "live facts" || waitOnCache {
			return states.Decision{Reason: "Held", Message: "the live read says wait"}
		}
		return states.Decision{Event: "start"}
	}
	r := w.runner()
	r.Machine = &liveChecked{w}
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if len(w.acted) != 0 || w.liveReads != 1 || w.stored.Data["message/"] != "the live read says wait" {
		t.Fatalf("acted %v after %d live reads, stored %v; want the live decision (a wait) kept", w.acted, w.liveReads, w.stored.Data)
	}
	w.catchUp()
	waitOnCache = true
	if _, err := r.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
	if w.liveReads != 1 {
		t.Errorf("%d live reads; a wait on the cached facts must read nothing live", w.liveReads)
	}
}

// liveChecked is an aheadWorld whose Decide accepts live facts (the
// world's checks that it was handed gathered ones).
type liveChecked struct{ *aheadWorld }

func (l *liveChecked) Decide(in Instance[string]) states.Decision { return l.decide(in) }

// TestRunnerTakesPromptRoundsInOneSync: a round that fires into a prompt
// state is followed at once by the next, decided from the object the
// write returned (the cache never caught up), up to Rounds; a round that
// ends in a state Prompt does not name, or that only waited, ends the
// sync; without Rounds one decision is all a sync takes. Finish runs
// once, after the last round.
func TestRunnerTakesPromptRoundsInOneSync(t *testing.T) {
	script := func(in Instance[string]) states.Decision {
		switch in.State {
		case "", "Open":
			return states.Decision{Event: "start", Reason: "Go", Message: "go start"}
		case "Working":
			return states.Decision{Event: "close", Reason: "Go", Message: "go close"}
		}
		return states.Decision{Reason: "Done", Message: "closed"}
	}
	for _, tc := range []struct {
		name   string
		rounds int
		prompt func(fsm.State) bool
		state  string
		acted  string
		writes int
	}{
		{"no rounds: one decision", 0, func(fsm.State) bool { return true }, "Working", "[:start]", 1},
		{"two rounds into prompt states", 2, func(fsm.State) bool { return true }, "Closed", "[:start :close]", 2},
		{"a third round waits and writes its message", 3, func(fsm.State) bool { return true }, "Closed", "[:start :close]", 3},
		{"a state that is not prompt ends the sync", 3, func(s fsm.State) bool { return s != "Working" }, "Working", "[:start]", 1},
		{"no Prompt: one decision", 3, nil, "Working", "[:start]", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, nil)
			w.decide = script
			r, _ := w.runner()
			r.Rounds, r.Prompt = tc.rounds, tc.prompt
			if _, err := r.Sync(context.Background(), key); err != nil {
				t.Fatal(err)
			}
			if got := w.stored.Data["state"]; got != tc.state || fmt.Sprint(w.acted) != tc.acted || w.writes != tc.writes {
				t.Fatalf("state %s, acted %v, %d writes; want %s, %s, %d", got, w.acted, w.writes, tc.state, tc.acted, tc.writes)
			}
			if w.finished != 1 {
				t.Errorf("Finish ran %d times, want once, after the last round", w.finished)
			}
			// The cache never caught up: the fence holds back every
			// version the rounds replaced.
			if !r.Writer.behind(key, w.cached) {
				t.Error("the cache from before the sync is not behind its last write")
			}
		})
	}
}
