package machinestatus

import (
	"reflect"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// OwnFields returns pointers to the fields of a GlusterCluster's status
// that one machine alone writes (the upgrade machine's status.upgrade,
// the heal machine's status.volumes, ...). Every machine persisted in
// the status shares the rest: the conditions (each machine sets its own
// types), the history and the ledger (each appends to them).
type OwnFields func(*operatorv1alpha1.GlusterClusterStatus) []any

// clusterSlice is everything of a cluster's status one machine's write
// may change: its own fields, the conditions, the history and the ledger.
func clusterSlice(own OwnFields) func(*operatorv1alpha1.GlusterCluster) any {
	return func(c *operatorv1alpha1.GlusterCluster) any {
		st := &c.Status
		var out []any
		for _, p := range own(st) {
			out = append(out, reflect.ValueOf(p).Elem().Interface())
		}
		return append(out, st.Conditions, st.History, st.Ledger)
	}
}

// rebaseCluster makes one machine's write of a cluster's status (from
// before to after) again on live, which other machines wrote meanwhile:
// the machine's own fields, each condition type it set or removed, and
// the history and ledger entries it appended. It reports false, changing
// nothing, when live changed one of those to something else than either
// the sync read or wrote: a change to the machine's own part, which the
// sync must see before deciding. Applied to a status that already holds
// the write, it changes nothing.
func rebaseCluster(own OwnFields) func(live, before, after *operatorv1alpha1.GlusterCluster) bool {
	return func(live, before, after *operatorv1alpha1.GlusterCluster) bool {
		l, b, a := own(&live.Status), own(&before.Status), own(&after.Status)
		for i := range l {
			if !threeWay(deref(l[i]), deref(b[i]), deref(a[i])) {
				return false
			}
		}
		conds, ok := rebaseConditions(live.Status.Conditions, before.Status.Conditions, after.Status.Conditions)
		if !ok {
			return false
		}
		for i := range l {
			reflect.ValueOf(l[i]).Elem().Set(reflect.ValueOf(a[i]).Elem())
		}
		live.Status.Conditions = conds
		for _, r := range appended(before.Status.History, after.Status.History) {
			if !slices.ContainsFunc(live.Status.History, same(r)) {
				live.Status.History = AppendHealHistory(live.Status.History, r)
			}
		}
		for _, e := range appended(before.Status.Ledger, after.Status.Ledger) {
			if !slices.ContainsFunc(live.Status.Ledger, same(e)) {
				live.Status.Ledger = AppendBounded(live.Status.Ledger, e, operatorv1alpha1.MaxLedger)
			}
		}
		return true
	}
}

// holdsCluster reports whether cached holds one machine's write of a
// cluster's status (before to after), which the API server stored as
// written: the machine's own fields and the condition types it changed
// as written, and the ledger entries written beyond before. Written, not
// after, is the reference: the server keeps times to the second. The
// history is left out: other machines' records may have pushed the
// write's out of its short window before the cache is looked at.
func holdsCluster(own OwnFields) func(cached, before, after, written *operatorv1alpha1.GlusterCluster) bool {
	return func(cached, before, after, written *operatorv1alpha1.GlusterCluster) bool {
		eq := equality.Semantic.DeepEqual
		c, b, a, w := own(&cached.Status), own(&before.Status), own(&after.Status), own(&written.Status)
		for i := range c {
			if !eq(deref(b[i]), deref(a[i])) && !eq(deref(c[i]), deref(w[i])) {
				return false
			}
		}
		for _, t := range changedConditionTypes(before.Status.Conditions, after.Status.Conditions) {
			if !eq(apimeta.FindStatusCondition(cached.Status.Conditions, t), apimeta.FindStatusCondition(written.Status.Conditions, t)) {
				return false
			}
		}
		for _, e := range appended(before.Status.Ledger, written.Status.Ledger) {
			if !slices.ContainsFunc(cached.Status.Ledger, same(e)) {
				return false
			}
		}
		return true
	}
}

func deref(p any) any { return reflect.ValueOf(p).Elem().Interface() }

// threeWay reports whether live can take a write from before to after:
// the write changes nothing, or live is still as the sync read it, or
// already as it wrote it.
func threeWay(live, before, after any) bool {
	eq := equality.Semantic.DeepEqual
	return eq(before, after) || eq(live, before) || eq(live, after)
}

// changedConditionTypes are the condition types set, changed or removed
// from before to after.
func changedConditionTypes(before, after []metav1.Condition) []string {
	var types []string
	for _, cs := range [][]metav1.Condition{before, after} {
		for _, c := range cs {
			if slices.Contains(types, c.Type) {
				continue
			}
			if !equality.Semantic.DeepEqual(apimeta.FindStatusCondition(before, c.Type), apimeta.FindStatusCondition(after, c.Type)) {
				types = append(types, c.Type)
			}
		}
	}
	return types
}

// rebaseConditions applies to live the conditions the write from before
// to after set, changed or removed, each type on its own; false when live
// changed one of those types otherwise.
func rebaseConditions(live, before, after []metav1.Condition) ([]metav1.Condition, bool) {
	out := slices.Clone(live)
	for _, t := range changedConditionTypes(before, after) {
		l, b, a := apimeta.FindStatusCondition(live, t), apimeta.FindStatusCondition(before, t), apimeta.FindStatusCondition(after, t)
		if !threeWay(l, b, a) {
			return nil, false
		}
		switch {
		case a == nil:
			apimeta.RemoveStatusCondition(&out, t)
		case l == nil:
			out = append(out, *a)
		default:
			out[slices.IndexFunc(out, func(c metav1.Condition) bool { return c.Type == t })] = *a
		}
	}
	return out, true
}

// appended is what after holds beyond before: the entries a write
// appended to a bounded list (which may also have dropped its oldest), in
// order. An entry before holds n times is taken as appended only beyond
// those n.
func appended[T any](before, after []T) []T {
	var out []T
	left := slices.Clone(before)
	for _, e := range after {
		if i := slices.IndexFunc(left, same(e)); i >= 0 {
			left = slices.Delete(left, i, i+1)
			continue
		}
		out = append(out, e)
	}
	return out
}

func same[T any](e T) func(T) bool {
	return func(o T) bool { return equality.Semantic.DeepEqual(o, e) }
}
