package sim

import (
	"fmt"
	"net/http"
	"strings"
)

// In-place expand, as GD2's vol-expand.LvmResize step does it. Asked for a
// size with the volume's own distribute count, GD2 grows every brick (the
// arbiters too) by the same amount: per brick, the thin pool by the size
// times the snapshot reserve factor, its metadata by 0.5 % of that, and
// the brick's LV (with its file system) by both. It does so through LVM
// whatever the provisioner, and it finds each brick's pool and LV by the
// names the create planner gives, 1-based by position:
// tp_<vol>_s<i+1>_b<j+1> in the volume group of the brick's device. A
// brick put in place by replace-brick is named 0-based, so at its
// position either nothing of that name is in its group (lvextend fails)
// or another brick's LV is, and that brick grows instead. Loop bricks
// have no volume group at all. Each node resizes its own bricks in volume
// order and stops at its first failure; failures come back as one code-2
// error per node, and what the other nodes (or earlier bricks) grew stays
// grown, while the volume's capacity is only recorded on success.

const (
	msgLVNotFound = "Failed to find logical volume \"%s/%s\""
	msgVGNotFound = "Volume group \"%s\" not found"
)

func vgOfDevice(dev string) string { return "gluster" + strings.ReplaceAll(dev, "/", "-") }

func (s *Simulator) growInPlace(c *call, v *volume, size uint64) (int, any, error) {
	per := size / uint64(len(v.Subvols))
	if first := v.Subvols[0]; first.Type == typeDisperse {
		per /= uint64(max(first.DisperseData, 1))
	}
	tp := align512(uint64(float64(per) * v.Factor))
	meta := align512(min(uint64(float64(tp)*0.005), uint64(maxPoolMeta)))
	total := tp + meta
	// CheckForAvailableVgSize: every brick's device needs the growth of all
	// its bricks.
	need := map[string]uint64{}
	for _, b := range v.bricks() {
		if b.Device == "" {
			return 0, nil, errf(http.StatusBadRequest, msgSpaceNotSufficient)
		}
		need[deviceKey(b.PeerID, b.Device)] += total
	}
	for k, n := range need {
		if d := s.m.Devices[k]; d == nil || d.Free < n {
			return 0, nil, errf(http.StatusBadRequest, msgSpaceNotSufficient)
		}
	}
	if err := c.gate(c.allPeers()); err != nil {
		return 0, nil, err
	}
	failed := map[string]string{} // node → its error
	for i, sv := range v.Subvols {
		for j, b := range sv.Bricks {
			if _, stopped := failed[b.PeerID]; stopped {
				continue
			}
			if msg := s.resizeByPlannerName(v, b, i+1, j+1, total); msg != "" {
				failed[b.PeerID] = msg
			}
		}
	}
	if len(failed) > 0 {
		e := &apiError{Status: http.StatusInternalServerError}
		for _, id := range volumeNodes(v) {
			if msg, ok := failed[id]; ok {
				e.Items = append(e.Items, txnErr(id, stepLvmResize, msg).Items...)
			}
		}
		return 0, nil, e
	}
	v.Capacity += size
	s.recordEventLocked("volume.expanded", map[string]string{"volume.name": v.Name})
	return http.StatusOK, wireVolumeOf(v), nil
}

// resizeByPlannerName grows, on b's node and in b's volume group, the pool
// and LV the create planner would have named for position (sv, bi), and
// returns the error lvextend prints, "" on success.
func (s *Simulator) resizeByPlannerName(v *volume, b *brick, sv, bi int, total uint64) string {
	vg := vgOfDevice(b.Device)
	d := s.m.Devices[deviceKey(b.PeerID, b.Device)]
	if d == nil || d.Provisioner == provLoop {
		return fmt.Sprintf(msgVGNotFound, vg)
	}
	pool := fmt.Sprintf("tp_%s_s%d_b%d", v.Name, sv, bi)
	lv := fmt.Sprintf("brick_%s_s%d_b%d", v.Name, sv, bi)
	if _, ok := d.LVs[pool]; !ok {
		return fmt.Sprintf(msgLVNotFound, vg, pool)
	}
	if _, ok := d.LVs[lv]; !ok {
		return fmt.Sprintf(msgLVNotFound, vg, lv)
	}
	if d.Free < total {
		return msgLVCreateFailed
	}
	d.take(total)
	d.LVs[pool] += total
	// Whichever live brick owns that LV grows: b itself when it was never
	// replaced, another brick of the group otherwise (or none, for a
	// leftover of a failed replace or a replaced brick's).
	for _, o := range s.m.sortedVolumes() {
		for _, ob := range o.bricks() {
			if ob.PeerID == b.PeerID && ob.Device == b.Device && ob.LV == lv {
				ob.Size += total
				ob.TotalSize += total
				return ""
			}
		}
	}
	return ""
}
