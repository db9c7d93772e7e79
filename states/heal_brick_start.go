package states

import (
	"fmt"
	"strings"
	"time"

	"github.com/gluster/anthill/fsm"
)

// BricksNotStarted is what the heal machine knows of a volume's bricks
// that GD2 left offline on a live peer. A restarting GD2 can start its
// brick processes before it has mounted the bricks; they then stay
// offline (bricks-status not online, heal-info unreachable) until a
// volume start with force-start-bricks mounts and starts them. Nothing
// else brings them back, so without the step an upgrade waits out its
// heal timeout on them.
type BricksNotStarted struct {
	// Count: bricks of the volume that GD2's bricks-status reports not
	// online while GD2 lists their peer alive and anthill is changing
	// nothing of the volume (see Changing).
	Count int
	// Peers: the GD2 ids of those bricks' peers, sorted, for the message
	// and the ledger; Nodes: the GlusterNode of each ("" for a peer
	// anthill did not add).
	Peers []string
	Nodes []string
	// Since: when anthill first saw such a brick, counting only the time
	// every condition held without a break (a peer seen not alive, the
	// brick seen online, or a change of the volume starts it over). It is
	// kept in memory: an operator restart starts the window over, which
	// only delays the step.
	Since time.Time
	// Grace: how long bricks must stay so before they are started
	// (failurePolicy.offlineGrace: the time anthill lets a report of a
	// server's trouble stand before it acts on it).
	Grace time.Duration
	// PeersDown: peers holding bricks of the volume that GD2 lists not
	// alive. GD2's volume start (a v2 transaction over every node of the
	// volume) refuses while one is down, and such a brick is down, not
	// forgotten.
	PeersDown int
	// Changing says why anthill is changing the volume right now, or is
	// empty: a node holding one of its bricks is being drained (its bricks
	// moved by replace-brick), stopped or restarted by an upgrade, held in
	// maintenance by an admin, or leaving the pool. Bricks are then offline
	// because of that change, and starting them would race it.
	Changing string
}

// decideBricksNotStarted is the HealPending decision for a volume with
// unreachable bricks some of which GD2 left offline on a live peer: run
// forceStartBricks once they have been so for the grace, with every peer
// of the volume alive and nothing of the volume being changed; otherwise
// wait, saying for what. ok is false when no brick is in that case, and
// the volume waits for its bricks as before.
func decideBricksNotStarted(s HealSnapshot, pending string) (d Decision, ok bool) {
	b := s.NotStarted
	if b.Count == 0 {
		return Decision{}, false
	}
	what := fmt.Sprintf("%s %d brick(s) offline on live peer(s) %s", pending, b.Count, strings.Join(b.Peers, ", "))
	switch {
	case b.Changing != "":
		return wait(ReasonBrickDown, what+"; not starting them while "+b.Changing+".", pollShort), true
	case b.PeersDown > 0:
		return wait(ReasonBrickDown, fmt.Sprintf("%s; %d peer(s) of the volume not alive, so GD2 would refuse to start its bricks. Waiting for every brick before healing.", what, b.PeersDown), pollShort), true
	}
	since := b.Since
	if since.IsZero() {
		since = s.Now
	}
	if left := since.Add(b.Grace).Sub(s.Now); left > 0 {
		return wait(ReasonBrickDown, fmt.Sprintf("%s for %s; starting them with force-start-bricks after %s.", what, s.Now.Sub(since).Round(time.Second), b.Grace),
			min(remaining(s.Now, since, b.Grace), pollShort)), true
	}
	if s.Off.ForceStartBricks {
		return automationOff("forceStartBricks", fmt.Sprintf("starting the %d brick(s) GD2 left offline on live peer(s) %s with force-start-bricks (%s)",
			b.Count, strings.Join(b.Peers, ", "), pending), pollLong), true
	}
	return step(HealForceStartBricks, ReasonBricksNotStarted, fmt.Sprintf("%s for %s or more: GD2 started the peer without them. Starting the volume's bricks (force-start-bricks).",
		what, b.Grace), pollShort), true
}

// ChangesBricks reports whether a node in state s is having its bricks
// changed by anthill, or held by an admin: drained (bricks moved by
// replace-brick), stopped or restarted by an upgrade, in maintenance, or
// leaving the pool. Bricks offline on such a node are not started by the
// heal machine. A node Rejoining or in HealWait has been restarted and
// waits for its bricks: that is where bricks GD2 forgot are started.
func ChangesBricks(s fsm.State) bool {
	switch s {
	case NodeQuiescing, NodeRestarting, NodeDraining, NodeAbandoned, NodeDetaching, NodeDeleting, NodeDeleted, NodeMaintenance:
		return true
	}
	return false
}
