package admin

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	kubefake "k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/engine"
)

var t0 = time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)

func TestParseTransitionMessage(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		want transitionLine
		ok   bool
	}{
		{
			name: "a node transition with a message",
			msg:  "node: Online -> Maintenance (requestMaintenance): admin asked for maintenance",
			want: transitionLine{Machine: "node", From: "Online", To: "Maintenance", Event: "requestMaintenance", Message: "admin asked for maintenance"},
			ok:   true,
		},
		{
			name: "a heal transition names its volume as subject",
			msg:  "heal vol1: Healthy -> HealPending (healNeeded): 3 entries pending",
			want: transitionLine{Machine: "heal", Subject: "vol1", From: "Healthy", To: "HealPending", Event: "healNeeded", Message: "3 entries pending"},
			ok:   true,
		},
		{
			name: "an empty message leaves only the trailing colon",
			msg:  "cluster: Pending -> Provisioning (provision): ",
			want: transitionLine{Machine: "cluster", From: "Pending", To: "Provisioning", Event: "provision"},
			ok:   true,
		},
		{
			name: "a trimmed empty message still parses",
			msg:  "cluster: Pending -> Provisioning (provision):",
			want: transitionLine{Machine: "cluster", From: "Pending", To: "Provisioning", Event: "provision"},
			ok:   true,
		},
		{
			name: "the message may itself contain arrows, colons and parentheses",
			msg:  "node: Draining -> Detaching (drained): moved b1 -> n2 (vol: v1): done",
			want: transitionLine{Machine: "node", From: "Draining", To: "Detaching", Event: "drained", Message: "moved b1 -> n2 (vol: v1): done"},
			ok:   true,
		},
		{
			name: "the aggregator's prefix is dropped",
			msg:  "(combined from similar events): node: Online -> Offline (peerDown): peer not alive",
			want: transitionLine{Machine: "node", From: "Online", To: "Offline", Event: "peerDown", Message: "peer not alive"},
			ok:   true,
		},
		{name: "an action failure is not a transition", msg: "drain failed: replace-brick: timeout"},
		{name: "an empty message is not a transition", msg: ""},
		{name: "no event in parentheses", msg: "node: Online -> Offline: peer down"},
		{name: "a state with a space is not a state", msg: "node: Online now -> Offline (peerDown): x"},
		{name: "no machine", msg: ": Online -> Offline (peerDown): x"},
		{name: "an arrow before the colon", msg: "a -> b: c -> d (e): f"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := parseTransitionMessage(tt.msg)
			if ok != tt.ok {
				t.Fatalf("parseTransitionMessage(%q) ok = %v, want %v (got %+v)", tt.msg, ok, tt.ok, got)
			}
			if ok && got != tt.want {
				t.Errorf("parseTransitionMessage(%q)\n got %+v\nwant %+v", tt.msg, got, tt.want)
			}
		})
	}
}

// event is a core/v1 Event as engine.TransitionLog records it through
// client-go's recorder; opts adjust one field per case.
func event(name, kind, obj, typ, reason, msg string, at time.Time, opts ...func(*corev1.Event)) *corev1.Event {
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, UID: types.UID("uid-" + name)},
		InvolvedObject: corev1.ObjectReference{
			APIVersion: operatorv1alpha1.SchemeGroupVersion.String(), Kind: kind, Namespace: "ns", Name: obj,
		},
		Type: typ, Reason: reason, Message: msg,
		Source:         corev1.EventSource{Component: "anthill"},
		FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at), Count: 1,
		ReportingController: "anthill",
	}
	for _, o := range opts {
		o(ev)
	}
	return ev
}

func TestEventTransition(t *testing.T) {
	const nodeMsg = "node: Online -> Maintenance (requestMaintenance): admin request"
	nodeLine := transitionLine{
		Time: t0, Namespace: "ns", Kind: "GlusterNode", Name: "n1", Machine: "node",
		From: "Online", To: "Maintenance", Event: "requestMaintenance", Reason: "MaintenanceRequested",
		Message: "admin request", Count: 1,
	}
	tests := []struct {
		name string
		ev   *corev1.Event
		want transitionLine
		ok   bool
	}{
		{
			name: "a transition on a GlusterNode",
			ev:   event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0),
			want: nodeLine, ok: true,
		},
		{
			name: "reportingComponent alone identifies the operator",
			ev: event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0,
				func(e *corev1.Event) { e.Source = corev1.EventSource{} }),
			want: nodeLine, ok: true,
		},
		{
			name: "the last occurrence's time is the line's time",
			ev: event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0,
				func(e *corev1.Event) {
					e.FirstTimestamp = metav1.NewTime(t0.Add(-time.Hour))
					e.Count = 3
				}),
			want: func() transitionLine { l := nodeLine; l.Count = 3; return l }(),
			ok:   true,
		},
		{
			name: "an Event with only eventTime set",
			ev: event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0,
				func(e *corev1.Event) {
					e.FirstTimestamp, e.LastTimestamp = metav1.Time{}, metav1.Time{}
					e.EventTime = metav1.NewMicroTime(t0)
				}),
			want: nodeLine, ok: true,
		},
		{
			name: "a Warning without a transition is kept, marked",
			ev:   event("e", "GlusterCluster", "c1", corev1.EventTypeWarning, "ActionFailed", "provision failed: etcd not ready", t0),
			want: transitionLine{Time: t0, Namespace: "ns", Kind: "GlusterCluster", Name: "c1", Warning: true, Reason: "ActionFailed", Message: "provision failed: etcd not ready", Count: 1},
			ok:   true,
		},
		{
			name: "a Normal Event without a transition is skipped",
			ev:   event("e", "GlusterCluster", "c1", corev1.EventTypeNormal, "Something", "hello", t0),
		},
		{
			name: "another component's Event is skipped",
			ev: event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0,
				func(e *corev1.Event) {
					e.Source.Component, e.ReportingController = "kubelet", "kubelet"
				}),
		},
		{
			name: "an Event on a Pod is skipped",
			ev:   event("e", "Pod", "p", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0),
		},
		{
			name: "a GlusterNode kind of another API group is skipped",
			ev: event("e", "GlusterNode", "n1", corev1.EventTypeNormal, "MaintenanceRequested", nodeMsg, t0,
				func(e *corev1.Event) { e.InvolvedObject.APIVersion = "example.com/v1" }),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := eventTransition(tt.ev)
			if ok != tt.ok {
				t.Fatalf("eventTransition ok = %v, want %v (got %+v)", ok, tt.ok, got)
			}
			if ok && got != tt.want {
				t.Errorf("eventTransition\n got %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestFormatTransition(t *testing.T) {
	node := transitionLine{
		Time: t0, Namespace: "ns", Kind: "GlusterNode", Name: "n1", Machine: "node",
		From: "Online", To: "Maintenance", Event: "requestMaintenance", Reason: "MaintenanceRequested", Message: "admin request",
	}
	with := func(f func(*transitionLine)) transitionLine { l := node; f(&l); return l }
	tests := []struct {
		name          string
		line          transitionLine
		withNamespace bool
		want          string
	}{
		{
			name: "a node's own machine needs no label",
			line: node,
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin request",
		},
		{
			name: "times print in UTC",
			line: with(func(l *transitionLine) { l.Time = t0.In(time.FixedZone("X", 3600)) }),
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin request",
		},
		{
			name: "a heal transition on the cluster names machine and volume",
			line: transitionLine{Time: t0, Kind: "GlusterCluster", Name: "c1", Machine: "heal", Subject: "vol1",
				From: "Healthy", To: "HealPending", Event: "healNeeded", Reason: "HealNeeded", Message: "3 entries"},
			want: "2031-05-06T07:08:09Z  GlusterCluster/c1  heal vol1: Healthy -> HealPending  (healNeeded)  HealNeeded: 3 entries",
		},
		{
			name: "an upgrade transition on the cluster names its machine",
			line: transitionLine{Time: t0, Kind: "GlusterCluster", Name: "c1", Machine: "upgrade",
				From: "Idle", To: "Validating", Event: "start", Reason: "VersionChanged"},
			want: "2031-05-06T07:08:09Z  GlusterCluster/c1  upgrade: Idle -> Validating  (start)  VersionChanged",
		},
		{
			name: "a warning",
			line: transitionLine{Time: t0, Kind: "GlusterNode", Name: "n1", Warning: true, Reason: "ActionFailed", Message: "drain failed: x"},
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  WARNING  ActionFailed: drain failed: x",
		},
		{
			name:          "across namespaces the namespace leads",
			line:          node,
			withNamespace: true,
			want:          "2031-05-06T07:08:09Z  ns  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin request",
		},
		{
			name: "a recurring transition shows its count",
			line: with(func(l *transitionLine) { l.Count = 4 }),
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin request (x4)",
		},
		{
			name: "no reason and no message leave no trailing space",
			line: with(func(l *transitionLine) { l.Reason, l.Message = "", "" }),
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)",
		},
		{
			name: "a message without a reason",
			line: with(func(l *transitionLine) { l.Reason = "" }),
			want: "2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  admin request",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := formatTransition(tt.line, tt.withNamespace); got != tt.want {
				t.Errorf("formatTransition\n got %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestBelongsToCluster(t *testing.T) {
	tests := []struct {
		name, kind, obj, nodeCluster string
		known                        bool
		templates                    []string
		want                         bool
	}{
		{name: "the cluster itself", kind: "GlusterCluster", obj: "gluster", want: true},
		{name: "another cluster", kind: "GlusterCluster", obj: "gluster-b"},
		{name: "a live node of the cluster", kind: "GlusterNode", obj: "anything", nodeCluster: "gluster", known: true, want: true},
		{name: "a live node of another cluster, despite its name", kind: "GlusterNode", obj: "gluster-zone-1-0", nodeCluster: "gluster-b", known: true},
		{name: "a gone node named after a template", kind: "GlusterNode", obj: "gluster-zone-1-abc", templates: []string{"zone-1", "zone-2"}, want: true},
		{name: "a gone node of a similarly named cluster", kind: "GlusterNode", obj: "gluster-b-zone-1-abc", templates: []string{"zone-1"}},
		{name: "a gone node, templates unknown, matched by prefix", kind: "GlusterNode", obj: "gluster-x-1", want: true},
		{name: "a gone node of another cluster, templates unknown", kind: "GlusterNode", obj: "other-x-1"},
		{name: "another kind", kind: "Pod", obj: "gluster"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := belongsToCluster(tt.kind, tt.obj, "gluster", tt.nodeCluster, tt.known, tt.templates); got != tt.want {
				t.Errorf("belongsToCluster(%s %s) = %v, want %v", tt.kind, tt.obj, got, tt.want)
			}
		})
	}
}

func glusterNode(ns, name, cluster string) *operatorv1alpha1.GlusterNode {
	return &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: cluster, Zone: "zone-1"},
	}
}

func glusterCluster(ns, name string, templates ...string) *operatorv1alpha1.GlusterCluster {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	for _, tpl := range templates {
		c.Spec.NodeTemplates = append(c.Spec.NodeTemplates, operatorv1alpha1.NodeTemplate{Name: tpl, Zone: tpl})
	}
	return c
}

func TestStreamTransitionsListsSortedAndFiltered(t *testing.T) {
	rv := func(v string) func(*corev1.Event) { return func(e *corev1.Event) { e.ResourceVersion = v } }
	kc := kubefake.NewClientset(
		// Out of order on purpose: the stream sorts by time, then by
		// resource version within one second.
		event("e3", "GlusterNode", "gluster-zone-1-0", "Normal", "PeerUp", "node: Joining -> Online (joined): peer alive", t0.Add(2*time.Second), rv("30")),
		event("e2", "GlusterNode", "gluster-zone-1-0", "Normal", "Provisioned", "node: Provisioning -> Joining (provisioned): pod ready", t0.Add(time.Second), rv("21")),
		event("e1", "GlusterNode", "gluster-zone-1-0", "Normal", "Created", "node: Pending -> Provisioning (provision): ", t0.Add(time.Second), rv("20")),
		event("e0", "GlusterCluster", "gluster", "Normal", "Created", "cluster: Pending -> Provisioning (provision): ", t0, rv("10")),
		event("other-cluster", "GlusterCluster", "other", "Normal", "Created", "cluster: Pending -> Provisioning (provision): ", t0, rv("11")),
		event("other-node", "GlusterNode", "other-zone-1-0", "Normal", "Created", "node: Pending -> Provisioning (provision): ", t0, rv("12")),
		event("gone-node", "GlusterNode", "gluster-zone-1-old", "Normal", "Deleted", "node: Deleting -> Deleted (deleted): ", t0.Add(3*time.Second), rv("40")),
		event("warning", "GlusterNode", "gluster-zone-1-0", "Warning", "ActionFailed", "join failed: peer refused", t0.Add(3*time.Second), rv("41")),
		event("old", "GlusterCluster", "gluster", "Normal", "Old", "cluster: Ready -> Degraded (nodeDown): ", t0.Add(-time.Hour), rv("5")),
		event("pod", "Pod", "p", "Normal", "Pulled", "image pulled", t0, rv("13"),
			func(e *corev1.Event) { e.Source.Component, e.ReportingController = "kubelet", "kubelet" }),
		event("elsewhere", "GlusterCluster", "gluster", "Normal", "Created", "cluster: Pending -> Provisioning (provision): ", t0,
			func(e *corev1.Event) { e.Namespace, e.InvolvedObject.Namespace = "other-ns", "other-ns" }),
	)
	ac := anthillfake.NewSimpleClientset(
		glusterCluster("ns", "gluster", "zone-1"),
		glusterNode("ns", "gluster-zone-1-0", "gluster"),
		glusterNode("ns", "other-zone-1-0", "other"),
	)
	var out bytes.Buffer
	opts := transitionsOptions{Namespace: "ns", Cluster: "gluster", Since: 30 * time.Minute, Now: func() time.Time { return t0.Add(time.Minute) }}
	if err := streamTransitions(context.Background(), kc, ac, opts, &out); err != nil {
		t.Fatalf("streamTransitions: %v", err)
	}
	want := strings.Join([]string{
		"2031-05-06T07:08:09Z  GlusterCluster/gluster  Pending -> Provisioning  (provision)  Created",
		"2031-05-06T07:08:10Z  GlusterNode/gluster-zone-1-0  Pending -> Provisioning  (provision)  Created",
		"2031-05-06T07:08:10Z  GlusterNode/gluster-zone-1-0  Provisioning -> Joining  (provisioned)  Provisioned: pod ready",
		"2031-05-06T07:08:11Z  GlusterNode/gluster-zone-1-0  Joining -> Online  (joined)  PeerUp: peer alive",
		"2031-05-06T07:08:12Z  GlusterNode/gluster-zone-1-old  Deleting -> Deleted  (deleted)  Deleted",
		"2031-05-06T07:08:12Z  GlusterNode/gluster-zone-1-0  WARNING  ActionFailed: join failed: peer refused",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	// Each live node is looked up once, however many Events it has.
	gets := map[string]int{}
	for _, a := range ac.Actions() {
		if g, ok := a.(clienttesting.GetAction); ok && a.GetResource().Resource == "glusternodes" {
			gets[g.GetName()]++
		}
	}
	for name, n := range gets {
		if n != 1 {
			t.Errorf("GlusterNode %s looked up %d times, want once", name, n)
		}
	}
}

func TestStreamTransitionsAllNamespacesShowsNamespace(t *testing.T) {
	kc := kubefake.NewClientset(
		event("a", "GlusterCluster", "gluster", "Normal", "Created", "cluster: Pending -> Provisioning (provision): ", t0),
		event("b", "GlusterCluster", "gluster", "Normal", "Created", "cluster: Pending -> Provisioning (provision): ", t0.Add(time.Second),
			func(e *corev1.Event) { e.Namespace, e.InvolvedObject.Namespace = "zz", "zz" }),
	)
	var out bytes.Buffer
	if err := streamTransitions(context.Background(), kc, anthillfake.NewSimpleClientset(), transitionsOptions{}, &out); err != nil {
		t.Fatalf("streamTransitions: %v", err)
	}
	want := "2031-05-06T07:08:09Z  ns  GlusterCluster/gluster  Pending -> Provisioning  (provision)  Created\n" +
		"2031-05-06T07:08:10Z  zz  GlusterCluster/gluster  Pending -> Provisioning  (provision)  Created\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
}

func TestStreamTransitionsReportsListErrors(t *testing.T) {
	kc := kubefake.NewClientset()
	kc.PrependReactor("list", "events", func(clienttesting.Action) (bool, runtime.Object, error) {
		return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "events"}, "", fmt.Errorf("no RBAC"))
	})
	err := streamTransitions(context.Background(), kc, anthillfake.NewSimpleClientset(), transitionsOptions{Namespace: "ns", Follow: true}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "list events in namespace ns") || !apierrors.IsForbidden(err) {
		t.Errorf("streamTransitions = %v, want a wrapped Forbidden naming the namespace", err)
	}
}

// syncBuffer is a bytes.Buffer a streaming goroutine writes while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func watchCount(kc *kubefake.Clientset) int {
	n := 0
	for _, a := range kc.Actions() {
		if a.GetVerb() == "watch" && a.GetResource().Resource == "events" {
			n++
		}
	}
	return n
}

// TestStreamTransitionsFollowsAcrossAnExpiredWatch: the first watch fails
// with 410 Gone after an Event arrived that it never delivered; the stream
// must list again, print that Event once and nothing twice, then keep
// following — including a recurrence of an Event (its Count grows).
func TestStreamTransitionsFollowsAcrossAnExpiredWatch(t *testing.T) {
	first := event("first", "GlusterNode", "n1", "Normal", "PeerDown", "node: Online -> Offline (peerDown): peer not alive", t0)
	kc := kubefake.NewClientset(first)
	watches := 0
	kc.PrependWatchReactor("events", func(clienttesting.Action) (bool, watch.Interface, error) {
		watches++
		if watches > 1 {
			return false, nil, nil
		}
		// Written to the tracker directly: the Fake's lock is held here.
		gap := event("gap", "GlusterNode", "n1", "Normal", "PeerUp", "node: Offline -> Online (peerUp): peer alive", t0.Add(time.Second))
		if err := kc.Tracker().Add(gap); err != nil {
			t.Errorf("add gap event: %v", err)
		}
		fw := watch.NewFake()
		go fw.Error(&metav1.Status{Status: metav1.StatusFailure, Code: 410, Reason: metav1.StatusReasonExpired, Message: "too old resource version"})
		return true, fw, nil
	})

	var out syncBuffer
	var errs syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- streamTransitions(ctx, kc, anthillfake.NewSimpleClientset(), transitionsOptions{Namespace: "ns", Follow: true, Errors: &errs}, &out)
	}()
	waitFor(t, "a second watch after the 410", func() bool { return watchCount(kc) >= 2 })

	live := event("live", "GlusterNode", "n1", "Normal", "MaintenanceRequested", "node: Online -> Maintenance (requestMaintenance): admin", t0.Add(2*time.Second))
	if _, err := kc.CoreV1().Events("ns").Create(ctx, live, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create live event: %v", err)
	}
	waitFor(t, "the live event", func() bool { return strings.Contains(out.String(), "requestMaintenance") })
	again := live.DeepCopy()
	again.Count, again.LastTimestamp = 2, metav1.NewTime(t0.Add(5*time.Second))
	if _, err := kc.CoreV1().Events("ns").Update(ctx, again, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("update live event: %v", err)
	}
	waitFor(t, "the recurrence", func() bool { return strings.Contains(out.String(), "(x2)") })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("streamTransitions after cancel = %v, want nil", err)
	}

	want := strings.Join([]string{
		"2031-05-06T07:08:09Z  GlusterNode/n1  Online -> Offline  (peerDown)  PeerDown: peer not alive",
		"2031-05-06T07:08:10Z  GlusterNode/n1  Offline -> Online  (peerUp)  PeerUp: peer alive",
		"2031-05-06T07:08:11Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin",
		"2031-05-06T07:08:14Z  GlusterNode/n1  Online -> Maintenance  (requestMaintenance)  MaintenanceRequested: admin (x2)",
	}, "\n") + "\n"
	if out.String() != want {
		t.Errorf("output\n%s\nwant\n%s", out.String(), want)
	}
	if errs.String() != "" {
		t.Errorf("an expired watch is routine, yet errors were reported: %s", errs.String())
	}
}

// TestSortEventsOrdersABurstByTheOperatorsAnnotations: Events written in
// one second (equal second-precision timestamps, resource versions in
// another order) are ordered by the transition time annotation, then by
// the sequence.
func TestSortEventsOrdersABurstByTheOperatorsAnnotations(t *testing.T) {
	sec := metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	ev := func(name, rv, at, seq string) corev1.Event {
		return corev1.Event{
			ObjectMeta: metav1.ObjectMeta{Name: name, ResourceVersion: rv, Annotations: map[string]string{
				engine.AnnotationEventTime: at, engine.AnnotationEventSequence: seq,
			}},
			LastTimestamp: sec,
		}
	}
	events := []corev1.Event{
		ev("c", "1", "2026-01-02T03:04:05.3Z", "3"),
		ev("b", "2", "2026-01-02T03:04:05.1Z", "9"),
		ev("a", "3", "2026-01-02T03:04:05.1Z", "2"),
	}
	sortEvents(events)
	var got []string
	for _, e := range events {
		got = append(got, e.Name)
	}
	if strings.Join(got, ",") != "a,b,c" {
		t.Errorf("order %v, want a,b,c", got)
	}
}
