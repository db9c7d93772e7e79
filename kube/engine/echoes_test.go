package engine

import (
	"errors"
	"testing"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An update that is a key's own status write (Result.Echo) wakes every
// other key it concerns, not that one; the next update wakes it again, and
// so does its echo once a sync of the key failed or wrote nothing to skip.
func TestOwnWriteDoesNotWakeItsKey(t *testing.T) {
	d, err := NewDispatcher(DispatcherConfig{Workers: 1, Log: zap.NewNop()})
	if err != nil {
		t.Fatal(err)
	}
	defer d.queue.ShutDown()
	writer, reader := Key{Machine: "a", Namespace: "ns", Name: "x"}, Key{Machine: "b", Namespace: "ns", Name: "x"}
	keys := func(_, _ any) []Key { return []Key{writer, reader} }
	at := func(rv string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "x", ResourceVersion: rv}}
	}
	woken := func() map[Key]bool {
		out := map[Key]bool{}
		for d.queue.Len() > 0 {
			k, _ := d.queue.Get()
			out[k] = true
			d.queue.Done(k)
			d.queue.Forget(k)
		}
		return out
	}
	for _, step := range []struct {
		name       string
		note       func()
		from, to   string
		wantWriter bool
		wantReader bool
	}{
		{name: "the writer's own echo wakes only the reader", note: func() { d.echoes.note(writer, "5", nil) }, from: "4", to: "5", wantReader: true},
		{name: "the next update wakes both", note: func() {}, from: "5", to: "6", wantWriter: true, wantReader: true},
		{name: "a resync wakes neither", note: func() {}, from: "6", to: "6"},
		{name: "an echo noted by a failed sync wakes both", note: func() { d.echoes.note(writer, "7", errors.New("lost")) }, from: "6", to: "7", wantWriter: true, wantReader: true},
		{name: "a sync with nothing to skip clears the echo before it", note: func() { d.echoes.note(writer, "8", nil); d.echoes.note(writer, "", nil) }, from: "7", to: "8", wantWriter: true, wantReader: true},
	} {
		step.note()
		d.updated(keys, at(step.from), at(step.to))
		got := woken()
		if got[writer] != step.wantWriter || got[reader] != step.wantReader {
			t.Errorf("%s: woke writer %t reader %t, want %t %t", step.name, got[writer], got[reader], step.wantWriter, step.wantReader)
		}
	}
}
