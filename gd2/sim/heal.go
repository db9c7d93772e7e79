package sim

import (
	"fmt"
	"math"
	"net/http"
	"path"
	"strings"
	"time"
)

// The heal model. Each brick counts the entries it lacks (Missing). While a
// brick is unreachable and its replica set still accepts writes (quorum),
// client writes at WriteRate per set add to its Missing; heal-info reports
// those entries on the reachable siblings, as AFR's index does. Once the
// brick is back and cluster/replicate.self-heal-daemon is "on", Missing
// drains at HealRate per brick. Time is evaluated lazily: every request and
// liveness change first settles the interval since the last tick, during
// which liveness was constant.

func (s *Simulator) advanceLocked() {
	now := s.clock.Now()
	// Liveness changes on their own at lease expiries and brick
	// reconnections: settle the heal model piecewise between them.
	for {
		at, ok := s.nextTimedChangeLocked(now)
		if !ok {
			break
		}
		s.advanceToLocked(at)
		s.applyTimedChangesLocked(at)
	}
	s.advanceToLocked(now)
}

// advanceToLocked settles the heal model up to now, liveness constant.
func (s *Simulator) advanceToLocked(now time.Time) {
	dt := now.Sub(s.m.LastTick).Seconds()
	if now.After(s.m.LastTick) {
		s.m.LastTick = now
	}
	if dt <= 0 {
		return
	}
	for _, v := range s.m.Volumes {
		if v.State != volStarted {
			continue
		}
		shd := v.Options[optSelfHeal] == "on"
		for _, sv := range v.Subvols {
			s.advanceSubvol(sv, dt, shd)
		}
	}
}

// brickUp says clients and self-heal reach the brick: its node runs, the
// brick was mounted when started, and it has reconnected since.
func (s *Simulator) brickUp(b *brick) bool {
	return s.m.processUp(b.PeerID) && !b.Unmounted && b.ReconnectAt.IsZero()
}

func (s *Simulator) advanceSubvol(sv *subvol, dt float64, shd bool) {
	up := 0
	for _, b := range sv.Bricks {
		if s.brickUp(b) {
			up++
		}
	}
	if s.hasQuorum(sv) {
		w := s.cfg.WriteRate * dt
		sv.Files += w
		if sv.Type != typeDistribute {
			for _, b := range sv.Bricks {
				if !s.brickUp(b) {
					b.Missing += w
				}
			}
		}
	}
	if !shd || up < 2 {
		return
	}
	for _, b := range sv.Bricks {
		if s.brickUp(b) && b.Missing > 0 {
			b.Missing = math.Max(0, b.Missing-s.cfg.HealRate*dt)
		}
	}
}

// hasQuorum is AFR's auto client quorum: more than half the bricks up, or
// exactly half including the first; disperse needs its data count; a
// distribute subvol needs its brick.
func (s *Simulator) hasQuorum(sv *subvol) bool {
	up := 0
	for _, b := range sv.Bricks {
		if s.brickUp(b) {
			up++
		}
	}
	n := len(sv.Bricks)
	switch sv.Type {
	case typeDisperse:
		return up >= max(sv.DisperseData, 1)
	case typeReplicate:
		return 2*up > n || 2*up == n && n > 0 && s.brickUp(sv.Bricks[0])
	}
	return up == n && n > 0
}

func isHealable(v *volume) bool {
	t := v.Subvols[0].Type
	return t == typeReplicate || t == typeDisperse
}

func ptr(n int64) *int64 { return &n }

// siblingBacklog is what heal-info shows on b: the entries its siblings lack.
func siblingBacklog(sv *subvol, b *brick) int64 {
	var n float64
	for _, o := range sv.Bricks {
		if o != b {
			n += o.Missing
		}
	}
	return int64(math.Ceil(n - 1e-9))
}

func (c *call) healInfoChecks() (*volume, error) {
	v, err := c.volumeArg()
	if err != nil {
		return nil, err
	}
	if !isHealable(v) {
		return nil, errf(http.StatusBadRequest, msgHealBadVolType)
	}
	if v.State != volStarted {
		return nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	return v, nil
}

func healInfo(c *call) (int, any, error) { return c.healInfo("") }

func (c *call) healInfo(opts string) (int, any, error) {
	v, err := c.healInfoChecks()
	if err != nil {
		return 0, nil, err
	}
	if opts != "" && opts != "info-summary" && opts != "split-brain-info" {
		return 0, nil, errf(http.StatusInternalServerError, msgHealInfoFailed)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	out := []wireBrickHealInfo{}
	for _, sv := range v.Subvols {
		sb := int64(len(sv.SplitBrain))
		for _, b := range sv.Bricks {
			hi := wireBrickHealInfo{HostID: b.PeerID, Name: b.Host + ":" + b.Path, Status: "Connected"}
			if !c.s.brickUp(b) {
				// glfsheal prints "-" for an unreachable brick: -1 counters.
				hi.HostID, hi.Status = "-", "Transport endpoint is not connected"
				switch opts {
				case "info-summary":
					hi.TotalEntries, hi.EntriesInHealPending, hi.EntriesInSplitBrain, hi.EntriesPossiblyHealing = ptr(-1), ptr(-1), ptr(-1), ptr(-1)
				default:
					hi.Entries = ptr(-1)
				}
				out = append(out, hi)
				continue
			}
			pending := siblingBacklog(sv, b)
			switch opts {
			case "info-summary":
				hi.TotalEntries = ptr(pending + sb)
				hi.EntriesInHealPending = ptr(pending)
				hi.EntriesInSplitBrain = ptr(sb)
				hi.EntriesPossiblyHealing = ptr(0)
			case "split-brain-info":
				hi.Entries = ptr(sb)
				for _, f := range sv.SplitBrain {
					hi.FileGfidList = append(hi.FileGfidList, wireFileGfid{Filename: f, GfID: gfidOf(v.ID, f)})
				}
			default:
				hi.Entries = ptr(pending + sb)
				for _, f := range sv.SplitBrain {
					hi.FileGfidList = append(hi.FileGfidList, wireFileGfid{Filename: f, GfID: gfidOf(v.ID, f)})
				}
			}
			out = append(out, hi)
		}
	}
	return http.StatusOK, out, nil
}

// gfidOf makes a stable fake GFID for a file name.
func gfidOf(volID, name string) string {
	var h uint64 = 14695981039346656037
	for _, ch := range volID + name {
		h = (h ^ uint64(ch)) * 1099511628211
	}
	return fmt.Sprintf("%08x-%04x-%04x-%04x-%012x", uint32(h>>32), uint16(h>>16), uint16(h), uint16(h>>48), h&0xffffffffffff)
}

func healTrigger(c *call) (int, any, error) {
	typ := c.r.URL.Query().Get("type")
	if typ != "" && typ != "index" && typ != "full" {
		return 0, nil, errf(http.StatusBadRequest, msgHealBadType)
	}
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	// No volume-type check: a distribute volume has no self-heal-daemon
	// option in its profile, so it gets the disabled refusal below.
	if v.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	if v.Options[optSelfHeal] != "on" {
		return 0, nil, errf(http.StatusBadRequest, msgShdDisabled)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if err := c.gate(volumeNodes(v)); err != nil {
		return 0, nil, err
	}
	if c.fault == faultShdRPC {
		// GD2 runs selfheal.Heal on every brick node; each sends the heal
		// brick op to its self-heal daemon, and here every RPC failed. The
		// daemons themselves keep crawling: nothing else changes.
		return 0, nil, txnErrOn(volumeNodes(v), stepSelfHeal, msgShdRPC)
	}
	if typ == "full" && daemonsHeal(v) {
		// A full crawl compares every entry with every brick the daemons
		// know: what a replacement lacks is now pending, and heals at
		// HealRate. With a stale volfile or self-heal off it queues
		// nothing, and GD2 answers 200 all the same.
		for _, sv := range v.Subvols {
			for _, b := range sv.Bricks {
				if b.AwaitsFullHeal && c.s.brickUp(b) {
					b.Missing += b.Hidden
					b.Hidden, b.AwaitsFullHeal = 0, false
				}
			}
		}
	}
	// An index heal finds only what the index lists, which the daemons
	// are already draining at HealRate: it only confirms.
	return http.StatusOK, nil, nil
}

// splitBrainResolve clears split-brain files: one file by latest-mtime or
// bigger-file, or with source-brick the file given (or every file of that
// brick's replica set).
func splitBrainResolve(c *call) (int, any, error) {
	op := c.pv("op")
	if op != "latest-mtime" && op != "bigger-file" && op != "source-brick" {
		return 0, nil, errf(http.StatusBadRequest, msgSplitBrainBadOp)
	}
	var req wireSplitBrainReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if !isHealable(v) {
		return 0, nil, errf(http.StatusBadRequest, msgSplitBrainType)
	}
	if v.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if op != "source-brick" {
		if req.FileName == "" || !path.IsAbs(req.FileName) {
			return 0, nil, errf(http.StatusBadRequest, msgSplitBrainFile)
		}
		for _, sv := range v.Subvols {
			if removeString(&sv.SplitBrain, req.FileName) {
				return http.StatusOK, nil, nil
			}
		}
		return 0, nil, errf(http.StatusInternalServerError, msgSplitBrainFail)
	}
	if req.HostName == "" || req.BrickName == "" {
		return 0, nil, errf(http.StatusBadRequest, msgSplitBrainArgs)
	}
	for _, sv := range v.Subvols {
		for _, b := range sv.Bricks {
			if b.Path != req.BrickName || (b.Host != req.HostName && b.PeerID != req.HostName && c.m.Peers[b.PeerID].Name != req.HostName) {
				continue
			}
			if !c.s.brickUp(b) {
				return 0, nil, errf(http.StatusInternalServerError, msgSplitBrainFail)
			}
			if req.FileName == "" {
				sv.SplitBrain = nil
				return http.StatusOK, nil, nil
			}
			if removeString(&sv.SplitBrain, req.FileName) {
				return http.StatusOK, nil, nil
			}
			return 0, nil, errf(http.StatusInternalServerError, msgSplitBrainFail)
		}
	}
	return 0, nil, errf(http.StatusInternalServerError, msgSplitBrainFail)
}

func removeString(xs *[]string, x string) bool {
	for i, v := range *xs {
		if v == x {
			*xs = append((*xs)[:i], (*xs)[i+1:]...)
			return true
		}
	}
	return false
}

// SetRates changes the client write rate and the self-heal rate from now
// on; time until now accrues at the old rates. Zero keeps a rate as it is.
func (s *Simulator) SetRates(write, heal float64) error {
	if write < 0 || heal < 0 {
		return fmt.Errorf("rates must not be negative: write %g, heal %g", write, heal)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	if write > 0 {
		s.cfg.WriteRate = write
	}
	if heal > 0 {
		s.cfg.HealRate = heal
	}
	return s.persistLocked()
}

// Write simulates n client writes to a volume right now: every degraded
// replica set that still has quorum gains n entries for its unreachable
// bricks. It returns an error for unknown or not started volumes.
func (s *Simulator) Write(volName string, n float64) error { return s.write(volName, n, false) }

// Overwrite simulates n client writes to files the volume already holds:
// every degraded replica set that still has quorum gains up to n entries
// for its unreachable bricks (never more than it has files), and no file
// is added. A workload that rewrites a working set leaves a new brick as
// much to heal however long it runs. Errors as Write's.
func (s *Simulator) Overwrite(volName string, n float64) error { return s.write(volName, n, true) }

// write is Write, or Overwrite when overwrite is set.
func (s *Simulator) write(volName string, n float64, overwrite bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	v := s.m.Volumes[volName]
	if v == nil {
		return errf(http.StatusNotFound, msgVolumeNotFound)
	}
	if v.State != volStarted {
		return errf(http.StatusBadRequest, msgVolNotStarted)
	}
	for _, sv := range v.Subvols {
		if !s.hasQuorum(sv) {
			continue
		}
		if !overwrite {
			sv.Files += n
		}
		if sv.Type == typeDistribute {
			continue
		}
		for _, b := range sv.Bricks {
			switch {
			case s.brickUp(b):
			case overwrite:
				b.Missing = math.Min(sv.Files, b.Missing+n)
			default:
				b.Missing += n
			}
		}
	}
	return s.persistLocked()
}

// InjectSplitBrain puts files of one replica set (index into subvols) in
// split-brain. Names without a leading "/" get one.
func (s *Simulator) InjectSplitBrain(volName string, subvolIdx int, files []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m.Volumes[volName]
	if v == nil {
		return errf(http.StatusNotFound, msgVolumeNotFound)
	}
	if subvolIdx < 0 || subvolIdx >= len(v.Subvols) {
		return errf(http.StatusBadRequest, "subvol index %d out of range", subvolIdx)
	}
	sv := v.Subvols[subvolIdx]
	if sv.Type == typeDistribute {
		return errf(http.StatusBadRequest, msgHealBadVolType)
	}
	for _, f := range files {
		if !strings.HasPrefix(f, "/") {
			f = "/" + f
		}
		if !inList(sv.SplitBrain, f) {
			sv.SplitBrain = append(sv.SplitBrain, f)
		}
	}
	return s.persistLocked()
}

// ClearSplitBrain removes every split-brain entry of a volume.
func (s *Simulator) ClearSplitBrain(volName string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m.Volumes[volName]
	if v == nil {
		return errf(http.StatusNotFound, msgVolumeNotFound)
	}
	for _, sv := range v.Subvols {
		sv.SplitBrain = nil
	}
	return s.persistLocked()
}

// SetVolumeUsed sets the bytes /status reports as used.
func (s *Simulator) SetVolumeUsed(volName string, used uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := s.m.Volumes[volName]
	if v == nil {
		return errf(http.StatusNotFound, msgVolumeNotFound)
	}
	v.Used = used
	return s.persistLocked()
}
