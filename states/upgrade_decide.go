package states

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// DecideUpgrade returns the one thing the upgrade machine should do next,
// with the lasting changes its action makes (UpgradeChanges).
func DecideUpgrade(s UpgradeSnapshot) Decision {
	d := decideUpgrade(s)
	d.Changes = UpgradeChanges(s, d)
	return d
}

// decideUpgrade is DecideUpgrade's decision, before the changes it makes.
func decideUpgrade(s UpgradeSnapshot) Decision {
	switch s.State {
	case UpgradeIdle:
		if s.Paused {
			return wait(ReasonPaused, "Upgrades are paused.", 0)
		}
		if s.needsUpgrade() {
			if s.rolloutOff() {
				return s.rolloutHeld()
			}
			return fire(UpgradeRequest, ReasonUpgradeRequested, s.requested())
		}
		return wait(ReasonSteady, "Everything runs the cluster's version.", 0)

	case UpgradeValidating:
		if s.Paused {
			return fire(UpgradePause, ReasonPaused, "Upgrades were paused.")
		}
		if !s.needsUpgrade() {
			return fire(UpgradeCancel, ReasonNothingToUpgrade, "Every server and client already runs "+s.target()+".")
		}
		if s.rolloutOff() {
			return fire(UpgradeCancel, ReasonAutomationOff, "spec.automation.templateRollouts is false: the rollout of changed pod templates is called off before it rolls any server.")
		}
		if reason, msg := s.validationProblem(); reason != "" {
			return fire(UpgradeBlock, reason, msg)
		}
		return fire(UpgradeValidated, ReasonValidated, "Rollout of "+s.target()+" validated; rolling the servers batch by batch.")

	case UpgradeRollingServers:
		return decideRollingServers(s)

	case UpgradeRollingClients:
		if s.Paused {
			return fire(UpgradePause, ReasonPaused, "Upgrades were paused.")
		}
		if s.TargetVersion != s.ActiveTarget {
			return fire(UpgradeBlock, ReasonTargetChanged, fmt.Sprintf("The version changed from %s to %s mid-upgrade; re-validating.", s.ActiveTarget, s.TargetVersion))
		}
		set := s.CSIClientVersion == s.ActiveTarget && !s.CSIImagesStale
		if s.CSINodesTotal == 0 && (set || s.CSIClientVersion == "") {
			return fire(UpgradeClientsDone, ReasonClientsUpgraded, "Every CSI node plugin runs "+s.ActiveTarget+".")
		}
		if set && s.CSINodesAtTarget+s.CSINodesPinned >= s.CSINodesTotal {
			if s.CSINodesPinned > 0 {
				return fire(UpgradeClientsDone, ReasonClientsPinned, fmt.Sprintf("%d of %d CSI node plugins run %s; %d node(s) with Gluster "+
					"volumes in use keep the old plugin until they are drained or their plugin pod is deleted.",
					s.CSINodesAtTarget, s.CSINodesTotal, s.ActiveTarget, s.CSINodesPinned))
			}
			return fire(UpgradeClientsDone, ReasonClientsUpgraded, "Every CSI node plugin runs "+s.ActiveTarget+".")
		}
		if s.stepTimedOut() {
			return fire(UpgradeBlock, ReasonStepTimedOut, fmt.Sprintf("CSI node plugins did not all reach %s within %s.", s.ActiveTarget, s.StepTimeout))
		}
		if !set {
			return step(UpgradeRollClients, ReasonRollingClients, "Setting the CSI node plugin to "+s.ActiveTarget+".", pollShort)
		}
		if s.CSINodesStale > 0 {
			return step(UpgradeRollClients, ReasonRollingClients, fmt.Sprintf("Restarting %d CSI node plugin pod(s) on nodes without Gluster volumes in use.", s.CSINodesStale), pollShort)
		}
		return wait(ReasonRollingClients, fmt.Sprintf("%d of %d CSI node plugins run %s (%d pinned by volumes in use).", s.CSINodesAtTarget, s.CSINodesTotal, s.ActiveTarget, s.CSINodesPinned), pollShort)

	case UpgradeComplete:
		// A rollout switched off is held in Idle, once this run settles.
		if (s.TargetVersion != s.ActiveTarget || s.templatesStale()) && s.needsUpgrade() && !s.Paused && !s.rolloutOff() {
			return fire(UpgradeRequest, ReasonUpgradeRequested, s.requested())
		}
		if s.Now.Sub(s.StateSince) >= s.CompleteHold {
			return fire(UpgradeSettle, ReasonUpgradeComplete, "The upgrade to "+s.ActiveTarget+" is complete.")
		}
		return wait(ReasonUpgradeComplete, "The upgrade to "+s.ActiveTarget+" is complete.", remaining(s.Now, s.StateSince, s.CompleteHold))

	case UpgradeBlocked:
		if s.Paused {
			return fire(UpgradePause, ReasonPaused, "Upgrades were paused.")
		}
		if !s.needsUpgrade() {
			return fire(UpgradeCancel, ReasonNothingToUpgrade, "Every server and client runs "+s.target()+"; nothing left to upgrade.")
		}
		if s.NodesUpgrading > 0 {
			// The run stays blocked for the reason it was blocked for.
			return wait(cmp.Or(s.BlockReason, ReasonNodeUpgrading),
				strings.TrimSpace(s.BlockMessage+" Blocked; waiting for the node being upgraded to settle before re-validating."), pollLong)
		}
		if reason, msg := s.validationProblem(); reason != "" {
			// Still blocked, for the same or a new reason: the condition
			// keeps naming it.
			return wait(reason, msg, pollLong)
		}
		return fire(UpgradeRetry, ReasonBlockCleared, "The blocking condition cleared; re-validating.")

	case UpgradePaused:
		if !s.Paused {
			return fire(UpgradeUnpause, ReasonUnpaused, "Upgrades were unpaused; re-validating before resuming.")
		}
		return wait(ReasonPaused, "Upgrades are paused.", 0)
	}
	return unknownState(UpgradeMachine, s.State)
}

func decideRollingServers(s UpgradeSnapshot) Decision {
	if s.Paused {
		return fire(UpgradePause, ReasonPaused, "Upgrades were paused.")
	}
	if s.TargetVersion != s.ActiveTarget {
		return fire(UpgradeBlock, ReasonTargetChanged, fmt.Sprintf("The version changed from %s to %s mid-upgrade; re-validating.", s.ActiveTarget, s.TargetVersion))
	}
	if s.VolumesSplitBrain > 0 {
		return fire(UpgradeBlock, ReasonSplitBrain, fmt.Sprintf("%d volume(s) are in split-brain.", s.VolumesSplitBrain))
	}
	if s.NodesUpgrading == 0 && s.NodesAtTarget == s.NodesTotal && s.NodesOnline == s.NodesTotal {
		return fire(UpgradeServersDone, ReasonServersUpgraded, fmt.Sprintf("All %d servers run %s.", s.NodesTotal, s.target()))
	}
	if s.stepTimedOut() {
		return fire(UpgradeBlock, ReasonStepTimedOut, fmt.Sprintf("The current upgrade step did not finish within %s.", s.StepTimeout))
	}
	if s.NodesUpgrading > 0 {
		return wait(ReasonNodeUpgrading, "Waiting for the node being upgraded to come back Online.", pollShort)
	}
	if s.NodesOnline < s.NodesTotal {
		return fire(UpgradeBlock, ReasonNodesNotOnline, fmt.Sprintf("%d of %d nodes are not Online.", s.NodesTotal-s.NodesOnline, s.NodesTotal))
	}
	if n := s.VolumesUnhealthy - s.VolumesHealedLive; n > 0 {
		return wait(ReasonVolumesNotHealthy, fmt.Sprintf("Waiting for %d volume(s) to be healthy before stopping the next node.", n), pollShort)
	}
	if len(s.NextNodes) == 0 {
		return wait(ReasonSelectingNode, "No node is ready to be upgraded yet.", pollShort)
	}
	return step(UpgradeSelectNextNode, ReasonSelectingNode, fmt.Sprintf("Rolling %s to %s (%d of %d done).", strings.Join(s.NextNodes, ", "), s.target(), s.NodesAtTarget, s.NodesTotal), pollShort)
}

// needsUpgrade reports whether some server or CSI client does not run the
// target version, or the pod template or images the spec gives it.
func (s UpgradeSnapshot) needsUpgrade() bool {
	return s.templatesStale() || s.versionDiffers()
}

// templatesStale reports whether a server's pod template or a CSI
// object's images differ from the spec's.
func (s UpgradeSnapshot) templatesStale() bool {
	return s.ServersStaleTemplate > 0 || s.CSIImagesStale
}

// target names what a run rolls to: the version, or the changed templates
// when the cluster names no version.
func (s UpgradeSnapshot) target() string {
	if s.TargetVersion == "" {
		return "the spec's pod templates"
	}
	return s.TargetVersion
}

// rolloutOff reports whether what is stale is pod templates alone, whose
// rollout spec.automation.templateRollouts switched off. A version to move
// to still starts its run, which rolls the servers onto the spec's
// templates too.
func (s UpgradeSnapshot) rolloutOff() bool {
	return s.Off.TemplateRollouts && !s.versionDiffers()
}

// rolloutHeld is the wait while a template rollout is switched off. It
// polls, which also puts it on record in a status.upgrade that no run has
// written yet.
func (s UpgradeSnapshot) rolloutHeld() Decision {
	return automationOff("templateRollouts", fmt.Sprintf("rolling %d server(s) onto changed pod templates (CSI images changed: %t)", s.ServersStaleTemplate, s.CSIImagesStale), pollLong)
}

// requested is the message of requestUpgrade.
func (s UpgradeSnapshot) requested() string {
	if s.versionDiffers() {
		return fmt.Sprintf("Upgrade to %s requested.", s.TargetVersion)
	}
	return fmt.Sprintf("Rollout of changed pod templates requested: %d server(s) to roll; CSI images changed: %t.", s.ServersStaleTemplate, s.CSIImagesStale)
}

// versionDiffers reports whether the cluster names a version that some
// server or the CSI client does not run.
func (s UpgradeSnapshot) versionDiffers() bool {
	if s.TargetVersion == "" {
		return false
	}
	for _, v := range s.ServerVersions {
		if v != s.TargetVersion {
			return true
		}
	}
	return s.CSIClientVersion != "" && s.CSIClientVersion != s.TargetVersion
}

// validationProblem runs the Validating checks and returns the first that
// fails as (reason, message), or ("", "") if all pass.
func (s UpgradeSnapshot) validationProblem() (string, string) {
	if s.TargetVersion == "" {
		// Only templates roll: no version moves.
		return s.poolProblem()
	}
	if _, err := ParseVersion(s.TargetVersion); err != nil {
		return ReasonInvalidTargetVersion, "The target version is not valid: " + err.Error() + "."
	}
	var bad []string
	versions := slices.Clone(s.ServerVersions)
	slices.Sort(versions)
	oldest := ""
	for _, v := range versions {
		if err := CheckUpgradePath(v, s.TargetVersion); err != nil {
			bad = append(bad, err.Error())
		}
		pv, err := ParseVersion(v)
		if err != nil {
			continue
		}
		if po, err := ParseVersion(oldest); oldest == "" || err != nil || pv.Compare(po) < 0 {
			oldest = v
		}
	}
	if len(bad) > 0 {
		return ReasonUnsupportedPath, "Unsupported upgrade: " + strings.Join(bad, "; ") + "."
	}
	if s.CSIClientVersion != "" && oldest != "" {
		c, errC := ParseVersion(s.CSIClientVersion)
		o, _ := ParseVersion(oldest)
		if errC != nil {
			return ReasonClientNewerThanSrv, "The CSI client version " + s.CSIClientVersion + " cannot be compared with the servers'."
		}
		if c.Compare(o) > 0 {
			return ReasonClientNewerThanSrv, fmt.Sprintf("The CSI client runs %s, newer than the oldest server (%s); clients must never be newer than servers.", s.CSIClientVersion, oldest)
		}
	}
	return s.poolProblem()
}

// poolProblem is the checks of the pool any run makes: no split-brain,
// every node Online.
func (s UpgradeSnapshot) poolProblem() (string, string) {
	if s.VolumesSplitBrain > 0 {
		return ReasonSplitBrain, fmt.Sprintf("%d volume(s) are in split-brain; resolve them first.", s.VolumesSplitBrain)
	}
	if s.NodesOnline < s.NodesTotal || s.NodesTotal == 0 {
		return ReasonNodesNotOnline, fmt.Sprintf("%d of %d nodes are Online; every node must be Online to upgrade.", s.NodesOnline, s.NodesTotal)
	}
	return "", ""
}

func (s UpgradeSnapshot) stepTimedOut() bool {
	return s.StepTimeout > 0 && !s.StepStartedAt.IsZero() && s.Now.Sub(s.StepStartedAt) > s.StepTimeout
}
