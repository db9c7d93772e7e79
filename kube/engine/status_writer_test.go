package engine

import (
	"context"
	"maps"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// sharedObject is an API server's view of one ConfigMap that two machines
// write: each owns one key of Data; an update with a stale
// resourceVersion conflicts.
type sharedObject struct {
	live    *corev1.ConfigMap
	updates int
	rv      int
}

func (s *sharedObject) update(_ context.Context, o *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	s.updates++
	if o.ResourceVersion != s.live.ResourceVersion {
		return nil, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, o.Name, nil)
	}
	s.rv++
	s.live = o.DeepCopy()
	s.live.ResourceVersion = string(rune('0' + s.rv))
	return s.live.DeepCopy(), nil
}

func (s *sharedObject) get(context.Context, *corev1.ConfigMap) (*corev1.ConfigMap, error) {
	return s.live.DeepCopy(), nil
}

// ownKey rebases the write of one key of Data.
func ownKey(key string) func(live, before, after *corev1.ConfigMap) bool {
	return func(live, before, after *corev1.ConfigMap) bool {
		if v := live.Data[key]; v != before.Data[key] && v != after.Data[key] {
			return false
		}
		live.Data = maps.Clone(live.Data)
		live.Data[key] = after.Data[key]
		return true
	}
}

func TestAWriteThatLostToAnotherMachinesSliceIsMadeAgainOnTheLiveObject(t *testing.T) {
	ctx := context.Background()
	api := &sharedObject{live: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "1"}, Data: map[string]string{"a": "1", "b": "1"}}, rv: 1}
	w := &StatusWriter[*corev1.ConfigMap]{Update: api.update, Get: api.get, Rebase: ownKey("a"), Holds: func(c, _, _, written *corev1.ConfigMap) bool { return c.Data["a"] == written.Data["a"] }, Slice: func(o *corev1.ConfigMap) any { return o.Data["a"] }}
	key := Key{Machine: "a", Name: "c"}

	before := api.live.DeepCopy()
	// The other machine writes its key meanwhile.
	other := before.DeepCopy()
	other.Data["b"] = "2"
	if _, err := api.update(ctx, other); err != nil {
		t.Fatal(err)
	}
	after := before.DeepCopy()
	after.Data["a"] = "2"
	updated, wrote, err := w.Write(ctx, key, before, after)
	if err != nil || !wrote {
		t.Fatalf("write: wrote %t, %v", wrote, err)
	}
	if got := api.live.Data; got["a"] != "2" || got["b"] != "2" {
		t.Errorf("live data %v: want both machines' writes", got)
	}
	if updated.ResourceVersion != api.live.ResourceVersion {
		t.Errorf("returned version %s, live %s", updated.ResourceVersion, api.live.ResourceVersion)
	}
	// The fence holds the cache at the version the sync read, and at the
	// other machine's, and lifts at the write's.
	if !w.behind(key, before) || !w.behind(key, other) {
		t.Error("a cache before the rebased write is not held back")
	}
	if w.behind(key, updated) {
		t.Error("the rebased write's own version is held back")
	}

	// A write whose own part changed under it keeps its conflict.
	before = api.live.DeepCopy()
	mine := before.DeepCopy()
	mine.Data["a"] = "3"
	if _, err := api.update(ctx, mine); err != nil {
		t.Fatal(err)
	}
	after = before.DeepCopy()
	after.Data["a"] = "4"
	n := api.updates
	if _, _, err := w.Write(ctx, key, before, after); !apierrors.IsConflict(err) {
		t.Fatalf("a write over a change to the machine's own part: %v, want the conflict", err)
	}
	if api.updates != n+1 || api.live.Data["a"] != "3" {
		t.Errorf("the conflicting write was made again (%d updates, a=%s)", api.updates-n, api.live.Data["a"])
	}
}
