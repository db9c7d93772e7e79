package engine

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/reference"
	"k8s.io/utils/clock"
)

// The transition Event contract, shared with `anthill transitions`: every
// transition is one core/v1 Event of its own, never folded into another,
// carrying these annotations.
const (
	// AnnotationEventTime is when the transition was announced, in
	// RFC 3339 with nanoseconds: Event timestamps have second precision,
	// too coarse to order a burst.
	AnnotationEventTime = "operator.gluster.org/transition-time"
	// AnnotationEventSequence is the announcing process's sequence number
	// of the Event, in decimal: it orders Events with equal times.
	AnnotationEventSequence = "operator.gluster.org/transition-sequence"
	// EventComponent is the source component of every anthill Event.
	EventComponent = "anthill"
)

// Reasons of the Warning Events that make the rate limit visible.
const (
	// ReasonTransitionLogLimited: an object's transitions exceed the rate
	// limit; from now on they are counted, not recorded as Events.
	ReasonTransitionLogLimited = "TransitionLogRateLimited"
	// ReasonTransitionLogResumed: Events are recorded again; the message
	// says how many transitions were not.
	ReasonTransitionLogResumed = "TransitionLogResumed"
)

// Default rate limit of TransitionEvents: a burst of DefaultEventBurst
// Events per object, refilled at DefaultEventRate per second.
const (
	DefaultEventBurst = 1200
	DefaultEventRate  = 10
)

// eventWriteTimeout bounds the attempts to create one Event.
const eventWriteTimeout = 10 * time.Second

// TransitionEvents writes each transition as its own core/v1 Event, with a
// unique name, and nothing else with it. client-go's recorder, which
// anthill used before, lets 25 Events per object through and then one per
// five minutes, and folds similar ones into one ("combined from similar
// events"), so a burst of transitions — a rolling upgrade puts heal,
// upgrade and cluster transitions on one GlusterCluster — lost most of
// them without a trace.
//
// The guarantee: a transition announced while the API server accepts
// writes becomes exactly one Event, written synchronously before the next
// sync of the same key starts, so the Events of one object are created in
// the order of its transitions. A genuinely looping object is limited per
// object (a token bucket of Burst Events refilled at Rate per second):
// the first transition over the limit writes one Warning Event saying so,
// the ones after it are counted (anthill_transitionlog_suppressed_total),
// and the next transition let through again writes a Warning Event with
// the count. The JSON log line of every transition is written whatever
// the limit.
type TransitionEvents struct {
	Client typedcorev1.EventsGetter
	// Scheme resolves an object's kind for the Event's involvedObject.
	Scheme *runtime.Scheme
	Clock  clock.Clock
	// Burst and Rate are the per-object limit; zero means the defaults.
	Burst int
	Rate  float64
	// Host is the source host of the Events (the pod's name).
	Host    string
	Metrics *Metrics
	Log     *zap.Logger

	mu      sync.Mutex
	seq     uint64
	buckets map[types.UID]*eventBucket
}

// eventBucket is one object's rate limit and what it suppressed.
type eventBucket struct {
	tokens     float64
	last       time.Time
	suppressed int
	since      time.Time
}

// maxBuckets bounds the objects the limiter remembers; full buckets (idle
// objects) are forgotten first.
const maxBuckets = 4096

// admit reports whether obj may have one more Event now, and, when Events
// resume after a suppression, how many were suppressed since when. limited
// is set on the first suppressed transition.
func (t *TransitionEvents) admit(uid types.UID, now time.Time) (ok, limited bool, resumed int, since time.Time, seq uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	burst, rate := float64(t.Burst), t.Rate
	if burst <= 0 {
		burst = DefaultEventBurst
	}
	if rate <= 0 {
		rate = DefaultEventRate
	}
	if t.buckets == nil {
		t.buckets = map[types.UID]*eventBucket{}
	}
	b := t.buckets[uid]
	if b == nil {
		if len(t.buckets) >= maxBuckets {
			t.forgetIdle(now, burst, rate)
		}
		b = &eventBucket{tokens: burst, last: now}
		t.buckets[uid] = b
	}
	b.tokens = min(burst, b.tokens+now.Sub(b.last).Seconds()*rate)
	b.last = now
	if b.tokens < 1 {
		b.suppressed++
		if b.suppressed == 1 {
			b.since = now
			t.seq++
			return false, true, 0, time.Time{}, t.seq
		}
		return false, false, 0, time.Time{}, 0
	}
	b.tokens--
	resumed, since = b.suppressed, b.since
	b.suppressed = 0
	// A resumption writes two Events: the count, then the transition.
	t.seq++
	if resumed > 0 {
		t.seq++
	}
	return true, false, resumed, since, t.seq
}

func (t *TransitionEvents) forgetIdle(now time.Time, burst, rate float64) {
	for uid, b := range t.buckets {
		if b.suppressed == 0 && b.tokens+now.Sub(b.last).Seconds()*rate >= burst {
			delete(t.buckets, uid)
		}
	}
}

// Write records c on obj as one Event (see the type's guarantee).
func (t *TransitionEvents) Write(obj runtime.Object, c Committed, message string) {
	clk := t.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	now := clk.Now()
	ref, err := reference.GetReference(t.Scheme, obj)
	if err != nil {
		t.failed(c, err)
		return
	}
	ok, limited, resumed, since, seq := t.admit(ref.UID, now)
	switch {
	case limited:
		t.create(ref, c, corev1.EventTypeWarning, ReasonTransitionLogLimited,
			fmt.Sprintf("transitions of this object exceed the Event rate limit; they are counted and written to the operator log, not recorded as Events, until the rate falls (%s)", c.Machine),
			now, seq)
	case ok && resumed > 0:
		t.create(ref, c, corev1.EventTypeWarning, ReasonTransitionLogResumed,
			fmt.Sprintf("%d transitions of this object between %s and %s were not recorded as Events (rate limit); the operator log has every one",
				resumed, since.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339)),
			now, seq-1)
	}
	if !ok {
		if t.Metrics != nil {
			t.Metrics.TransitionEventsSuppressed.WithLabelValues(c.Machine).Inc()
		}
		return
	}
	t.create(ref, c, corev1.EventTypeNormal, c.Reason, message, now, seq)
}

// create writes one Event, retrying briefly. Its name is fixed before the
// first attempt, so a retry after a write that did land is AlreadyExists
// and the transition is still recorded once.
func (t *TransitionEvents) create(ref *corev1.ObjectReference, c Committed, typ, reason, message string, now time.Time, seq uint64) {
	name := ref.Name
	if len(name) > 200 {
		name = name[:200]
	}
	ts := metav1.NewTime(now)
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s.%x.%d", name, now.UnixNano(), seq),
			Namespace: ref.Namespace,
			Annotations: map[string]string{
				AnnotationEventTime:     now.UTC().Format(time.RFC3339Nano),
				AnnotationEventSequence: strconv.FormatUint(seq, 10),
			},
		},
		InvolvedObject: *ref,
		Reason:         reason,
		Message:        message,
		Type:           typ,
		Source:         corev1.EventSource{Component: EventComponent, Host: t.Host},
		FirstTimestamp: ts,
		LastTimestamp:  ts,
		Count:          1,
	}
	ctx, cancel := context.WithTimeout(context.Background(), eventWriteTimeout)
	defer cancel()
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		_, err = t.Client.Events(ev.Namespace).Create(ctx, ev, metav1.CreateOptions{})
		if err == nil || apierrors.IsAlreadyExists(err) {
			return
		}
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) || ctx.Err() != nil {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	t.failed(c, err)
}

func (t *TransitionEvents) failed(c Committed, err error) {
	if t.Metrics != nil {
		t.Metrics.TransitionEventErrors.WithLabelValues(c.Machine).Inc()
	}
	if t.Log != nil {
		t.Log.Warn("transition event not recorded", zap.String(LogMachine, c.Machine), zap.String(LogNamespace, c.Namespace),
			zap.String(LogName, c.Name), zap.String(LogFrom, string(c.From)), zap.String(LogTo, string(c.To)), zap.Error(err))
	}
}
