package engine

import (
	"context"

	"k8s.io/apimachinery/pkg/api/equality"
)

// StatusWriter is the one place a machine's status slice is written. A
// sync works on a deep copy of the cached object and hands both to Write,
// which compares the machine's slice of the two statuses and writes only
// when it changed: a steady machine causes no writes. A write that carries
// a transition fences the key against the version it replaced (see
// writeFence), so the next sync waits for the informer to deliver it.
type StatusWriter[O Object] struct {
	// Update writes o's status (the clientset's UpdateStatus).
	Update func(ctx context.Context, o O) (O, error)
	// Slice returns the part of o's status the machine owns. Every other
	// part is left as the cache had it.
	Slice func(o O) any

	fence writeFence
}

// Write persists after's status if the machine's slice differs from
// before's, and reports whether it wrote. When commit is set (the write
// carries a transition) the key is fenced.
func (w *StatusWriter[O]) Write(ctx context.Context, key Key, before, after O, commit bool) (O, bool, error) {
	if equality.Semantic.DeepEqual(w.Slice(before), w.Slice(after)) {
		return after, false, nil
	}
	replaced := after.GetResourceVersion()
	updated, err := w.Update(ctx, after)
	if err != nil {
		return after, false, err
	}
	if commit {
		w.fence.committed(key, replaced)
	}
	return updated, true, nil
}

// behind reports whether the cached version rv of key is the one the
// key's last committed write replaced.
func (w *StatusWriter[O]) behind(key Key, rv string) bool { return w.fence.behind(key, rv) }
