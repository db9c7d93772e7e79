package states

import "fmt"

// DecideHeal returns the one thing the heal machine of a volume should do next,
// with the lasting changes its action makes (HealChanges).
func DecideHeal(s HealSnapshot) Decision {
	d := decideHeal(s)
	d.Changes = HealChanges(s, d)
	return d
}

// decideHeal is DecideHeal's decision, before the changes it makes.
func decideHeal(s HealSnapshot) Decision {
	switch s.State {
	case HealUnknown, HealHealthy, HealHealPending, HealHealing, HealSplitBrain:
	default:
		return unknownState(HealMachine, s.State)
	}

	if !s.Redundant {
		if s.State == HealHealthy {
			return wait(ReasonHealNotApplicable, "The volume has no redundancy; there is nothing to heal.", 0)
		}
		return fire(HealHealed, ReasonHealNotApplicable, "The volume has no redundancy; there is nothing to heal.")
	}

	if !s.Started || !s.HealInfoOK {
		reason, msg := ReasonHealInfoFailed, "Heal-info could not be read."
		if !s.Started {
			reason, msg = ReasonVolumeNotStarted, "The volume is not started; heal-info is unavailable."
		}
		switch s.State {
		case HealHealthy, HealHealPending, HealHealing:
			return fire(HealLostContact, reason, msg)
		case HealSplitBrain:
			return wait(reason, msg+" Keeping the split-brain state until a reading shows it resolved.", pollLong)
		}
		return wait(reason, msg, pollLong)
	}

	if s.SplitBrainEntries > 0 {
		msg := fmt.Sprintf("%d entries are in split-brain; an admin must resolve them.", s.SplitBrainEntries)
		if s.State == HealSplitBrain {
			return wait(ReasonSplitBrain, msg, pollLong)
		}
		return fire(HealSplitBrainFound, ReasonSplitBrain, msg)
	}

	if Healed(s.PendingEntries, s.SplitBrainEntries, s.BricksUnreachable) {
		if s.State == HealHealthy {
			return wait(ReasonHealthy, "Nothing to heal.", 0)
		}
		return fire(HealHealed, ReasonHealComplete, "Nothing is pending heal and every brick is reachable.")
	}

	pending := fmt.Sprintf("%d entries pending heal, %d brick(s) unreachable.", s.PendingEntries, s.BricksUnreachable)
	switch s.State {
	case HealUnknown, HealHealthy, HealSplitBrain:
		return fire(HealPendingFound, ReasonEntriesPending, pending)
	case HealHealPending:
		if s.BricksUnreachable > 0 {
			if d, ok := decideBricksNotStarted(s, pending); ok {
				return d
			}
			return wait(ReasonBrickDown, pending+" Waiting for every brick before healing.", pollShort)
		}
		if s.SelfHealOff {
			// GD2 answers a trigger with 400 "self heal option is disabled";
			// asking again changes nothing, so say what would.
			return warn(ReasonSelfHealDisabled, pending+" The volume's self-heal daemon is off (cluster/replicate.self-heal-daemon, "+
				"off by default on replicate volumes), so GD2 refuses to start a heal; entries heal only as clients access them. Turn it on to let anthill heal the volume.", pollLong)
		}
		return fire(HealStartHeal, ReasonHealTriggered, pending+" Triggering heal.")
	}

	// Healing.
	if s.BricksUnreachable > 0 {
		return fire(HealStalled, ReasonBrickDown, pending+" A brick dropped out during heal.")
	}
	last := s.LastProgressAt
	if last.IsZero() || last.Before(s.StateSince) {
		last = s.StateSince
	}
	if s.StallTimeout > 0 && s.Now.Sub(last) >= s.StallTimeout {
		return fire(HealStalled, ReasonHealStalled, fmt.Sprintf("%s No progress for %s.", pending, s.StallTimeout))
	}
	if s.TriggerNotDelivered {
		return wait(ReasonHealTriggerFailed, pending+" GD2 could not hand the heal trigger to the self-heal daemon; watching the daemon's own crawl.", healingLookAgain(s))
	}
	return wait(ReasonHealProgressing, pending, healingLookAgain(s))
}
