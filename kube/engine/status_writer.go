package engine

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// StatusWriter is the one place a machine's status slice is written. A
// sync works on a deep copy of the cached object and hands both to Write,
// which compares the machine's slice of the two statuses and writes only
// when it changed: a steady machine causes no writes. A write fences the
// key against the versions it replaced (see writeFence), so the next sync
// waits for the informer to deliver it instead of deciding on a cache
// without it (and losing its own write to a conflict).
type StatusWriter[O Object] struct {
	// Update writes o's status (the clientset's UpdateStatus).
	Update func(ctx context.Context, o O) (O, error)
	// Slice returns the part of o's status the machine owns. Every other
	// part is left as the cache had it.
	Slice func(o O) any

	// Get, Rebase and Holds, when set, let a write that lost a race to
	// another writer of the same object be made on the object as it is
	// now, without a second sync: several machines keep their slices in
	// one object (a GlusterCluster's status), and each one's write would
	// otherwise conflict with every other's. Get reads the object live
	// (not from the cache). Rebase applies to live what the sync changed
	// from before to after, and reports false when it cannot: live
	// changed the machine's own part (then the conflict stands, and the
	// key is synced again from a fresh cache). Holds reports whether a
	// cached object already holds that write, which the API server stored
	// as written (times in it rounded to the second), for the fence (see
	// writeFence).
	Get    func(ctx context.Context, o O) (O, error)
	Rebase func(live, before, after O) bool
	Holds  func(cached, before, after, written O) bool

	fence writeFence
}

// maxRebases bounds how often one write is made again on a newer live
// object before it is given up as a conflict.
const maxRebases = 3

// Write persists after's status if the machine's slice differs from
// before's, fences the key, and reports whether it wrote.
func (w *StatusWriter[O]) Write(ctx context.Context, key Key, before, after O) (O, bool, error) {
	if equality.Semantic.DeepEqual(w.Slice(before), w.Slice(after)) {
		return after, false, nil
	}
	replaced := []string{after.GetResourceVersion()}
	updated, err := w.Update(ctx, after)
	rebased := false
	for i := 0; apierrors.IsConflict(err) && w.Get != nil && w.Rebase != nil && w.Holds != nil && i < maxRebases; i++ {
		live, gerr := w.Get(ctx, after)
		if gerr != nil {
			return after, false, fmt.Errorf("%w (reading it live to write again: %v)", err, gerr)
		}
		if !w.Rebase(live, before, after) {
			// The machine's own part changed under the sync: the
			// conflict stands.
			break
		}
		replaced = append(replaced, live.GetResourceVersion())
		updated, err = w.Update(ctx, live)
		rebased = true
	}
	if err != nil {
		return after, false, err
	}
	var holds func(O) bool
	if w.Holds != nil {
		holds = func(cached O) bool { return w.Holds(cached, before, after, updated) }
	}
	committed(&w.fence, key, replaced, updated.GetResourceVersion(), holds, rebased)
	return updated, true, nil
}

// behind reports whether the cached object of key does not yet hold the
// key's last committed write.
func (w *StatusWriter[O]) behind(key Key, cached O) bool { return w.fence.behind(key, cached) }
