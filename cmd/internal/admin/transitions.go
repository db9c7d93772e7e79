package admin

import (
	"fmt"
	"io"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/states"
)

// The operator records every committed transition as a core/v1 Event (see
// engine.TransitionLog): source component anthill, reason the transition's
// reason, message "<machine>[ <subject>]: <From> -> <To> (<event>): <message>",
// on the GlusterNode or GlusterCluster. The constants below are the parts of
// that contract this command reads back.
const (
	anthillComponent   = engine.EventComponent
	kindGlusterNode    = "GlusterNode"
	kindGlusterCluster = "GlusterCluster"
	// combinedPrefix is what client-go's event aggregator puts before a
	// message when it folds many similar events of one object into one.
	combinedPrefix = "(combined from similar events): "
)

// transitionsOptions selects and shapes the stream of transitions.
type transitionsOptions struct {
	// Namespace limits the stream to one namespace; empty means all.
	Namespace string
	// Cluster limits the stream to one GlusterCluster and its GlusterNodes.
	Cluster string
	// Since drops transitions older than now-Since; zero keeps everything
	// the API server still holds (Events expire, an hour by default).
	Since time.Duration
	// Follow keeps watching for new transitions until ctx ends.
	Follow bool
	// Now is the clock Since is measured from; nil means time.Now.
	Now func() time.Time
	// Errors receives the errors a follow stream recovers from by
	// re-listing; nil discards them.
	Errors io.Writer
	// Print writes one selected transition; nil writes formatTransition's
	// line (with the namespace when the stream spans namespaces).
	Print func(w io.Writer, l transitionLine) error
}

// transitionLine is one transition (or operator warning) read back from an
// Event.
type transitionLine struct {
	Time      time.Time
	Namespace string
	Kind      string
	Name      string
	Machine   string
	Subject   string
	From      string
	To        string
	Event     string
	Reason    string
	Message   string
	// Warning marks an operator Warning Event that is not a transition.
	Warning bool
	// Count is how often the API server saw this Event; more than one means
	// the same transition recurred (the recorder folds identical Events).
	Count int32
}

// parseTransitionMessage splits an Event message written by
// engine.TransitionLog.Announce into its parts. ok is false for anything
// else.
func parseTransitionMessage(msg string) (l transitionLine, ok bool) {
	msg = strings.TrimPrefix(msg, combinedPrefix)
	head, rest, ok := strings.Cut(msg, ": ")
	if !ok || head == "" {
		return l, false
	}
	l.Machine, l.Subject, _ = strings.Cut(head, " ")
	if strings.Contains(l.Machine, "->") || strings.Contains(l.Subject, " ") {
		return l, false
	}
	from, rest, ok := strings.Cut(rest, " -> ")
	if !ok || from == "" || strings.Contains(from, " ") {
		return l, false
	}
	to, rest, ok := strings.Cut(rest, " (")
	if !ok || to == "" || strings.Contains(to, " ") {
		return l, false
	}
	event, message, ok := strings.Cut(rest, "):")
	if !ok || event == "" || strings.ContainsAny(event, " ()") {
		return l, false
	}
	l.From, l.To, l.Event = from, to, event
	l.Message = strings.TrimSpace(message)
	return l, true
}

// eventTransition reads ev as a transition of an anthill object. ok is
// false for Events of other components or kinds, and for Normal Events
// whose message is not a transition.
func eventTransition(ev *corev1.Event) (l transitionLine, ok bool) {
	if ev.Source.Component != anthillComponent && ev.ReportingController != anthillComponent {
		return l, false
	}
	ref := ev.InvolvedObject
	if ref.Kind != kindGlusterNode && ref.Kind != kindGlusterCluster {
		return l, false
	}
	if ref.APIVersion != "" && !strings.HasPrefix(ref.APIVersion, operatorv1alpha1.SchemeGroupVersion.Group+"/") {
		return l, false
	}
	l, ok = parseTransitionMessage(ev.Message)
	if !ok {
		if ev.Type != corev1.EventTypeWarning {
			return l, false
		}
		l = transitionLine{Warning: true, Message: strings.TrimPrefix(ev.Message, combinedPrefix)}
	}
	l.Time = eventTime(ev)
	l.Namespace = ref.Namespace
	if l.Namespace == "" {
		l.Namespace = ev.Namespace
	}
	l.Kind, l.Name, l.Reason, l.Count = ref.Kind, ref.Name, ev.Reason, ev.Count
	return l, true
}

// eventTime is when ev last happened, from the most precise field set:
// the operator's own transition time annotation (nanoseconds) first.
func eventTime(ev *corev1.Event) time.Time {
	if v, ok := ev.Annotations[engine.AnnotationEventTime]; ok {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return t
		}
	}
	switch {
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	}
	return ev.CreationTimestamp.Time
}

// ownMachine is the machine whose state an object of kind carries in its
// status; its transitions need no machine label.
func ownMachine(kind string) string {
	switch kind {
	case kindGlusterNode:
		return states.NodeMachine
	case kindGlusterCluster:
		return states.ClusterMachine
	}
	return ""
}

// formatTransition renders l as one line. withNamespace adds the namespace
// column, for streams across namespaces.
func formatTransition(l transitionLine, withNamespace bool) string {
	var b strings.Builder
	b.WriteString(l.Time.UTC().Format(time.RFC3339))
	b.WriteString("  ")
	if withNamespace {
		b.WriteString(l.Namespace)
		b.WriteString("  ")
	}
	b.WriteString(l.Kind + "/" + l.Name + "  ")
	if l.Warning {
		b.WriteString("WARNING  ")
	} else {
		if l.Machine != ownMachine(l.Kind) || l.Subject != "" {
			b.WriteString(l.Machine)
			if l.Subject != "" {
				b.WriteString(" " + l.Subject)
			}
			b.WriteString(": ")
		}
		fmt.Fprintf(&b, "%s -> %s  (%s)  ", l.From, l.To, l.Event)
	}
	switch {
	case l.Reason != "" && l.Message != "":
		b.WriteString(l.Reason + ": " + l.Message)
	case l.Reason != "":
		b.WriteString(l.Reason)
	default:
		b.WriteString(l.Message)
	}
	if l.Count > 1 {
		fmt.Fprintf(&b, " (x%d)", l.Count)
	}
	return strings.TrimRight(b.String(), " ")
}

// historyLine turns a status.history entry of an object into a line, so
// `anthill status` prints history exactly as the transition log does.
func historyLine(kind, namespace, name, ownerMachine string, r operatorv1alpha1.TransitionRecord) transitionLine {
	machine := r.Machine
	if machine == "" {
		machine = ownerMachine
	}
	return transitionLine{
		Time: r.Time.Time, Namespace: namespace, Kind: kind, Name: name,
		Machine: machine, Subject: r.Subject, From: r.From, To: r.To, Event: r.Event,
		Reason: r.Reason, Message: r.Message,
	}
}

func namespaceText(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return "namespace " + ns
}
