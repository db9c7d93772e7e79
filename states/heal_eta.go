package states

import "time"

// HealReading is one heal-info reading of a node's replica sets: the
// entries pending, and when they were read.
type HealReading struct {
	Pending int64
	At      time.Time
}

// pollHealSoonest is the soonest a node in HealWait looks again, however
// close to its end the heal seems.
const pollHealSoonest = 200 * time.Millisecond

// healLookAgain is when a node in HealWait looks at heal-info again. A
// heal drains its backlog at a steady rate while nothing else changes, so
// from the reading before this one (NodeSnapshot.LastHealReading) the node
// looks again when the pending entries should be gone: in a batch the
// node that sees its heal end last holds the next batch, and a look once
// a second sees an end half a second late on average. Never later than
// pollHeal, nor sooner than pollHealSoonest; pollHeal when there is no
// earlier reading or the count did not fall (writes outpace the heal).
func healLookAgain(s NodeSnapshot) time.Duration {
	prev := s.LastHealReading
	took := s.Now.Sub(prev.At)
	if prev.At.IsZero() || took <= 0 || s.PendingHealEntries >= prev.Pending {
		return pollHeal
	}
	rate := float64(prev.Pending-s.PendingHealEntries) / took.Seconds()
	left := time.Duration(float64(s.PendingHealEntries) / rate * float64(time.Second))
	return min(max(left, pollHealSoonest), pollHeal)
}
