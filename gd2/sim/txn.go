package sim

import "net/http"

// GD2's v1 transaction engine (expand, replace-brick, heal trigger, volume
// option set and reset) checks, before running any step, that every node of
// every step is alive. The node sets differ by operation: every peer of the
// cluster for expand and options, every node holding a brick of the volume
// for heal, those plus the new brick's node for replace-brick. One node down
// fails the whole request with 500 code 1 and changes nothing. Bricks-status
// and heal-info are not transactions and do not gate.

// gate fails with GD2's node-down error for the first node that is not
// alive, in the order given.
func (c *call) gate(nodes []string) error {
	for _, id := range nodes {
		if !c.m.peerOnline(id) {
			return errf(http.StatusInternalServerError, "node %s is probably down", id)
		}
	}
	return c.gateProcesses(nodes)
}

// allPeers lists every member id in store order (by UUID string).
func (c *call) allPeers() []string {
	ps := sortedPeers(c.m)
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.ID
	}
	return out
}

// volumeNodes lists the nodes holding bricks of v, in brick order.
func volumeNodes(v *volume) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range v.bricks() {
		if !seen[b.PeerID] {
			seen[b.PeerID] = true
			out = append(out, b.PeerID)
		}
	}
	return out
}
