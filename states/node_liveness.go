package states

import "time"

// Liveness hysteresis. GD2 reports a peer alive or not on every read; the
// node machine does not follow each report, because a peer that drops for a
// few seconds, or comes and goes, must neither churn the node's state nor
// be declared failed. Two clocks, kept in GlusterNode status
// so that an operator restart does not reset them, turn the reports into
// decisions:
//
//   - DownSince: the start of the current continuous outage. An Online node
//     sets it at the first not-alive report and goes Offline only once
//     OfflineGrace has passed since; permissibleDowntime is measured from
//     it too. When an Offline node's peer is seen alive, the outage is over
//     as far as the deadline is concerned: the next not-alive report starts
//     a new one. So only continuous downtime ever makes a node Failed, and a
//     flapping peer never is.
//   - AliveSince: when an Offline or Failed node's peer was first seen
//     alive again. The node returns to Online only once the peer has stayed
//     alive for RecoveryWindow; a peer that drops again before that stays
//     Offline (one state change per real outage, not one per flap).

// LivenessClocks returns the DownSince and AliveSince the node should
// record after this snapshot's observation. It is pure; the dispatcher
// persists the result when it differs and decides from it. Nothing changes
// when GD2 was not read or did not list the peer: no report, no clock.
func LivenessClocks(s NodeSnapshot) (downSince, aliveSince time.Time) {
	down, alive := s.DownSince, s.AliveSince
	if !s.GD2Reachable || !s.PeerKnown {
		return down, alive
	}
	switch s.State {
	case NodeOnline:
		if s.PeerAlive {
			return time.Time{}, time.Time{}
		}
		return orNow(down, s.Now), time.Time{}
	case NodeOffline, NodeFailed:
		if s.PeerAlive {
			return down, orNow(alive, s.Now)
		}
		if !alive.IsZero() {
			// Seen alive since the outage began: this is a new outage.
			return s.Now, time.Time{}
		}
		return orNow(down, s.Now), time.Time{}
	}
	return down, alive
}

func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return t
}

// LivenessListAge is the oldest a peer list may be when a node's liveness
// clocks are set from it: half the shorter non-zero hysteresis window, so
// that a drop or a return that lasts a window is seen at least twice
// within it (zero when neither window is set: any age will do). A cluster
// with windows of seconds has its peers read that often; one at the
// defaults (30 s and 2 min) is never held to less than the shared list's
// own interval.
func LivenessListAge(offlineGrace, recoveryWindow time.Duration) time.Duration {
	var d time.Duration
	for _, w := range []time.Duration{offlineGrace, recoveryWindow} {
		if w > 0 && (d == 0 || w < d) {
			d = w
		}
	}
	return d / 2
}

// livenessPoll is how often a node whose decision depends on peer liveness
// re-reads GD2 when no watch event brings it back: a peer can die without
// any Kubernetes object changing (a network partition, a hung GD2).
//
// With the peer watch (PeerWatched) a change of liveness brings the node
// back by itself, within LivenessListAge, so the node looks again only
// every pollRest, against a watch that missed something: a fleet at rest
// then costs no sync per node per interval, only a peer list per cluster.
// Without it, every pollShort at most, and as often as the shorter
// non-zero hysteresis window so that a window is never overshot by much;
// never below a second.
func livenessPoll(s NodeSnapshot) time.Duration {
	if s.PeerWatched {
		return pollRest
	}
	d := pollShort
	for _, w := range []time.Duration{s.OfflineGrace, s.RecoveryWindow} {
		if w > 0 && w < d {
			d = w
		}
	}
	return max(d, time.Second)
}

// PeerWatchInterval is how often the peer watch reads a cluster's peer
// list with these hysteresis windows: LivenessListAge (half the shorter
// window, so a drop or a return that lasts a window is read at least
// twice within it), or fallback when neither window is set.
func PeerWatchInterval(offlineGrace, recoveryWindow, fallback time.Duration) time.Duration {
	if d := LivenessListAge(offlineGrace, recoveryWindow); d > 0 {
		return d
	}
	return fallback
}
