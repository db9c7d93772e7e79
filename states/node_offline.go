package states

import (
	"fmt"
	"time"
)

// decideNodeOffline is the Offline node's decision: maintenance and
// removal requests first, then recovery, then failure handling (a lost
// pod's eviction, markFailed), each held while paused or switched off in
// spec.automation.
func decideNodeOffline(s NodeSnapshot) Decision {
	if !s.GD2Reachable {
		return gd2Unreachable()
	}
	if s.Request == RequestMaintenance {
		return fire(NodeEnterMaintenance, ReasonMaintenanceRequested, "Maintenance requested; the node is exempt from failure handling while down.")
	}
	if s.removalRequested() {
		if s.Paused {
			return paused("draining the node (removal requested)", livenessPoll(s))
		}
		return fire(NodeDrain, drainReason(s), "Removal requested for a node that is down; its bricks move once GD2 allows it (never while the peer is down).")
	}
	if s.PeerKnown && s.PeerAlive {
		return recovering(s, "GD2 reports the peer alive again.")
	}
	if s.Paused {
		since := orNow(s.DownSince, s.Now)
		return paused(fmt.Sprintf("handling the failure of a peer down since %s (no lost-pod eviction, no markFailed)", since.UTC().Format(time.RFC3339)), livenessPoll(s))
	}
	// A switched-off eviction holds only itself: markFailed, when due and
	// on, still fires.
	var held *Decision
	if d, ok := evictLostPod(s); ok {
		if !s.Off.LostPodEviction {
			return d
		}
		off := automationOff("lostPodEviction", fmt.Sprintf("force-deleting the pod stuck on lost Kubernetes node %s", s.LostPod.KubeNode), livenessPoll(s))
		held = &off
	}
	since := orNow(s.DownSince, s.Now)
	if s.PeerKnown && s.Now.Sub(since) >= s.PermissibleDowntime {
		if s.Off.MarkFailed {
			return automationOff("markFailed", fmt.Sprintf("marking the node Failed (its peer has been down since %s, longer than the permissible %s)",
				since.UTC().Format(time.RFC3339), s.PermissibleDowntime), livenessPoll(s))
		}
		return fire(NodeMarkFailed, ReasonDowntimeExceeded, fmt.Sprintf("The peer has been down since %s, longer than the permissible %s.", since.UTC().Format(time.RFC3339), s.PermissibleDowntime))
	}
	if held != nil {
		return *held
	}
	if d, ok := lostPodWait(s); ok {
		// No liveness poll needed: the peer of a pod stuck on a lost
		// Kubernetes node comes back only with a pod event.
		return d
	}
	return wait(ReasonWithinDowntime, fmt.Sprintf("The peer has been down since %s; it is declared failed if it stays down until %s.", since.UTC().Format(time.RFC3339), since.Add(s.PermissibleDowntime).UTC().Format(time.RFC3339)),
		min(remaining(s.Now, since, s.PermissibleDowntime), livenessPoll(s)))
}

// recovering returns the node to Online once its peer has stayed alive for
// the recovery window, and waits (polling) until then.
func recovering(s NodeSnapshot, msg string) Decision {
	since := orNow(s.AliveSince, s.Now)
	if s.Now.Sub(since) >= s.RecoveryWindow {
		return fire(NodePeerRecovered, ReasonPeerRecovered, msg)
	}
	return wait(ReasonPeerRecovering, fmt.Sprintf("The peer is alive again since %s; the node returns to Online if it stays alive for the %s recovery window.", since.UTC().Format(time.RFC3339), s.RecoveryWindow),
		min(remaining(s.Now, since, s.RecoveryWindow), livenessPoll(s)))
}
