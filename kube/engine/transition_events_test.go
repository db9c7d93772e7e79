package engine

import (
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
)

func testEvents(t *testing.T, burst int, rate float64) (*TransitionEvents, *fake.Clientset, *clocktesting.FakeClock) {
	t.Helper()
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		t.Fatal(err)
	}
	kc := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	return &TransitionEvents{Client: kc.CoreV1(), Scheme: scheme, Clock: clk, Burst: burst, Rate: rate, Metrics: NewMetrics(), Log: zap.NewNop()}, kc, clk
}

func transitionNo(i int) Committed {
	return Committed{Machine: "heal", Namespace: "ns", Name: "c", Subject: "vol1",
		From: fsm.State("Healthy"), To: fsm.State("HealPending"), Event: fsm.Event("healNeeded"), Reason: "HealNeeded", Message: "n=" + strconv.Itoa(i)}
}

// listed returns the Events of ns ordered by their sequence annotation.
func listed(t *testing.T, kc *fake.Clientset) []corev1.Event {
	t.Helper()
	l, err := kc.CoreV1().Events("ns").List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := make([]corev1.Event, len(l.Items))
	for _, ev := range l.Items {
		n, err := strconv.Atoi(ev.Annotations[AnnotationEventSequence])
		if err != nil || n < 1 || n > len(out) {
			t.Fatalf("event %s has sequence %q, want 1..%d", ev.Name, ev.Annotations[AnnotationEventSequence], len(out))
		}
		out[n-1] = ev
	}
	return out
}

func TestTransitionEventsRecordsEveryTransitionOfABurstOnce(t *testing.T) {
	w, kc, clk := testEvents(t, 0, 0)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"}}
	for i := range 1000 {
		c := transitionNo(i)
		w.Write(obj, c, c.EventMessage())
		clk.Step(50 * time.Millisecond) // 1,000 in 50 s
	}
	evs := listed(t, kc)
	if len(evs) != 1000 {
		t.Fatalf("%d Events, want 1000", len(evs))
	}
	for i, ev := range evs {
		if want := "heal vol1: Healthy -> HealPending (healNeeded): n=" + strconv.Itoa(i); ev.Message != want || ev.Count != 1 || ev.Type != corev1.EventTypeNormal {
			t.Fatalf("Event %d: %s %q count %d, want Normal %q count 1", i, ev.Type, ev.Message, ev.Count, want)
		}
		if ev.InvolvedObject.Kind != "ConfigMap" || ev.InvolvedObject.UID != "u1" || ev.Source.Component != EventComponent {
			t.Fatalf("Event %d is about %+v from %+v", i, ev.InvolvedObject, ev.Source)
		}
	}
	if got := counterValue(t, w.Metrics.TransitionEventsSuppressed.WithLabelValues("heal")); got != 0 {
		t.Errorf("suppressed %v, want 0", got)
	}
}

func TestTransitionEventsLimitsALoopingObjectWithAVisibleCount(t *testing.T) {
	w, kc, clk := testEvents(t, 5, 1)
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c", UID: "u1"}}
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "d", UID: "u2"}}
	for i := range 20 { // 20 at once: 5 pass, 15 are suppressed
		c := transitionNo(i)
		w.Write(obj, c, c.EventMessage())
	}
	c := transitionNo(99)
	w.Write(other, c, c.EventMessage()) // another object has its own budget
	clk.Step(3 * time.Second)
	c = transitionNo(20)
	w.Write(obj, c, c.EventMessage())

	evs := listed(t, kc)
	var got []string
	for _, ev := range evs {
		got = append(got, fmt.Sprintf("%s/%s %s", ev.InvolvedObject.Name, ev.Type, ev.Reason))
	}
	want := []string{
		"c/Normal HealNeeded", "c/Normal HealNeeded", "c/Normal HealNeeded", "c/Normal HealNeeded", "c/Normal HealNeeded",
		"c/Warning " + ReasonTransitionLogLimited, "d/Normal HealNeeded",
		"c/Warning " + ReasonTransitionLogResumed, "c/Normal HealNeeded",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("Events:\n%v\nwant:\n%v", got, want)
	}
	if msg := evs[7].Message; msg[:3] != "15 " {
		t.Errorf("resume message %q should start with the count 15", msg)
	}
	if evs[8].Message != "heal vol1: Healthy -> HealPending (healNeeded): n=20" {
		t.Errorf("the transition after the resume is %q", evs[8].Message)
	}
	if got := counterValue(t, w.Metrics.TransitionEventsSuppressed.WithLabelValues("heal")); got != 15 {
		t.Errorf("suppressed %v, want 15", got)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
