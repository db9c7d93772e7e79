package states

import (
	"fmt"
	"strings"
)

// DisruptionCandidate returns the zone the machine would open or keep:
// the persisted zone in Open and Recovering; in Locked, the first zone
// (by name) that holds bricks and is being drained, else the zone last
// open if it still holds bricks, else the first zone holding bricks. ""
// means no zone holds a brick. The dispatcher reads heal-info live for
// this zone only.
func DisruptionCandidate(s DisruptionSnapshot) string {
	if s.State != DisruptionLocked {
		return s.Zone
	}
	for _, z := range s.Zones {
		if z.BrickNodes > 0 && z.DrainRequested {
			return z.Name
		}
	}
	if z, ok := s.zone(s.Zone); ok && z.BrickNodes > 0 {
		return z.Name
	}
	for _, z := range s.Zones {
		if z.BrickNodes > 0 {
			return z.Name
		}
	}
	return ""
}

// DecideDisruption returns the one thing the disruption machine of a
// cluster should do next, about the zone it concerns (Decision.Subject):
// the zone to open for openZone, the zone kept otherwise.
func DecideDisruption(s DisruptionSnapshot) Decision {
	if s.Off.DisruptionBudgets && DisruptionDefinition().HasState(s.State) {
		return about(automationOff("disruptionBudgets", fmt.Sprintf("opening or locking a zone, or changing a PodDisruptionBudget or pod label (the machine stays %s; the budgets stay as they are)", s.State), 0), s.Zone)
	}
	switch s.State {
	case DisruptionLocked:
		return decideDisruptionLocked(s)
	case DisruptionOpen:
		return decideDisruptionOpen(s)
	case DisruptionRecovering:
		return decideDisruptionRecovering(s)
	}
	return about(unknownState(DisruptionMachine, s.State), s.Zone)
}

func decideDisruptionLocked(s DisruptionSnapshot) Decision {
	if !s.GD2Reachable {
		return settleBudgets(s, s.Zone, wait(ReasonGD2Unreachable, "GD2 did not answer, so which pods hold bricks is unknown; every zone stays locked.", pollShort))
	}
	cand := DisruptionCandidate(s)
	if cand == "" {
		return settleBudgets(s, s.Zone, wait(ReasonNoBricks, "No Gluster pod holds a brick, so no budget covers any pod; every Gluster pod may be evicted.", pollLong))
	}
	if why := unsafeToOpen(s, cand); why != "" {
		return settleBudgets(s, s.Zone, wait(ReasonDisruptionBlocked, "Every zone is locked: "+why, pollShort))
	}
	reason, msg := ReasonZoneSafe, fmt.Sprintf("Zone %s may lose one Gluster pod: every node holding bricks is Online and every volume with a brick in the zone is healed.", cand)
	if z, _ := s.zone(cand); z.DrainRequested {
		reason, msg = ReasonDrainRequested, fmt.Sprintf("A node of zone %s is being drained; the zone may lose one Gluster pod: every node holding bricks is Online and every volume with a brick in the zone is healed.", cand)
	}
	return about(fire(DisruptionOpenZone, reason, msg), cand)
}

func decideDisruptionOpen(s DisruptionSnapshot) Decision {
	lock := func(reason, msg string) Decision {
		return about(fire(DisruptionLock, reason, msg), s.Zone)
	}
	if !s.GD2Reachable {
		return lock(ReasonGD2Unreachable, fmt.Sprintf("GD2 did not answer; locking zone %s, since which pods hold bricks is unknown.", s.Zone))
	}
	z, ok := s.zone(s.Zone)
	if !ok || z.BrickNodes == 0 {
		return lock(ReasonZoneGone, fmt.Sprintf("Zone %s no longer holds bricks; locking it.", s.Zone))
	}
	if z.disrupted() {
		return about(fire(DisruptionDisrupted, ReasonZoneDisrupted,
			fmt.Sprintf("Zone %s is disrupted (%s); locking every zone until it is back and healed.", z.Name, zoneTrouble(z))), s.Zone)
	}
	for _, o := range s.Zones {
		if o.Name != z.Name && o.disrupted() {
			return lock(ReasonDisruptedElsewhere, fmt.Sprintf("Zone %s is disrupted (%s); locking zone %s.", o.Name, zoneTrouble(o), z.Name))
		}
	}
	if !z.DrainRequested {
		for _, o := range s.Zones {
			if o.Name != z.Name && o.DrainRequested && o.BrickNodes > 0 {
				return lock(ReasonZoneHandover, fmt.Sprintf("A node of zone %s is being drained and zone %s is not; locking zone %s to open zone %s.", o.Name, z.Name, z.Name, o.Name))
			}
		}
	}
	return settleBudgets(s, s.Zone, wait(ReasonZoneOpen, fmt.Sprintf("Zone %s may lose one Gluster pod; every other zone is locked.", z.Name), pollLong))
}

func decideDisruptionRecovering(s DisruptionSnapshot) Decision {
	if s.GD2Reachable {
		if z, ok := s.zone(s.Zone); !ok || z.BrickNodes == 0 {
			return about(fire(DisruptionLock, ReasonZoneGone, fmt.Sprintf("Zone %s no longer holds bricks; nothing left to recover.", s.Zone)), s.Zone)
		}
	}
	if why := unsafeToOpen(s, s.Zone); why != "" {
		return settleBudgets(s, s.Zone, wait(ReasonDisruptionBlocked, fmt.Sprintf("Zone %s is recovering: %s", s.Zone, why), pollShort))
	}
	return about(fire(DisruptionRecovered, ReasonZoneSafe,
		fmt.Sprintf("Zone %s is back and healed; it may lose one more Gluster pod.", s.Zone)), s.Zone)
}

// settleBudgets turns a wait into the applyBudgets step when the budgets drifted
// from the state.
func settleBudgets(s DisruptionSnapshot, zone string, d Decision) Decision {
	if !s.BudgetsInSync {
		d.Step = DisruptionApplyBudgets
		d.Reason = ReasonBudgetsDrifted
		d.Message = "Updating the disruption budgets and pod labels to match the state. " + d.Message
	}
	return about(d, zone)
}

// unsafeToOpen says why zone may not lose a pod now, or "" if it may:
// GD2 must answer, every node holding bricks (in any zone) must be up,
// no eviction may be in flight anywhere, and every volume with a brick in
// the zone must be Healthy in its heal machine and in a live heal-info
// read.
func unsafeToOpen(s DisruptionSnapshot, zone string) string {
	if !s.GD2Reachable {
		return "GD2 did not answer, so which pods hold bricks is unknown."
	}
	var why []string
	for _, z := range s.Zones {
		if len(z.Disrupted) > 0 {
			why = append(why, fmt.Sprintf("zone %s: %s", z.Name, strings.Join(z.Disrupted, ", ")))
		}
		if z.EvictionsInFlight > 0 {
			why = append(why, fmt.Sprintf("zone %s: %d eviction(s) in flight", z.Name, z.EvictionsInFlight))
		}
	}
	z, ok := s.zone(zone)
	if !ok {
		return fmt.Sprintf("zone %s is not a zone of the cluster.", zone)
	}
	if len(z.UnhealthyVolumes) > 0 {
		why = append(why, fmt.Sprintf("volume(s) not Healthy with a brick in zone %s: %s", zone, strings.Join(z.UnhealthyVolumes, ", ")))
	}
	switch {
	case !z.HealChecked:
		why = append(why, fmt.Sprintf("heal-info of the volumes in zone %s was not read", zone))
	case len(z.HealNotClean) > 0:
		why = append(why, fmt.Sprintf("heal-info shows volume(s) not healed in zone %s: %s", zone, strings.Join(z.HealNotClean, ", ")))
	}
	if len(why) == 0 {
		return ""
	}
	return strings.Join(why, "; ") + "."
}

// zoneTrouble summarises why a zone counts as disrupted.
func zoneTrouble(z DisruptionZone) string {
	var parts []string
	parts = append(parts, z.Disrupted...)
	if z.EvictionsInFlight > 0 {
		parts = append(parts, fmt.Sprintf("%d eviction(s) in flight", z.EvictionsInFlight))
	}
	if len(z.UnhealthyVolumes) > 0 {
		parts = append(parts, "volume(s) not Healthy: "+strings.Join(z.UnhealthyVolumes, ", "))
	}
	return strings.Join(parts, "; ")
}
