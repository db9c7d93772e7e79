package sim

import (
	"fmt"
	"net/http"
	"time"
)

// The invariant checker records management operations that lose or
// endanger data. Precisely:
//
//   - ViolationUnsafeBrickReplace: a replace-brick whose source brick's
//     replica set has no other brick that is online, has nothing left to
//     heal and is not in split-brain (for disperse: fewer such bricks than
//     the data count). Recorded when the replacement happens, and also,
//     with Rejected set, when the same request fails for another reason.
//   - ViolationQuorumLost: a successful management call after which a
//     replica set of a started volume lacks quorum although it had it
//     before the call.
//   - ViolationPeerDeleteWithBricks: a peer delete aimed at an existing peer
//     that holds bricks. GD2 always refuses it (403, or earlier 400/500),
//     so it is always recorded with Rejected set: it destroys nothing, but
//     an operator that issues it has lost track of its bricks.
//   - ViolationBrickDamaged: a replace-brick whose 0-based name for the new
//     brick equals the name of a live brick's LV or pool on the chosen
//     device. GD2 truncates that live brick before lvcreate refuses, so
//     the request fails (500 code 2) and a brick of some volume has been
//     damaged: recorded with Rejected false.
//
// Liveness changes from admin calls (a peer going down) are faults, not
// management operations, and are never recorded.

// ViolationKind names what was endangered.
type ViolationKind string

const (
	ViolationUnsafeBrickReplace   ViolationKind = "UnsafeBrickReplace"
	ViolationQuorumLost           ViolationKind = "QuorumLost"
	ViolationPeerDeleteWithBricks ViolationKind = "PeerDeleteWithBricks"
	ViolationBrickDamaged         ViolationKind = "BrickDamaged"
)

// Violation is one recorded dangerous management operation.
type Violation struct {
	Time time.Time     `json:"time"`
	Kind ViolationKind `json:"kind"`
	// Op is the request, "METHOD /v1/path".
	Op     string `json:"op"`
	Volume string `json:"volume,omitempty"`
	Subvol string `json:"subvol,omitempty"`
	Brick  string `json:"brick,omitempty"`
	PeerID string `json:"peerId,omitempty"`
	// Rejected is true when the simulator refused the request, so nothing
	// was lost but the attempt was unsafe.
	Rejected bool   `json:"rejected"`
	Detail   string `json:"detail"`
}

func (s *Simulator) recordViolationLocked(c *call, v Violation) {
	v.Time = c.now
	v.Op = c.r.Method + " " + c.r.URL.Path
	s.m.Violations = append(s.m.Violations, v)
}

// Violations returns every recorded violation, oldest first.
func (s *Simulator) Violations() []Violation {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Violation{}, s.m.Violations...)
}

// ResetViolations forgets recorded violations (between test phases).
func (s *Simulator) ResetViolations() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m.Violations = nil
}

// goodCopy is a brick that holds the replica set's data in full.
func (s *Simulator) goodCopy(sv *subvol, b *brick) bool {
	return s.brickUp(b) && b.Missing+b.Hidden < 0.5 && !b.AwaitsFullHeal && len(sv.SplitBrain) == 0
}

// unsafeToRemove says why removing b from sv would endanger data, or "".
func (s *Simulator) unsafeToRemove(sv *subvol, b *brick) string {
	good := 0
	for _, o := range sv.Bricks {
		if o != b && o.Type != brickTypeArbiter && s.goodCopy(sv, o) {
			good++
		}
	}
	need := 1
	if sv.Type == typeDisperse {
		need = max(sv.DisperseData, 1)
	}
	if good >= need {
		return ""
	}
	if len(sv.SplitBrain) > 0 {
		return fmt.Sprintf("replica set %s has %d files in split-brain", sv.Name, len(sv.SplitBrain))
	}
	return fmt.Sprintf("replica set %s keeps %d online fully healed copies besides %s:%s, needs %d", sv.Name, good, b.Host, b.Path, need)
}

type quorumKey struct{ vol, subvol string }

func (s *Simulator) quorumSnapshot() map[quorumKey]bool {
	out := map[quorumKey]bool{}
	for _, v := range s.m.Volumes {
		if v.State != volStarted {
			continue
		}
		for _, sv := range v.Subvols {
			out[quorumKey{v.Name, sv.Name}] = s.hasQuorum(sv)
		}
	}
	return out
}

func (s *Simulator) checkQuorumLoss(c *call, before map[quorumKey]bool) {
	for _, v := range s.m.sortedVolumes() {
		if v.State != volStarted {
			continue
		}
		for _, sv := range v.Subvols {
			if had, ok := before[quorumKey{v.Name, sv.Name}]; ok && had && !s.hasQuorum(sv) {
				s.recordViolationLocked(c, Violation{
					Kind: ViolationQuorumLost, Volume: v.Name, Subvol: sv.Name,
					Detail: fmt.Sprintf("replica set %s lost quorum", sv.Name),
				})
			}
		}
	}
}

// WholeSets reports, per replica set of volume volName in order, whether
// every brick of it holds the set's data in full: up, lacking nothing,
// healed by a full heal if it is a replacement, and no split-brain. It is
// what a test measures a heal's end by, which heal-info alone does not
// show after a replace-brick (it reads 0 while the new brick is empty).
func (s *Simulator) WholeSets(volName string) ([]bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	v := s.m.Volumes[volName]
	if v == nil {
		return nil, errf(http.StatusNotFound, msgVolumeNotFound)
	}
	out := make([]bool, len(v.Subvols))
	for i, sv := range v.Subvols {
		out[i] = true
		for _, b := range sv.Bricks {
			if b.Type != brickTypeArbiter && !s.goodCopy(sv, b) {
				out[i] = false
			}
		}
	}
	return out, nil
}
