package engine

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// at is a ConfigMap at resourceVersion rv holding data.
func at(rv, data string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv}, Data: map[string]string{"d": data}}
}

func TestWriteFence(t *testing.T) {
	var f writeFence
	k, other := Key{Machine: "node", Namespace: "ns", Name: "a"}, Key{Machine: "node", Namespace: "ns", Name: "b"}
	if f.behind(k, at("7", "")) {
		t.Fatal("a fresh fence holds a key back")
	}
	committed[*corev1.ConfigMap](&f, k, []string{"7"}, "8", nil)
	if !f.behind(k, at("7", "")) {
		t.Error("the version a commit replaced is not seen as behind")
	}
	if f.behind(other, at("7", "")) {
		t.Error("another key is held back")
	}
	if f.behind(k, at("8", "")) || f.behind(k, at("7", "")) {
		t.Error("a newer version did not lift the fence for good")
	}
	committed[*corev1.ConfigMap](&f, k, []string{""}, "", nil)
	if f.behind(k, at("", "")) {
		t.Error("an empty resourceVersion (fake clients) must never hold a key back")
	}
}

// A write made again on a newer live object (5 → live 7 → written 8) may
// be preceded in the cache by 6, a version the sync never saw: the content
// says it is behind; the written version, or any holding the write, lifts
// the fence.
func TestWriteFenceOfARebasedWrite(t *testing.T) {
	holds := func(o *corev1.ConfigMap) bool { return o.Data["d"] == "mine" }
	for _, tc := range []struct {
		name   string
		cached []*corev1.ConfigMap
		want   []bool
	}{
		{"the versions replaced, then one never seen, then the write", []*corev1.ConfigMap{at("5", ""), at("7", ""), at("6", ""), at("8", "mine")}, []bool{true, true, true, false}},
		{"a later version holding the write", []*corev1.ConfigMap{at("6", ""), at("9", "mine"), at("6", "")}, []bool{true, false, false}},
		{"the written version even if its content differs", []*corev1.ConfigMap{at("8", "rewritten")}, []bool{false}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f writeFence
			k := Key{Machine: "cluster", Namespace: "ns", Name: "a"}
			committed(&f, k, []string{"5", "7"}, "8", holds)
			for i, c := range tc.cached {
				if got := f.behind(k, c); got != tc.want[i] {
					t.Errorf("cache at %s (%q): behind %t, want %t", c.ResourceVersion, c.Data["d"], got, tc.want[i])
				}
			}
		})
	}
}
