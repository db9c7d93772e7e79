package objects

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

func TestTrimForCacheDropsManagedFieldsOnly(t *testing.T) {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: "s", Labels: map[string]string{"a": "b"}, ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "m"}}},
		Data:       map[string][]byte{"k": []byte("v")},
	}
	out, err := TrimForCache(s)
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Secret)
	if got.ManagedFields != nil || got.Name != "s" || got.Labels["a"] != "b" || string(got.Data["k"]) != "v" {
		t.Errorf("TrimForCache = %+v, want the Secret without managedFields and nothing else changed", got)
	}
	// A tombstone has no object metadata of its own; it passes unchanged.
	tomb := cache.DeletedFinalStateUnknown{Key: "ns/s", Obj: s}
	if out, err := TrimForCache(tomb); err != nil || out.(cache.DeletedFinalStateUnknown).Key != "ns/s" {
		t.Errorf("TrimForCache(tombstone) = %v, %v; want it unchanged", out, err)
	}
}
