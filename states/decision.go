package states

import (
	"time"

	"github.com/gluster/anthill/fsm"
)

// Decision is what a Decide function concludes from one Snapshot: fire one
// transition event, run one in-state step, or wait. At most one of Event and
// Step is set; both empty means "stay in the current state".
type Decision struct {
	// Event is the transition to fire, or empty.
	Event fsm.Event
	// Step is the in-state step to run without leaving the state, or empty.
	Step fsm.Step
	// Reason is a CamelCase constant, usable as a Kubernetes Event or
	// condition reason and as a bounded metric label.
	Reason string
	// Message is a human sentence explaining the decision, for Events,
	// conditions and the transition log.
	Message string
	// RequeueAfter asks the dispatcher to look again after this long (with
	// AddAfter, never by sleeping). Zero means only watch events bring the
	// object back.
	RequeueAfter time.Duration
	// Warning marks a wait an admin must know about (a Warning Event is
	// recorded once each time the reason or message changes).
	Warning bool
	// Subject names what the decision concerns when the machine's state
	// does not say it (the zone the disruption machine opens, locks or
	// keeps), so that acting and recording it need not decide again; ""
	// otherwise.
	Subject string
	// Changes are the lasting changes the action of the event or step
	// makes, each put on record in the ledger before it runs (the
	// machine's change table, see Change); nil when it makes none.
	Changes []Change
	// Ahead are the changes of the step the event's target state runs
	// first, which the transition's own write puts on record
	// (NodeStateMeaning.RecordsAhead); nil for most.
	Ahead []Change
}

// Waiting reports whether the decision is to stay without acting.
func (d Decision) Waiting() bool { return d.Event == "" && d.Step == "" }

func fire(e fsm.Event, reason, msg string) Decision {
	return Decision{Event: e, Reason: reason, Message: msg}
}

func step(s fsm.Step, reason, msg string, after time.Duration) Decision {
	return Decision{Step: s, Reason: reason, Message: msg, RequeueAfter: after}
}

func wait(reason, msg string, after time.Duration) Decision {
	return Decision{Reason: reason, Message: msg, RequeueAfter: after}
}

// about is d concerning subject (Decision.Subject).
func about(d Decision, subject string) Decision {
	d.Subject = subject
	return d
}

// warn returns a wait an admin must know about.
func warn(reason, msg string, after time.Duration) Decision {
	d := wait(reason, msg, after)
	d.Warning = true
	return d
}

// paused is the wait while spec.paused holds what the node or cluster
// machine would do next; doing names it. Clearing spec.paused enqueues every
// node of the cluster, so after only matters for facts no watch event brings
// (liveness).
func paused(doing string, after time.Duration) Decision {
	return wait(ReasonPaused, "The cluster is paused (spec.paused): not "+doing+" until it is cleared.", after)
}

// Requeue intervals for waits that no watch event is guaranteed to end.
const (
	// pollShort is for waits on things expected to change within seconds
	// (a pod becoming ready, a peer re-appearing after a restart).
	pollShort = 15 * time.Second
	// pollLong is for waits on slow processes (heal, admin action).
	pollLong = time.Minute
	// pollUpgrade is for the node being upgraded while it rejoins and
	// heals: only one node (or one per zone) is there at a time, and every
	// second it waits is a second the whole roll takes longer.
	pollUpgrade = time.Second
	// pollBeside is for a drain that has just started a move with room
	// for another beside it (drainPolicy.maxParallelMoves): every second
	// between two moves is a second the drain takes longer.
	pollBeside = time.Second
	// pollHeal is for a node in HealWait: the one wait of an upgrade that
	// no watch event ends (GD2 reports no heal's end), and in a batch the
	// node that sees its heal end last holds the next batch. A reading is
	// one heal-info per volume with a brick on the node, which real GD2
	// serves by running glfsheal against every brick of the volume: once
	// a second per waiting node is as often as that is worth asking.
	pollHeal = pollUpgrade
	// pollRest is how often a node whose liveness the peer watch follows
	// looks again with nothing changed (see livenessPoll): the informers'
	// default resync period, a net under the watch, not a sampling rate.
	pollRest = 10 * time.Minute
)

// unknownState is returned by every Decide function for a state it does not
// know. The dispatcher reaches this only with a definition/decision mismatch,
// because it builds an fsm.Machine first and that refuses unknown states.
func unknownState(machine string, s fsm.State) Decision {
	return wait(ReasonUnknownState, "The "+machine+" machine has no decision for state "+string(s)+"; refusing to act.", 0)
}

// remaining returns how long until since+d, at least one second so that a
// requeue never spins.
func remaining(now, since time.Time, d time.Duration) time.Duration {
	left := since.Add(d).Sub(now)
	if left < time.Second {
		return time.Second
	}
	return left
}
