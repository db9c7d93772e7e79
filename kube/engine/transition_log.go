package engine

import (
	"fmt"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Committed describes one transition that has been persisted in status.
type Committed struct {
	Machine   string
	Namespace string
	Name      string
	// Subject names the instance inside the object when the object holds
	// several machines (a volume's heal machine in the cluster status).
	Subject string
	From    fsm.State
	To      fsm.State
	Event   fsm.Event
	Reason  string
	Message string
	Time    time.Time
}

// Record returns the status.history entry of c.
func (c Committed) Record() operatorv1alpha1.TransitionRecord {
	return operatorv1alpha1.TransitionRecord{
		Time: metav1.NewTime(c.Time), Machine: c.Machine, Subject: c.Subject,
		From: string(c.From), To: string(c.To), Event: string(c.Event), Reason: c.Reason, Message: c.Message,
	}
}

// EventMessage is the message of c's Event:
// "<machine>[ <subject>]: <From> -> <To> (<event>): <message>", which
// `anthill transitions` parses back.
func (c Committed) EventMessage() string {
	subject := ""
	if c.Subject != "" {
		subject = " " + c.Subject
	}
	return fmt.Sprintf("%s%s: %s -> %s (%s): %s", c.Machine, subject, c.From, c.To, c.Event, c.Message)
}

// AppendHistory appends r to h, dropping the oldest entries beyond
// operatorv1alpha1.MaxHistory: history is a bounded window, the Events and
// the JSON log keep the full record.
func AppendHistory(h []operatorv1alpha1.TransitionRecord, r operatorv1alpha1.TransitionRecord) []operatorv1alpha1.TransitionRecord {
	h = append(h, r)
	if over := len(h) - operatorv1alpha1.MaxHistory; over > 0 {
		h = append([]operatorv1alpha1.TransitionRecord(nil), h[over:]...)
	}
	return h
}

// TransitionLog announces committed transitions: one JSON log line, one
// Kubernetes Event on the object, one counter increment. It is called only
// after the status write that persists the transition succeeded, so every
// announced transition is durable.
type TransitionLog struct {
	Log     *zap.Logger
	Metrics *Metrics
	// Events records each transition as an Event of its own (the lossless
	// log `anthill transitions` reads); nil falls back to Recorder.
	Events *TransitionEvents
	// Recorder records the Warning Events, which client-go may fold: a
	// warning that repeats is one Event with a count.
	Recorder record.EventRecorder
}

// Announce logs, records and counts c on obj.
func (t *TransitionLog) Announce(obj runtime.Object, c Committed) {
	fields := []zap.Field{
		zap.String(LogMachine, c.Machine), zap.String(LogNamespace, c.Namespace), zap.String(LogName, c.Name),
		zap.String(LogFrom, string(c.From)), zap.String(LogTo, string(c.To)), zap.String(LogEvent, string(c.Event)),
		zap.String(LogReason, c.Reason),
	}
	if c.Subject != "" {
		fields = append(fields, zap.String(LogSubject, c.Subject))
	}
	if c.Message != "" {
		fields = append(fields, zap.String(LogMessage, c.Message))
	}
	t.Log.Info("transition", fields...)
	if t.Metrics != nil {
		t.Metrics.Transitions.WithLabelValues(c.Machine, string(c.From), string(c.To), string(c.Event)).Inc()
	}
	if obj == nil {
		return
	}
	msg := c.EventMessage()
	switch {
	case t.Events != nil:
		t.Events.Write(obj, c, msg)
	case t.Recorder != nil:
		t.Recorder.Event(obj, corev1.EventTypeNormal, c.Reason, msg)
	}
}

// Warn records a Warning Event (a blocked step, an unknown state) without a
// transition.
func (t *TransitionLog) Warn(obj runtime.Object, reason, message string) {
	if t.Recorder != nil && obj != nil {
		t.Recorder.Event(obj, corev1.EventTypeWarning, reason, message)
	}
}
