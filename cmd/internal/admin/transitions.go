package admin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
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

// belongsToCluster reports whether an object's transitions belong to
// cluster. nodeCluster is a GlusterNode's spec.cluster when the node still
// exists (known); a node that is gone — its last transitions, Deleting ->
// Deleted, are recorded as it goes — is matched by the operator's naming
// convention <cluster>-<template>-<suffix> against the cluster's templates,
// or by the prefix <cluster>- when the templates are unknown too.
func belongsToCluster(kind, name, cluster, nodeCluster string, known bool, templates []string) bool {
	switch kind {
	case kindGlusterCluster:
		return name == cluster
	case kindGlusterNode:
		if known {
			return nodeCluster == cluster
		}
		if len(templates) == 0 {
			return strings.HasPrefix(name, cluster+"-")
		}
		for _, t := range templates {
			if strings.HasPrefix(name, cluster+"-"+t+"-") {
				return true
			}
		}
	}
	return false
}

// clusterFilter applies --cluster, looking GlusterNodes up once each.
type clusterFilter struct {
	ac      versioned.Interface
	cluster string
	// nodes maps namespace/name to the node's cluster; absent entries have
	// not been looked up, gone is for nodes that no longer exist.
	nodes     map[string]string
	gone      map[string]bool
	templates map[string][]string
}

func newClusterFilter(ac versioned.Interface, cluster string) *clusterFilter {
	return &clusterFilter{ac: ac, cluster: cluster, nodes: map[string]string{}, gone: map[string]bool{}, templates: map[string][]string{}}
}

func (f *clusterFilter) match(ctx context.Context, l transitionLine) (bool, error) {
	if f == nil || f.cluster == "" {
		return true, nil
	}
	if l.Kind != kindGlusterNode {
		return belongsToCluster(l.Kind, l.Name, f.cluster, "", false, nil), nil
	}
	key := l.Namespace + "/" + l.Name
	if c, ok := f.nodes[key]; ok {
		return c == f.cluster, nil
	}
	if !f.gone[key] {
		n, err := f.ac.OperatorV1alpha1().GlusterNodes(l.Namespace).Get(ctx, l.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			f.nodes[key] = n.Spec.Cluster
			return n.Spec.Cluster == f.cluster, nil
		case apierrors.IsNotFound(err):
			f.gone[key] = true
		default:
			return false, fmt.Errorf("look up the cluster of GlusterNode %s: %w", key, err)
		}
	}
	templates, err := f.clusterTemplates(ctx, l.Namespace)
	if err != nil {
		return false, err
	}
	return belongsToCluster(l.Kind, l.Name, f.cluster, "", false, templates), nil
}

func (f *clusterFilter) clusterTemplates(ctx context.Context, ns string) ([]string, error) {
	if t, ok := f.templates[ns]; ok {
		return t, nil
	}
	var names []string
	c, err := f.ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, f.cluster, metav1.GetOptions{})
	switch {
	case err == nil:
		for _, t := range c.Spec.NodeTemplates {
			names = append(names, t.Name)
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get GlusterCluster %s/%s: %w", ns, f.cluster, err)
	}
	f.templates[ns] = names
	return names, nil
}

// transitionStream lists, then watches, the Events of one selection and
// writes each transition once.
type transitionStream struct {
	kc     kubernetes.Interface
	opts   transitionsOptions
	filter *clusterFilter
	w      io.Writer
	// printed is the Count printed per Event, so a re-list after an expired
	// watch prints nothing twice, and a recurring transition (Count grows)
	// is printed again.
	printed map[types.UID]int32
}

// streamTransitions writes the transitions selected by opts to w, oldest
// first. With opts.Follow it then watches for new ones, re-listing when the
// watch expires, until ctx ends (which is not an error).
func streamTransitions(ctx context.Context, kc kubernetes.Interface, ac versioned.Interface, opts transitionsOptions, w io.Writer) error {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	s := &transitionStream{kc: kc, opts: opts, w: w, printed: map[types.UID]int32{}}
	if opts.Cluster != "" {
		s.filter = newClusterFilter(ac, opts.Cluster)
	}
	rv, err := s.list(ctx)
	if err != nil || !opts.Follow {
		return err
	}
	backoff, relist := time.Duration(0), false
	for ctx.Err() == nil {
		if relist {
			var listed string
			if listed, err = s.list(ctx); err == nil {
				rv, relist = listed, false
			}
		} else {
			rv, relist, err = s.watch(ctx, rv)
		}
		if ctx.Err() != nil {
			break
		}
		if err == nil {
			backoff = 0
			continue
		}
		// The API server may be restarting; keep following, at a bounded
		// pace, rather than end the stream an admin is tailing.
		backoff = min(max(2*backoff, time.Second), 30*time.Second)
		if s.opts.Errors != nil {
			fmt.Fprintf(s.opts.Errors, "anthill transitions: %v (retrying in %s)\n", err, backoff)
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
	}
	return nil
}

// fieldSelector narrows Events server-side to those about anthill's API
// group; the component is checked client-side because it may be in source
// or in reportingComponent, which one selector cannot both express.
func (s *transitionStream) fieldSelector() string {
	return fields.OneTermEqualSelector("involvedObject.apiVersion", operatorv1alpha1.SchemeGroupVersion.String()).String()
}

// list prints every selected transition not printed yet, sorted by time,
// and returns the resource version to watch from.
func (s *transitionStream) list(ctx context.Context) (string, error) {
	var events []corev1.Event
	opts := metav1.ListOptions{FieldSelector: s.fieldSelector(), Limit: 500}
	var rv string
	for {
		page, err := s.kc.CoreV1().Events(s.opts.Namespace).List(ctx, opts)
		if err != nil {
			return "", fmt.Errorf("list events in %s: %w", namespaceText(s.opts.Namespace), err)
		}
		events = append(events, page.Items...)
		rv = page.ResourceVersion
		if page.Continue == "" {
			break
		}
		opts.Continue = page.Continue
	}
	sortEvents(events)
	listed := make(map[types.UID]bool, len(events))
	for i := range events {
		listed[events[i].UID] = true
		if err := s.emit(ctx, &events[i]); err != nil {
			return "", err
		}
	}
	// Events the API server has expired will not come back; forget them so
	// a long follow does not grow without bound.
	for uid := range s.printed {
		if !listed[uid] {
			delete(s.printed, uid)
		}
	}
	return rv, nil
}

// watch prints transitions as they arrive, from rv on. It returns the
// resource version to resume from, and relist when that cannot work (rv
// has expired, or an Event could not be handled) and the caller must list
// again.
func (s *transitionStream) watch(ctx context.Context, rv string) (next string, relist bool, err error) {
	wi, err := s.kc.CoreV1().Events(s.opts.Namespace).Watch(ctx, metav1.ListOptions{
		FieldSelector: s.fieldSelector(), ResourceVersion: rv, AllowWatchBookmarks: true,
	})
	if err != nil {
		if expired(err) {
			return rv, true, nil
		}
		return rv, false, fmt.Errorf("watch events in %s: %w", namespaceText(s.opts.Namespace), err)
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return rv, false, nil
		case we, open := <-wi.ResultChan():
			if !open {
				return rv, false, nil
			}
			switch we.Type {
			case watch.Added, watch.Modified:
				ev, ok := we.Object.(*corev1.Event)
				if !ok {
					continue
				}
				if err := s.emit(ctx, ev); err != nil {
					// Not printed: list again (after the caller's backoff)
					// so this Event is not skipped.
					return rv, true, err
				}
				rv = ev.ResourceVersion
			case watch.Bookmark:
				if m, err := meta.Accessor(we.Object); err == nil {
					rv = m.GetResourceVersion()
				}
			case watch.Error:
				err := apierrors.FromObject(we.Object)
				if expired(err) {
					return rv, true, nil
				}
				return rv, false, fmt.Errorf("watch events in %s: %w", namespaceText(s.opts.Namespace), err)
			}
		}
	}
}

// emit writes ev if it is a selected transition not printed at its Count.
func (s *transitionStream) emit(ctx context.Context, ev *corev1.Event) error {
	l, ok := eventTransition(ev)
	if !ok {
		return nil
	}
	count := max(ev.Count, 1)
	if s.printed[ev.UID] >= count {
		return nil
	}
	if s.opts.Since > 0 && l.Time.Before(s.opts.Now().Add(-s.opts.Since)) {
		return nil
	}
	match, err := s.filter.match(ctx, l)
	if err != nil || !match {
		return err
	}
	s.printed[ev.UID] = count
	if s.opts.Print != nil {
		return s.opts.Print(s.w, l)
	}
	_, err = fmt.Fprintln(s.w, formatTransition(l, s.opts.Namespace == ""))
	return err
}

// sortEvents orders events by when they last happened. The operator's
// transition Events carry a time in nanoseconds and a sequence number
// (see engine.TransitionEvents); other Events have second precision, so
// ties fall back to the sequence, then to the resource version, which etcd
// assigns in write order.
func sortEvents(events []corev1.Event) {
	sort.SliceStable(events, func(i, j int) bool {
		ti, tj := eventTime(&events[i]), eventTime(&events[j])
		if !ti.Equal(tj) {
			return ti.Before(tj)
		}
		si, oki := eventSequence(&events[i])
		sj, okj := eventSequence(&events[j])
		if oki && okj && si != sj {
			return si < sj
		}
		ri, erri := strconv.ParseUint(events[i].ResourceVersion, 10, 64)
		rj, errj := strconv.ParseUint(events[j].ResourceVersion, 10, 64)
		if erri == nil && errj == nil && ri != rj {
			return ri < rj
		}
		return events[i].Name < events[j].Name
	})
}

// eventSequence is the announcing process's sequence number of ev.
func eventSequence(ev *corev1.Event) (uint64, bool) {
	v, ok := ev.Annotations[engine.AnnotationEventSequence]
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(v, 10, 64)
	return n, err == nil
}

func expired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

func namespaceText(ns string) string {
	if ns == "" {
		return "all namespaces"
	}
	return "namespace " + ns
}
