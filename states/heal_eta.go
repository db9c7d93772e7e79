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
	return healETA(s.LastHealReading, s.PendingHealEntries, s.Now, pollHealSoonest, pollHeal, pollHeal)
}

// pollHealingFirst is when the heal machine looks again at a volume whose
// heal it has no earlier reading of (it just started, or the operator
// restarted): soon, to learn the heal's rate.
const pollHealingFirst = 2 * time.Second

// pollHealingSoonest is the soonest the heal machine looks again at a
// healing volume, however close to its end the heal seems: each look is
// a heal-info of every volume of the cluster.
const pollHealingSoonest = time.Second

// healingLookAgain is when the heal machine looks again at a Healing
// volume: when its pending entries should be gone at the rate of its last
// two readings (HealSnapshot.LastReading), so that its record of the
// heal's end, which wakes the nodes waiting on the volume (a drain's
// replacements, a node to be stopped), is not late by a whole poll.
// Within [pollHealingSoonest, pollShort]; pollHealingFirst with no earlier
// reading, pollShort while the count does not fall.
func healingLookAgain(s HealSnapshot) time.Duration {
	if s.LastReading.At.IsZero() {
		return pollHealingFirst
	}
	return healETA(s.LastReading, s.PendingEntries, s.Now, pollHealingSoonest, pollShort, pollShort)
}

// healETA is how long until a backlog of pending entries, which stood at
// prev before, is gone at the rate it fell since, within [soonest,
// latest]; unknown when that cannot be told: no earlier reading, a count
// that did not fall, or a reading from the future (a clock step).
func healETA(prev HealReading, pending int64, now time.Time, soonest, latest, unknown time.Duration) time.Duration {
	took := now.Sub(prev.At)
	if prev.At.IsZero() || took <= 0 || pending >= prev.Pending {
		return unknown
	}
	rate := float64(prev.Pending-pending) / took.Seconds()
	left := time.Duration(float64(pending) / rate * float64(time.Second))
	return min(max(left, soonest), latest)
}
