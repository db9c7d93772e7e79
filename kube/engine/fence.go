package engine

import (
	"sync"
	"time"
)

// fenceRetry is how soon a sync that found its cache behind its own last
// commit looks again (the informer's update also enqueues the key).
const fenceRetry = 50 * time.Millisecond

// writeFence keeps a syncer from acting twice on one state. After a sync
// commits a transition, the informer may deliver another event for the
// key before the commit's own update; the sync that event triggers would
// read the object as it was before the commit, repeat the action, and
// lose the status write to a conflict. The fence remembers the
// resourceVersion each commit replaced; while the cache still shows that
// version, the sync waits for the cache instead of acting. The zero value
// is ready to use.
type writeFence struct {
	mu       sync.Mutex
	replaced map[Key]string
}

// committed records that a commit for key replaced resourceVersion rv.
func (f *writeFence) committed(key Key, rv string) {
	if rv == "" {
		// Only fake clients leave resourceVersion empty; there is
		// nothing to tell versions apart by.
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.replaced == nil {
		f.replaced = map[Key]string{}
	}
	f.replaced[key] = rv
}

// behind reports whether the cached object (at resourceVersion rv) is the
// version key's last commit replaced. Any other version lifts the fence.
func (f *writeFence) behind(key Key, rv string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	old, ok := f.replaced[key]
	if ok && old == rv {
		return true
	}
	delete(f.replaced, key)
	return false
}
