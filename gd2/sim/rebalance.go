package sim

import (
	"net/http"
	"strconv"
)

// Rebalance runs for Config.RebalanceDuration and then completes. Status
// numbers are GD2's: 1 started, 2 stopped, 3 complete.

const (
	rebalStarted  = 1
	rebalStopped  = 2
	rebalComplete = 3
)

func rebalanceStart(c *call) (int, any, error) {
	var req wireRebalStartReq
	if err := c.decodeOptional(&req); err != nil {
		return 0, nil, err
	}
	if req.Option != "" && req.Option != "fix-layout" && req.Option != "force" {
		return 0, nil, errf(http.StatusBadRequest, msgRebalBadOption)
	}
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if v.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	if len(v.Subvols) < 2 {
		return 0, nil, errf(http.StatusBadRequest, msgRebalNotDist)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	var nodes []string
	seen := map[string]bool{}
	for _, b := range v.bricks() {
		if !seen[b.PeerID] {
			seen[b.PeerID] = true
			nodes = append(nodes, b.PeerID)
		}
	}
	v.Rebalance = &rebalance{ID: c.s.newUUID(), Option: req.Option, Started: c.now, Cmd: 1, Nodes: nodes}
	return http.StatusOK, v.Rebalance.ID, nil
}

func (s *Simulator) rebalState(c *call, r *rebalance) int {
	switch {
	case r.Stopped:
		return rebalStopped
	case c.now.Sub(r.Started) >= s.cfg.RebalanceDuration:
		return rebalComplete
	}
	return rebalStarted
}

func (s *Simulator) rebalNodes(c *call, v *volume) []wireRebalNodeStatus {
	r := v.Rebalance
	st := strconv.Itoa(s.rebalState(c, r))
	elapsed := min(c.now.Sub(r.Started), s.cfg.RebalanceDuration)
	left := s.cfg.RebalanceDuration - elapsed
	if r.Stopped {
		left = 0
	}
	files := int64(elapsed.Seconds() * s.cfg.WriteRate)
	out := []wireRebalNodeStatus{}
	for _, id := range r.Nodes {
		// Unreachable nodes are silently left out, as in GD2.
		if !s.m.peerOnline(id) {
			continue
		}
		out = append(out, wireRebalNodeStatus{
			PeerID: id, Status: st, RebalancedFiles: strconv.FormatInt(files, 10),
			RebalancedSize: strconv.FormatInt(files*4096, 10), LookedupFiles: strconv.FormatInt(files, 10),
			SkippedFiles: "0", RebalanceFailed: "0",
			ElapsedTime: strconv.FormatFloat(elapsed.Seconds(), 'f', 2, 64),
			TimeLeft:    strconv.FormatInt(int64(left.Seconds()), 10),
		})
	}
	return out
}

func rebalanceStatus(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if v.Rebalance == nil {
		return 0, nil, errf(http.StatusNotFound, msgRebalNotFound)
	}
	return http.StatusOK, wireRebalStatus{Volume: v.Name, RebalanceID: v.Rebalance.ID, Nodes: c.s.rebalNodes(c, v)}, nil
}

func rebalanceStop(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if v.Rebalance == nil || c.s.rebalState(c, v.Rebalance) != rebalStarted {
		return 0, nil, errf(http.StatusBadRequest, msgRebalNotStarted)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	v.Rebalance.Stopped = true
	v.Rebalance.Cmd = 2
	return http.StatusOK, wireRebalInfo{
		Volname: v.Name, State: rebalStopped, Cmd: v.Rebalance.Cmd, RebalanceID: v.Rebalance.ID,
		RebalStats: c.s.rebalNodes(c, v),
	}, nil
}
