package states

import (
	"math/rand/v2"
	"testing"
	"time"
)

// randomNode returns an arbitrary, possibly contradictory snapshot: the
// safety rules must hold whatever the dispatcher feeds in.
func randomNode(r *rand.Rand) NodeSnapshot {
	def := NodeDefinition()
	b := func() bool { return r.IntN(2) == 0 }
	n := func() int { return r.IntN(3) }
	reqs := []NodeRequest{RequestNone, RequestMaintenance, RequestDecommission, RequestResume}
	vers := []string{"10.4", "11.1"}
	s := NodeSnapshot{
		State:      def.States[r.IntN(len(def.States))].Name,
		Now:        t0,
		StateSince: t0.Add(-time.Duration(r.IntN(40)) * time.Minute),
		Deleting:   b(), Request: reqs[r.IntN(len(reqs))], Paused: b(),
		PVCExists: b(), PVCBound: b(), PodExists: b(), PodReady: b(),
		RunningVersion: vers[r.IntN(2)], TargetVersion: vers[r.IntN(2)], UpgradeSelected: b(),
		PermissibleDowntime: 30 * time.Minute, UpgradeStepTimeout: 10 * time.Minute,
		OfflineGrace: time.Duration(r.IntN(3)) * time.Minute, RecoveryWindow: time.Duration(r.IntN(3)) * time.Minute,
		GD2Reachable: b(), PeerKnown: b(), PeerAlive: b(),
		DevicesEnabled: n(), DevicesDisabled: n(), Disabled: b(),
		BricksOnNode: n(), BricksOffline: n(), SoleHealedCopies: n(), QuorumAtRisk: n(),
		ReplacementsHealing: n(), MaxParallelMoves: n(), PendingHealEntries: int64(n()), SplitBrainEntries: int64(n()),
	}
	if b() {
		s.DownSince = t0.Add(-time.Duration(r.IntN(60)) * time.Minute)
	}
	if b() {
		s.AliveSince = t0.Add(-time.Duration(r.IntN(4)) * time.Minute)
	}
	if b() {
		s.NextBrickVolume, s.NextBrickPath = "vol1", "/bricks/vol1"
	}
	if r.IntN(4) == 0 {
		s.DrainBlockedReason = "no room"
	}
	if r.IntN(4) == 0 {
		s.VolumeNodeDown = "node x is down"
	}
	return s
}

func TestDecideNodeNeverBreaksTheSafetyRules(t *testing.T) {
	def := NodeDefinition()
	r := rand.New(rand.NewPCG(1, 2))
	for range 50000 {
		s := randomNode(r)
		d := DecideNode(s)
		checkDecisionIsAllowed(t, def, s.State, d)
		fail := func(rule string) { t.Fatalf("%s\nsnapshot: %+v\ndecision: %+v", rule, s, d) }

		if s.Paused && changesPoolWhilePaused(d) {
			fail("a paused cluster's node started a change to the pool")
		}

		switch d.Step {
		case NodeMoveBrick:
			// Quorum is kept per replica set: a brick at risk is never
			// the next brick (AnalyzePeer, TestNextMovesKeepsTheSequentialRules).
			if s.SoleHealedCopies > 0 || s.ReplacementsHealing >= max(s.MaxParallelMoves, 1) || !s.GD2Reachable || s.DrainBlockedReason != "" || s.NextBrickPath == "" {
				fail("a brick was moved while unsafe or blind, or beyond the moves in flight allowed")
			}
		case NodeDisableDevices:
			if !s.PeerAlive || s.DevicesEnabled == 0 {
				fail("devices of a dead peer, or none, were disabled")
			}
		case NodeDeletePeer:
			if s.BricksOnNode > 0 || !s.GD2Reachable {
				fail("a peer with bricks, or an unverified one, was deleted")
			}
		case NodeDeleteWorkload:
			if s.GD2Reachable && s.PeerKnown && s.BricksOnNode > 0 {
				fail("the storage of a node whose peer has bricks was deleted")
			}
		}

		switch d.Event {
		case NodeDrain:
			// GD2 cannot move a dead peer's bricks: only an admin's
			// request (or deletion) ever starts a drain, a failure never.
			if !s.Deleting && s.Request != RequestDecommission {
				fail("a drain started without an explicit request")
			}
			if !s.GD2Reachable {
				fail("a drain started while GD2 was unreachable")
			}
		case NodePeerLost:
			if s.State == NodeOnline {
				since := s.DownSince
				if since.IsZero() {
					since = s.Now
				}
				if !s.GD2Reachable || !s.PeerKnown || s.PeerAlive || s.Now.Sub(since) < s.OfflineGrace {
					fail("an Online node went Offline without GD2 reporting it down for the offline grace")
				}
			}
		case NodePeerRecovered:
			since := s.AliveSince
			if since.IsZero() {
				since = s.Now
			}
			if !s.GD2Reachable || !s.PeerKnown || !s.PeerAlive || s.Now.Sub(since) < s.RecoveryWindow {
				fail("a node recovered without its peer staying alive for the recovery window")
			}
		case NodeMarkFailed:
			since := s.DownSince
			if since.IsZero() {
				since = s.Now
			}
			if !s.GD2Reachable || !s.PeerKnown || s.PeerAlive || s.Request == RequestMaintenance || s.Now.Sub(since) < s.PermissibleDowntime {
				fail("a node was failed without GD2 reporting it down past the permissible downtime")
			}
		case NodeDetach, NodeAbandon:
			if s.State == NodeDraining && (s.BricksOnNode > 0 || s.ReplacementsHealing > 0) {
				fail("a drain ended with bricks left or replacements still healing")
			}
		case NodeRestart:
			if s.SoleHealedCopies > 0 || s.QuorumAtRisk > 0 || !s.UpgradeSelected {
				fail("a node was stopped for upgrade while unsafe or unselected")
			}
		case NodeRemove:
			// An abandoned node removes its own workload only when GD2 has
			// just confirmed that its dead peer holds no brick; without the
			// peer in the list, only the admin's deletion may.
			verifiedDead := s.PeerKnown && !s.PeerAlive
			if s.State == NodeAbandoned && (!s.GD2Reachable || s.BricksOnNode > 0 || (!verifiedDead && !s.Deleting)) {
				fail("an abandoned node was removed with bricks, blind, or without a dead peer or a deletion")
			}
		}
	}
}

// changesPoolWhilePaused reports whether d is something spec.paused holds:
// growing or shrinking the pool, a drain, failure handling, or stopping a
// node for upgrade. What stays allowed only observes (peerLost,
// peerRecovered), narrows placement or serves an explicit admin request on
// one node (disableDevices, enableDevices for spec.desiredState,
// enterMaintenance, resume), or finishes what
// must not be left half done (an upgrade restart, deleting the workload of
// a node that already left the pool).
func changesPoolWhilePaused(d Decision) bool {
	switch d.Event {
	case NodeProvision, NodeJoin, NodeActivate, NodeMarkFailed, NodeDrain, NodeAbandon, NodeDetach, NodeRemove, NodeUpgrade, NodeRestart:
		return true
	}
	switch d.Step {
	case NodeMoveBrick, NodeDeletePeer, NodeEvictLostPod:
		return true
	}
	return false
}
