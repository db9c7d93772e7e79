package sim

import (
	"encoding/json"
	"time"
)

// The destructive-call log records every GD2 request that can destroy or
// move data if it is repeated or misdirected — replace-brick and peer
// delete — by the thing it acts on, whether or not it succeeded. A crash
// test reads it to prove that an operator killed at any instant never
// issues such a call twice for one target: a replace-brick sent again for a
// source brick that has already moved makes GD2 fall back to subvol 0
// brick 0, and a repeated peer delete shows the operator lost track of a
// step it had done.
//
// Requests failed by an injected fault before reaching GD2's handler are
// not recorded: they never ran. Requests whose handler ran are, with OK
// telling whether GD2 answered success (a hang fault that ran the handler
// counts as OK: the work was done).

// DestructiveCall is one replace-brick or peer delete that reached GD2's
// handler.
type DestructiveCall struct {
	Time time.Time `json:"time"`
	// Op is the operation name (ReplaceBrick, DeletePeer).
	Op string `json:"op"`
	// Target is what the call acts on: "<volume> <src-peerid>:<src-path>"
	// for ReplaceBrick, the peer id for DeletePeer.
	Target string `json:"target"`
	// Serving is the peer id that served the request.
	Serving string `json:"serving,omitempty"`
	OK      bool   `json:"ok"`
}

// destructiveTarget names what a destructive route's request acts on, or
// "" for a route that is not destructive.
func destructiveTarget(c *call) string {
	switch c.route.name {
	case "ReplaceBrick":
		var req wireReplaceBrickReq
		_ = json.Unmarshal(c.body, &req)
		return c.pv("volname") + " " + req.SrcPeerID + ":" + req.SrcBrickPath
	case "DeletePeer":
		return c.pv("peerid")
	}
	return ""
}

func (s *Simulator) recordDestructiveLocked(c *call, ok bool) {
	target := destructiveTarget(c)
	if target == "" {
		return
	}
	d := DestructiveCall{Time: c.now, Op: c.route.name, Target: target, OK: ok}
	if c.serving != nil {
		d.Serving = c.serving.ID
	}
	s.destructive = append(s.destructive, d)
}

// DestructiveCalls returns the destructive-call log, oldest first. Like
// Changes it lives in memory only.
func (s *Simulator) DestructiveCalls() []DestructiveCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]DestructiveCall(nil), s.destructive...)
}

// RepeatedCall is a destructive call sent again for a target whose earlier
// call had already succeeded.
type RepeatedCall struct {
	First, Again DestructiveCall
}

// RepeatedDestructiveCalls lists, in log order, every destructive call
// made after one with the same operation and target had succeeded: what an
// operator that resumes a half-done step without re-reading GD2 would send.
// Retries of a call that failed are not repeats.
func RepeatedDestructiveCalls(log []DestructiveCall) []RepeatedCall {
	done := map[[2]string]DestructiveCall{}
	var out []RepeatedCall
	for _, d := range log {
		k := [2]string{d.Op, d.Target}
		if first, ok := done[k]; ok {
			out = append(out, RepeatedCall{First: first, Again: d})
			continue
		}
		if d.OK {
			done[k] = d
		}
	}
	return out
}

// SucceededDestructiveCalls counts the successful destructive calls by
// operation: each brick replaced once and each peer deleted once make these
// the numbers of bricks moved and peers removed.
func SucceededDestructiveCalls(log []DestructiveCall) map[string]int {
	out := map[string]int{}
	for _, d := range log {
		if d.OK {
			out[d.Op]++
		}
	}
	return out
}
