package node

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/states"
)

// healReadings keeps, per node in HealWait, the last heal-info reading
// whose count differed from the one before it, so that a wait can tell
// how fast its heal goes (states.NodeSnapshot.LastHealReading). It is
// memory only: after a restart the first look has no earlier reading and
// waits the full interval. The zero value is ready to use.
type healReadings struct {
	mu   sync.Mutex
	last map[types.NamespacedName]states.HealReading
}

// observe records r for node and returns the reading before it. A reading
// with the same count as the kept one is not kept: the rate then spans
// the whole time the count stood still.
func (h *healReadings) observe(node types.NamespacedName, r states.HealReading) states.HealReading {
	h.mu.Lock()
	defer h.mu.Unlock()
	prev, ok := h.last[node]
	if !ok || prev.Pending != r.Pending {
		if h.last == nil {
			h.last = map[types.NamespacedName]states.HealReading{}
		}
		h.last[node] = r
	}
	return prev
}

// forget drops node's reading (it left HealWait, or is gone).
func (h *healReadings) forget(node types.NamespacedName) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.last, node)
}
