package sim

import (
	"net/http"
	"time"
)

// GD2's timing around a node's death and return.
//
//   - A crashed GD2 (killed, no clean shutdown) keeps its liveness key in
//     the store until its etcd session lease expires (LivenessTTL): its
//     peers list it online with its old pid, and the v1 liveness gate and
//     the planner count on it, while its process, its bricks and every
//     step sent to it are gone. A clean stop revokes the key at once.
//   - After a restart the brick processes run at once, but clients, the
//     self-heal daemon and glfsheal reconnect only after a while
//     (BrickReconnect): heal-info shows the bricks unreachable and writes
//     keep accruing for them, though bricks-status shows them online.
//   - A restarting GD2 may start its bricks before their file systems are
//     mounted (UnmountedBrickStarts): they stay offline until a
//     force-start-bricks volume start.

// msgStepUnreachable is the gRPC error of a step sent to a node whose
// liveness key outlives its process (simulator's wording), and
// msgTxnTimeout the v2 engine's when such a node never runs its part.
const (
	msgStepUnreachable = "rpc error: code = Unavailable desc = all SubConns are in TransientFailure"
	msgTxnTimeout      = "txn timeout"
)

// nextTimedChangeLocked is the earliest lease expiry or brick reconnection
// due by now.
func (s *Simulator) nextTimedChangeLocked(now time.Time) (time.Time, bool) {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && !t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, h := range s.m.Hosts {
		consider(h.LeaseUntil)
	}
	for _, v := range s.m.Volumes {
		for _, b := range v.bricks() {
			consider(b.ReconnectAt)
		}
	}
	return next, !next.IsZero()
}

// applyTimedChangesLocked makes every change due at t.
func (s *Simulator) applyTimedChangesLocked(t time.Time) {
	for _, h := range s.m.Hosts {
		if !h.LeaseUntil.IsZero() && !h.LeaseUntil.After(t) {
			h.LeaseUntil = time.Time{}
			if !h.Alive {
				h.PID = 0
			}
			s.recordEventLocked("peer.disconnected.store", map[string]string{"peer.name": h.Name})
		}
	}
	for _, v := range s.m.Volumes {
		for _, b := range v.bricks() {
			if !b.ReconnectAt.IsZero() && !b.ReconnectAt.After(t) {
				b.ReconnectAt = time.Time{}
			}
		}
	}
}

// crashHostLocked kills a host's GD2 and bricks without a clean shutdown:
// its liveness key outlives it by LivenessTTL.
func (s *Simulator) crashHostLocked(h *host) {
	s.advanceLocked()
	if !h.Alive {
		return
	}
	h.Alive = false
	if s.cfg.LivenessTTL > 0 && h.PeerID != "" {
		h.LeaseUntil = s.now().Add(s.cfg.LivenessTTL)
		return
	}
	h.PID = 0
	s.recordEventLocked("peer.disconnected.store", map[string]string{"peer.name": h.Name})
}

// CrashPeer kills a member's GD2 (SIGKILL): its peers see it offline only
// when its liveness lease expires, LivenessTTL later.
func (s *Simulator) CrashPeer(peerID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.hostOfPeerLocked(peerID)
	if err != nil {
		return err
	}
	s.crashHostLocked(h)
	return s.persistLocked()
}

// restartTimingLocked applies a restart's timing to a host's bricks that
// were just started: all of them unmounted (drawn per restart), or
// unreachable for BrickReconnect.
func (s *Simulator) restartTimingLocked(h *host) {
	if h.PeerID == "" {
		return
	}
	unmounted := s.cfg.UnmountedBrickStarts > 0 && s.rng.Float64() < s.cfg.UnmountedBrickStarts
	for _, v := range s.m.Volumes {
		if v.State != volStarted {
			continue
		}
		for _, b := range v.bricks() {
			if b.PeerID != h.PeerID {
				continue
			}
			switch {
			case unmounted:
				b.Unmounted, b.Port, b.PID = true, 0, 0
			case s.cfg.BrickReconnect > 0:
				b.ReconnectAt = s.now().Add(s.cfg.BrickReconnect)
			}
		}
	}
}

// gateProcesses fails, after the liveness gate passed, when a node it
// counted on has no running GD2: the first step sent there fails.
func (c *call) gateProcesses(nodes []string) error {
	var dead []string
	for _, id := range nodes {
		if !c.m.processUp(id) && !inList(dead, id) {
			dead = append(dead, id)
		}
	}
	if len(dead) == 0 {
		return nil
	}
	return txnErrOn(dead, c.route.name, msgStepUnreachable)
}

// v2NodesCheck is the v2 engine's (create, start, stop, delete): a node
// the store sees down refuses at once; one whose lease outlives it makes
// the transaction time out.
func (m *model) v2NodesCheck(v *volume) error {
	if down := m.downPeersOf(v); len(down) > 0 {
		return nodesDownErr(down)
	}
	for _, b := range v.bricks() {
		if !m.processUp(b.PeerID) {
			return errf(http.StatusInternalServerError, msgTxnTimeout)
		}
	}
	return nil
}
