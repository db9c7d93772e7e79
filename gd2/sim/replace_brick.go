package sim

import (
	"fmt"
	"net/http"
	"strings"
)

const stepPrepareBricks = "brick-replace.PrepareBricks"

// Errors of the new brick's PrepareBricks step (simulator wording for
// lvcreate; mkfs's for the size-0 brick, as observed on a real GD2).
const (
	msgBrickSizeZero = "size 0 of data subvolume is too small"
	// msgMkdirNoPath: with no source matched the new brick's path is
	// empty, and PrepareBricks' first act, making the mount directory
	// (both provisioners), fails on "".
	msgMkdirNoPath = "mkdir : no such file or directory"
	msgLVExists    = "Logical Volume \"%s\" already exists in volume group \"%s\""
	msgMkfsMounted = "mkfs.xfs: %s contains a mounted filesystem"
)

// replaceBrick moves one brick to a device chosen by the planner: same
// path, another zone, a full heal backlog. It follows GD2's handler:
//
//   - the source is matched by peer id and the raw path string; without a
//     match GD2 goes on with subvol 0 brick 0 and an empty source (size 0,
//     path ""), and PrepareBricks fails making a mount directory of ""
//     before it creates anything;
//   - every zone of the volume's bricks is excluded (only the source's
//     subvol's with subvolume-zones-overlap), so the source's own zone is
//     always used;
//   - the new brick is sized by statfs of the source path on the node
//     serving the request: any other node than the source's own gives 0,
//     and the PrepareBricks step fails (500 code 2) leaving a 0-byte
//     LV/image on the chosen device;
//   - the new LV and pool are named 0-based; a live brick on the chosen
//     device with that name is truncated before lvcreate refuses (loop:
//     before mkfs refuses its mounted image); on the loop provisioner a
//     leftover image of a failed attempt is reused, so a retry succeeds;
//   - the v1 liveness gate covers every node of the volume plus the new
//     brick's node;
//   - the replaced brick keeps running on its node and its space is not
//     given back.
//
// The 200 body is the volume as it was before the replacement (callers
// must re-GET).
func replaceBrick(c *call) (int, any, error) {
	var req wireReplaceBrickReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !volNameRE.MatchString(c.pv("volname")) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidVolName)
	}
	if !validUUID(req.SrcPeerID) {
		return 0, nil, errf(http.StatusBadRequest, msgReplaceBadPeerID)
	}
	if err := checkFlags(req.Flags); err != nil {
		return 0, nil, err
	}
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	svIdx, bIdx, matched := 0, 0, false
find:
	for i, sv := range v.Subvols {
		for j, b := range sv.Bricks {
			if b.PeerID == req.SrcPeerID && b.Path == req.SrcBrickPath {
				svIdx, bIdx, matched = i, j, true
				break find
			}
		}
	}
	sv := v.Subvols[svIdx]
	target := sv.Bricks[bIdx] // the brick the new one takes the place of
	unsafe := ""
	if matched {
		unsafe = c.s.unsafeToRemove(sv, target)
	}
	reject := func(e error) (int, any, error) {
		if unsafe != "" {
			c.s.recordViolationLocked(c, Violation{
				Kind: ViolationUnsafeBrickReplace, Volume: v.Name, Subvol: sv.Name,
				Brick: target.Host + ":" + target.Path, PeerID: target.PeerID, Rejected: true, Detail: unsafe,
			})
		}
		return 0, nil, e
	}

	excludeZones := append([]string(nil), req.ExcludeZones...)
	for i, s := range v.Subvols {
		if req.SubvolZonesOverlap && i != svIdx {
			continue
		}
		for _, b := range s.Bricks {
			p := c.m.Peers[b.PeerID]
			if p == nil {
				return reject(errf(http.StatusInternalServerError, msgPeerNotFound))
			}
			excludeZones = append(excludeZones, p.zone())
		}
	}
	prov := v.Provisioner
	if prov == "" {
		prov = provLVM
	}
	cands := c.m.candidates(prov, req.LimitPeers, req.ExcludePeers, req.LimitZones, excludeZones)
	if len(cands) == 0 {
		return reject(errf(http.StatusInternalServerError, msgNoVG))
	}
	size := uint64(0)
	srcPath := ""
	if matched {
		srcPath = target.Path
		size = c.s.statfsOn(c.serving.ID, srcPath)
	}
	usable, total := uint64(0), uint64(0)
	if size > 0 {
		usable, total = brickSizes(size, v.Factor)
	}
	var chosen *candidate
	for i := range cands {
		if cands[i].Free >= total {
			chosen = &cands[i]
			break
		}
	}
	if chosen == nil {
		return reject(errf(http.StatusInternalServerError, msgNewBrickPeerParse))
	}
	if err := c.lock(v.Name); err != nil {
		return reject(err)
	}
	if err := c.gate(append(volumeNodes(v), chosen.PeerID)); err != nil {
		return reject(err)
	}

	// PrepareBricks, on the new brick's node.
	if !matched {
		return reject(txnErr(chosen.PeerID, stepPrepareBricks, msgMkdirNoPath))
	}
	d := c.m.Devices[deviceKey(chosen.PeerID, chosen.Device)]
	vg := "gluster" + strings.ReplaceAll(chosen.Device, "/", "-")
	lv := fmt.Sprintf("brick_%s_s%d_b%d", v.Name, svIdx, bIdx)
	pool := fmt.Sprintf("tp_%s_s%d_b%d", v.Name, svIdx, bIdx)
	if prov == provLoop {
		// The loop prepare opens <device>/<pool>/<lv>.img without exclusive
		// create and truncates it to the new size: a leftover image of a
		// failed attempt is simply reused; a live brick's image is cut to
		// the new size and then mkfs refuses the mounted file system.
		if _, clash := d.LVs[lv]; clash && c.s.damageBrickLocked(c, chosen.PeerID, chosen.Device, lv) {
			img := chosen.Device + "/" + pool + "/" + lv + ".img"
			return reject(txnErr(chosen.PeerID, stepPrepareBricks, fmt.Sprintf(msgMkfsMounted, img)))
		}
	} else {
		for _, name := range []string{pool, lv} {
			if _, clash := d.LVs[name]; clash {
				c.s.damageBrickLocked(c, chosen.PeerID, chosen.Device, name)
				return reject(txnErr(chosen.PeerID, stepPrepareBricks, fmt.Sprintf(msgLVExists, name, vg)))
			}
		}
	}
	if size == 0 {
		d.addLV(pool, 0)
		d.addLV(lv, 0)
		return reject(txnErr(chosen.PeerID, stepPrepareBricks, msgBrickSizeZero))
	}
	if d.Free < total {
		return reject(txnErr(chosen.PeerID, stepPrepareBricks, msgLVCreateFailed))
	}

	before := wireVolumeOf(v)
	// The old brick keeps running and mounted; GD2 forgets it without
	// giving its space back.
	c.m.Orphans = append(c.m.Orphans, orphanBrick{PeerID: target.PeerID, Path: target.Path, Size: c.s.brickStatfs(target)})
	d.take(total)
	d.addLV(pool, total)
	d.addLV(lv, 0)
	nb := &brick{
		ID: c.s.newUUID(), PeerID: chosen.PeerID, Host: chosen.Host, Path: target.Path, Type: target.Type,
		Device: chosen.Device, VG: vg, LV: lv, Pool: pool, Size: usable, TotalSize: total,
	}
	if sv.Type == typeReplicate {
		// The new brick is empty, but GD2 marks it a heal sink nowhere
		// and leaves the self-heal daemons' volfile as it was: heal-info
		// reads nothing pending and nothing heals it until a full heal
		// reaches daemons that know it (healTrigger).
		nb.Hidden, nb.AwaitsFullHeal = sv.Files, true
		v.ShdStale = true
	} else {
		// A disperse set's new brick must receive its fragment of every
		// entry (not measured on real GD2).
		nb.Missing = sv.Files
	}
	if v.State == volStarted {
		c.s.startBrickLocked(nb)
	}
	sv.Bricks[bIdx] = nb
	if unsafe != "" {
		c.s.recordViolationLocked(c, Violation{
			Kind: ViolationUnsafeBrickReplace, Volume: v.Name, Subvol: sv.Name,
			Brick: target.Host + ":" + target.Path, PeerID: target.PeerID, Detail: unsafe,
		})
	}
	c.s.recordEventLocked("brick.removed", map[string]string{"volume.name": v.Name, "brick.id": target.ID})
	c.s.recordEventLocked("brick.added", map[string]string{"volume.name": v.Name, "brick.id": nb.ID})
	return http.StatusOK, before, nil
}

// damageBrickLocked records the live brick whose LV or pool on a device
// is named name as damaged (GD2 truncated it) and reports whether there
// was one. A leftover of an earlier failed replace is no live brick:
// nothing is recorded then.
func (s *Simulator) damageBrickLocked(c *call, peerID, dev, name string) bool {
	for _, v := range s.m.sortedVolumes() {
		for _, sv := range v.Subvols {
			for _, b := range sv.Bricks {
				if b.PeerID == peerID && b.Device == dev && (b.LV == name || b.Pool == name) {
					s.recordViolationLocked(c, Violation{
						Kind: ViolationBrickDamaged, Volume: v.Name, Subvol: sv.Name,
						Brick: b.Host + ":" + b.Path, PeerID: b.PeerID,
						Detail: fmt.Sprintf("replace-brick reused the name %s on %s and truncated the live brick %s:%s", name, dev, b.Host, b.Path),
					})
					return true
				}
			}
		}
	}
	return false
}
