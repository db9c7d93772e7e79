package engine

import (
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
)

// echoes remembers, per key, the resourceVersion of the key's own last
// status write that needs no wake-up (Result.Echo), until the informer
// delivers it. The zero value is ready to use. A delivery that overtakes
// the end of the sync that wrote it still wakes the key once: the echo is
// an economy, never what a decision waits for.
type echoes struct {
	mu sync.Mutex
	rv map[Key]string
}

// note records what key's sync wrote (rv, "" for nothing to skip); a
// failed sync skips nothing.
func (e *echoes) note(key Key, rv string, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rv == "" || err != nil {
		delete(e.rv, key)
		return
	}
	if e.rv == nil {
		e.rv = map[Key]string{}
	}
	e.rv[key] = rv
}

// own reports whether the update at resourceVersion rv is key's own
// write's echo, and forgets it.
func (e *echoes) own(key Key, rv string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rv == "" || e.rv[key] != rv {
		return false
	}
	delete(e.rv, key)
	return true
}

// resourceVersion is obj's, "" when it has none.
func resourceVersion(obj any) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetResourceVersion()
}
