package states

import (
	"cmp"
	"slices"
	"time"
)

// UpgradeCursor is the upgrade machine's cursor in status.upgrade: the
// run's batch and versions and when the run and its step started (zero:
// unset). Its events and steps move it (MoveUpgradeCursor).
type UpgradeCursor struct {
	CurrentNodes             []string
	FromVersion, ToVersion   string
	StartTime, StepStartTime time.Time
}

// upgradeCursorMoves is, per event or step of the upgrade machine, how it
// moves the cursor, from the snapshot it was decided on, at now; an event
// or step it does not list leaves the cursor as it is.
var upgradeCursorMoves = map[string]func(c *UpgradeCursor, s UpgradeSnapshot, now time.Time){
	// A new run: validated records its start, even when it rolls to the
	// version the last run did (a changed template).
	string(UpgradeRequest): func(c *UpgradeCursor, _ UpgradeSnapshot, _ time.Time) { c.StartTime = time.Time{} },
	// The run's target is fixed here; a resumed run gets a fresh step
	// timeout.
	string(UpgradeValidated): func(c *UpgradeCursor, s UpgradeSnapshot, now time.Time) {
		if c.ToVersion != s.TargetVersion || c.StartTime.IsZero() {
			// A new run, not a resumed one.
			c.StartTime = now
			c.FromVersion = OldestVersion(s.ServerVersions, c.ToVersion)
		}
		c.ToVersion = s.TargetVersion
		c.StepStartTime = now
	},
	string(UpgradeServersDone): func(c *UpgradeCursor, _ UpgradeSnapshot, now time.Time) {
		c.CurrentNodes, c.StepStartTime = nil, now
	},
	string(UpgradeSettle): endRun,
	string(UpgradeCancel): endRun,
	// The batch and when its step started; re-selecting the selected
	// batch at the same version keeps the start time.
	string(UpgradeSelectNextNode): func(c *UpgradeCursor, s UpgradeSnapshot, now time.Time) {
		if !slices.Equal(c.CurrentNodes, s.NextNodes) || c.ToVersion != s.ActiveTarget {
			c.CurrentNodes, c.ToVersion = slices.Clone(s.NextNodes), s.ActiveTarget
			c.StepStartTime = now
		}
	},
}

// endRun is the move of a run's end: no batch, no step.
func endRun(c *UpgradeCursor, _ UpgradeSnapshot, _ time.Time) {
	c.CurrentNodes, c.StepStartTime = nil, time.Time{}
}

// MoveUpgradeCursor returns c as the event or step of d, decided from s
// and done at now, leaves it, and whether d moves the cursor at all.
func MoveUpgradeCursor(c UpgradeCursor, s UpgradeSnapshot, d Decision, now time.Time) (UpgradeCursor, bool) {
	move, ok := upgradeCursorMoves[cmp.Or(string(d.Event), string(d.Step))]
	if !ok {
		return c, false
	}
	move(&c, s, now)
	return c, true
}

// OldestVersion is the lowest of versions by version order, or fallback
// when none parses.
func OldestVersion(versions []string, fallback string) string {
	oldest := ""
	var ov Version
	for _, v := range versions {
		pv, err := ParseVersion(v)
		if err != nil {
			continue
		}
		if oldest == "" || pv.Compare(ov) < 0 {
			oldest, ov = v, pv
		}
	}
	return cmp.Or(oldest, fallback)
}
