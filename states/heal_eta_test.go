package states

import (
	"testing"
	"time"
)

// A node in HealWait looks again when its heal should end, judged from the
// reading before this one, within [pollHealSoonest, pollHeal].
func TestHealLookAgainAimsAtTheHealsEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pending int64
		prev    HealReading
		want    time.Duration
	}{
		{name: "with no earlier reading it looks again after the full interval", pending: 40, want: pollHeal},
		{name: "a heal that will take longer than the interval is looked at after the interval",
			pending: 40, prev: HealReading{Pending: 50, At: t0.Add(-time.Second)}, want: pollHeal},
		{name: "a heal about to end is looked at when it should end",
			pending: 5, prev: HealReading{Pending: 15, At: t0.Add(-time.Second)}, want: 500 * time.Millisecond},
		{name: "a heal a moment from its end is looked at no sooner than the floor",
			pending: 1, prev: HealReading{Pending: 101, At: t0.Add(-time.Second)}, want: pollHealSoonest},
		{name: "a count that did not fall (writes outpace the heal) is looked at after the interval",
			pending: 20, prev: HealReading{Pending: 20, At: t0.Add(-3 * time.Second)}, want: pollHeal},
		{name: "a count that grew is looked at after the interval",
			pending: 30, prev: HealReading{Pending: 20, At: t0.Add(-time.Second)}, want: pollHeal},
		{name: "a reading from the future (a clock step) is not trusted",
			pending: 5, prev: HealReading{Pending: 15, At: t0.Add(time.Second)}, want: pollHeal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := healthyNode(NodeHealWait)
			s.PendingHealEntries, s.LastHealReading = tc.pending, tc.prev
			if got := healLookAgain(s); got != tc.want {
				t.Errorf("healLookAgain() = %s, want %s", got, tc.want)
			}
			if d := DecideNode(s); d.Reason != ReasonHealPending || d.RequeueAfter != tc.want {
				t.Errorf("DecideNode() = %s after %s, want %s after %s", d.Reason, d.RequeueAfter, ReasonHealPending, tc.want)
			}
		})
	}
}

// The heal machine looks again at a Healing volume when its heal should
// end, so that its record of the end (which wakes the nodes waiting on the
// volume) is not a whole poll late: soon after its first reading, to learn
// the rate, then within [pollHealingSoonest, pollShort].
func TestHealingLookAgainAimsAtTheHealsEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		pending int64
		prev    HealReading
		want    time.Duration
	}{
		{name: "with no earlier reading it looks again soon, to learn the rate", pending: 400, want: pollHealingFirst},
		{name: "a heal far from its end is looked at after the interval",
			pending: 400, prev: HealReading{Pending: 410, At: t0.Add(-time.Second)}, want: pollShort},
		{name: "a heal that should end in 4 s is looked at in 4 s",
			pending: 40, prev: HealReading{Pending: 60, At: t0.Add(-2 * time.Second)}, want: 4 * time.Second},
		{name: "a heal about to end is looked at no sooner than the floor",
			pending: 1, prev: HealReading{Pending: 101, At: t0.Add(-time.Second)}, want: pollHealingSoonest},
		{name: "a count that did not fall is looked at after the interval",
			pending: 20, prev: HealReading{Pending: 20, At: t0.Add(-3 * time.Second)}, want: pollShort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := HealSnapshot{State: HealHealing, StateSince: t0.Add(-time.Minute), Now: t0, Redundant: true, Started: true, HealInfoOK: true,
				PendingEntries: tc.pending, LastReading: tc.prev, StallTimeout: 10 * time.Minute}
			if d := DecideHeal(s); d.Reason != ReasonHealProgressing || d.RequeueAfter != tc.want {
				t.Errorf("DecideHeal() = %s after %s, want %s after %s", d.Reason, d.RequeueAfter, ReasonHealProgressing, tc.want)
			}
		})
	}
}
