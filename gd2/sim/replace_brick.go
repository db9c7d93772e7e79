package sim

import (
	"fmt"
	"net/http"
	"strings"
)

// replaceBrick moves one brick to a device chosen by the planner: same
// path, another zone, a full heal backlog. The 200 body is the volume as it
// was before the replacement (a GD2 quirk: callers must re-GET).
func replaceBrick(c *call) (int, any, error) {
	var req wireReplaceBrickReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !volNameRE.MatchString(c.pv("volname")) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidVolName)
	}
	if !validUUID(req.SrcPeerID) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidPeerID)
	}
	if err := checkFlags(req.Flags); err != nil {
		return 0, nil, err
	}
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	// GD2 does not check that the source brick exists; it falls back to
	// the first brick of the first subvol.
	svIdx, bIdx := 0, 0
	srcPath := cleanBrickPath(req.SrcBrickPath)
	for i, sv := range v.Subvols {
		for j, b := range sv.Bricks {
			if b.PeerID == req.SrcPeerID && b.Path == srcPath {
				svIdx, bIdx = i, j
			}
		}
	}
	sv := v.Subvols[svIdx]
	src := sv.Bricks[bIdx]
	unsafe := c.s.unsafeToRemove(sv, src)
	reject := func(e error) (int, any, error) {
		if unsafe != "" {
			c.s.recordViolationLocked(c, Violation{
				Kind: ViolationUnsafeBrickReplace, Volume: v.Name, Subvol: sv.Name,
				Brick: src.Host + ":" + src.Path, PeerID: src.PeerID, Rejected: true, Detail: unsafe,
			})
		}
		return 0, nil, e
	}

	prov := v.Provisioner
	if prov == "" {
		prov = provLVM
	}
	cands := c.m.candidates(prov, req.LimitPeers, req.ExcludePeers, req.LimitZones, req.ExcludeZones)
	if len(cands) == 0 {
		return reject(errf(http.StatusInternalServerError, msgNoVG))
	}
	usedZones := map[string]bool{}
	zoneSource := v.Subvols
	if req.SubvolZonesOverlap {
		zoneSource = []*subvol{sv}
	}
	for _, s := range zoneSource {
		for _, b := range s.Bricks {
			if p := c.m.Peers[b.PeerID]; p != nil {
				usedZones[p.zone()] = true
			} else {
				usedZones[b.PeerID] = true
			}
		}
	}
	usable, total := brickSizes(c.s.brickCapacity(src), v.Factor)
	var chosen *candidate
	for i := range cands {
		if cands[i].Free >= total && !usedZones[cands[i].Zone] {
			chosen = &cands[i]
			break
		}
	}
	if chosen == nil {
		return reject(errf(http.StatusInternalServerError, msgNewBrickPeerParse))
	}
	if d := c.m.Devices[deviceKey(chosen.PeerID, chosen.Device)]; d == nil || d.Free < total {
		return reject(errf(http.StatusInternalServerError, msgLVCreateFailed))
	}

	before := wireVolumeOf(v)
	c.s.releaseBrickLocked(src)
	c.m.Devices[deviceKey(chosen.PeerID, chosen.Device)].Free -= total
	nb := &brick{
		ID: c.s.newUUID(), PeerID: chosen.PeerID, Host: chosen.Host, Path: src.Path, Type: src.Type,
		Device: chosen.Device, VG: "gluster" + strings.ReplaceAll(chosen.Device, "/", "-"),
		LV:   fmt.Sprintf("brick_%s_s%d_b%d", v.Name, svIdx+1, bIdx+1),
		Pool: fmt.Sprintf("tp_%s_s%d_b%d", v.Name, svIdx+1, bIdx+1),
		Size: usable, TotalSize: total,
		// The new brick is empty: it must receive the whole replica set.
		Missing: sv.Files,
	}
	if v.State == volStarted {
		c.s.startBrickLocked(nb)
	}
	sv.Bricks[bIdx] = nb
	if unsafe != "" {
		c.s.recordViolationLocked(c, Violation{
			Kind: ViolationUnsafeBrickReplace, Volume: v.Name, Subvol: sv.Name,
			Brick: src.Host + ":" + src.Path, PeerID: src.PeerID, Detail: unsafe,
		})
	}
	c.s.recordEventLocked("brick.removed", map[string]string{"volume.name": v.Name, "brick.id": src.ID})
	c.s.recordEventLocked("brick.added", map[string]string{"volume.name": v.Name, "brick.id": nb.ID})
	return http.StatusOK, before, nil
}
