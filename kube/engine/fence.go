package engine

import (
	"slices"
	"sync"
	"time"
)

// fenceRetry is how soon a sync that found its cache behind its own last
// commit looks again (the informer's update also enqueues the key).
const fenceRetry = 50 * time.Millisecond

// maxFence is how long a fence that tells versions apart by content (a
// rebased write's) holds at most: long past any informer's delivery, and
// it lifts even if somebody else rewrote the machine's part meanwhile.
const maxFence = 10 * time.Second

// writeFence keeps a syncer from deciding on a cache without its own last
// write. After a sync writes (a transition, a record an action waits for,
// or only a wait's new message), the informer may deliver another event
// for the key before the write's own update; the sync that event
// triggers would read the object as it was before the write, repeat an
// action, and lose its status write to a conflict. The fence remembers
// the resourceVersions each write replaced; while the cache still shows
// one of them, the sync waits for the cache instead of acting. A write
// made again on a newer live object (StatusWriter.Rebase) may have
// versions between the cached one and its own that the sync never saw:
// until the cache shows the write's own version, the write's content
// decides. The zero value is ready to use.
type writeFence struct {
	mu      sync.Mutex
	commits map[Key]fencedCommit
}

// fencedCommit is what the fence knows of one key's last write.
type fencedCommit struct {
	replaced []string
	written  string
	// holds, for a rebased write, reports whether a cached object holds
	// it; nil otherwise.
	holds func(Object) bool
	at    time.Time
}

// committed records that a write for key replaced the resourceVersions
// replaced and wrote written; holds, when set, reports whether a cached
// object holds the write, and rebased says the write was made again on a
// newer live object (whose versions between the cache's and its own the
// sync never saw). A write made on the object the key's last write
// returned (a sync's next round, Runner.Rounds) replaced what that one
// replaced too: the cache may still show any of them, and the versions
// that write's content fenced.
func committed[O Object](f *writeFence, key Key, replaced []string, written string, holds func(O) bool, rebased bool) {
	replaced = slices.DeleteFunc(slices.Clone(replaced), func(rv string) bool { return rv == "" })
	if len(replaced) == 0 {
		// Only fake clients leave resourceVersion empty; there is
		// nothing to tell versions apart by.
		return
	}
	c := fencedCommit{replaced: replaced, written: written, at: time.Now()}
	f.mu.Lock()
	defer f.mu.Unlock()
	prev, chained := f.commits[key]
	chained = chained && slices.Contains(replaced, prev.written)
	if chained {
		c.replaced = append(c.replaced, prev.replaced...)
	}
	if holds != nil && (rebased || (chained && prev.holds != nil)) {
		c.holds = func(o Object) bool {
			typed, ok := o.(O)
			return ok && holds(typed)
		}
	}
	if f.commits == nil {
		f.commits = map[Key]fencedCommit{}
	}
	f.commits[key] = c
}

// behind reports whether the cached object is a version before key's last
// write. Any version that holds the write lifts the fence for good.
func (f *writeFence) behind(key Key, cached Object) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.commits[key]
	if !ok {
		return false
	}
	rv := cached.GetResourceVersion()
	switch {
	case slices.Contains(c.replaced, rv):
		return true
	case c.holds != nil && rv != c.written && !c.holds(cached) && time.Since(c.at) < maxFence:
		return true
	}
	delete(f.commits, key)
	return false
}
