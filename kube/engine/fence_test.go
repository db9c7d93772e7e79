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
	committed[*corev1.ConfigMap](&f, k, []string{"7"}, "8", nil, false)
	if !f.behind(k, at("7", "")) {
		t.Error("the version a commit replaced is not seen as behind")
	}
	if f.behind(other, at("7", "")) {
		t.Error("another key is held back")
	}
	if f.behind(k, at("8", "")) || f.behind(k, at("7", "")) {
		t.Error("a newer version did not lift the fence for good")
	}
	committed[*corev1.ConfigMap](&f, k, []string{""}, "", nil, false)
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
			committed(&f, k, []string{"5", "7"}, "8", holds, true)
			for i, c := range tc.cached {
				if got := f.behind(k, c); got != tc.want[i] {
					t.Errorf("cache at %s (%q): behind %t, want %t", c.ResourceVersion, c.Data["d"], got, tc.want[i])
				}
			}
		})
	}
}

// A sync's next round writes on the object its last write returned (7 →
// 8, then 8 → 9): until the cache shows 9, both 7 and 8 are behind, and a
// version between them that a rebased first write never saw is told by
// content.
func TestWriteFenceOfChainedWrites(t *testing.T) {
	k := Key{Machine: "node", Namespace: "ns", Name: "a"}
	t.Run("plain writes", func(t *testing.T) {
		var f writeFence
		committed[*corev1.ConfigMap](&f, k, []string{"7"}, "8", nil, false)
		committed[*corev1.ConfigMap](&f, k, []string{"8"}, "9", nil, false)
		for _, rv := range []string{"7", "8"} {
			if !f.behind(k, at(rv, "")) {
				t.Errorf("cache at %s: not behind the second round's write", rv)
			}
		}
		if f.behind(k, at("9", "")) {
			t.Error("the last round's version is held back")
		}
	})
	t.Run("a rebased write, then a plain one on what it returned", func(t *testing.T) {
		var f writeFence
		holds := func(o *corev1.ConfigMap) bool { return o.Data["d"] == "mine" }
		committed(&f, k, []string{"5", "7"}, "8", holds, true)
		committed(&f, k, []string{"8"}, "9", holds, false)
		for _, c := range []*corev1.ConfigMap{at("5", ""), at("6", ""), at("8", "mine")} {
			if !f.behind(k, c) {
				t.Errorf("cache at %s: not behind the second round's write", c.ResourceVersion)
			}
		}
		if f.behind(k, at("9", "mine")) {
			t.Error("the last round's version is held back")
		}
	})
	t.Run("a write that does not build on the last one", func(t *testing.T) {
		var f writeFence
		committed[*corev1.ConfigMap](&f, k, []string{"7"}, "8", nil, false)
		committed[*corev1.ConfigMap](&f, k, []string{"10"}, "11", nil, false)
		if f.behind(k, at("7", "")) {
			t.Error("a version only an older, unrelated commit replaced is held back")
		}
	})
}
