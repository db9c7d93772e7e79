package sim

import (
	"fmt"
	"net/http"
	"strings"
)

const (
	stepExpand    = "vol-expand.ValidateAndPrepare"
	stepLvmResize = "vol-expand.LvmResize"
)

// volumeExpand grows a smart volume in place (size with distribute equal
// to the subvol count) or adds explicit bricks. A missing volume is a 500
// there, unlike elsewhere.
func volumeExpand(c *call) (int, any, error) {
	v := c.m.Volumes[c.pv("volname")]
	if v == nil {
		return 0, nil, errf(http.StatusInternalServerError, msgVolumeNotFound)
	}
	var req wireVolExpandReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if err := checkFlags(req.Flags); err != nil {
		return 0, nil, err
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if req.Size > 0 && req.Distribute == len(v.Subvols) {
		return c.s.growInPlace(c, v, req.Size)
	}
	return c.s.addBricks(c, v, &req)
}

func (s *Simulator) addBricks(c *call, v *volume, req *wireVolExpandReq) (int, any, error) {
	fail := func(msg string) (int, any, error) { return 0, nil, txnErr(c.serving.ID, stepExpand, msg) }
	seen := map[string]bool{}
	for _, rb := range req.Bricks {
		if !validUUID(rb.PeerID) {
			return 0, nil, errf(http.StatusBadRequest, msgInvalidPeerID)
		}
		bp := cleanBrickPath(rb.Path)
		if seen[rb.PeerID+bp] || s.m.brickInUse(rb.PeerID, bp) {
			return 0, nil, errf(http.StatusBadRequest, msgDupBrick)
		}
		seen[rb.PeerID+bp] = true
	}
	if err := c.gate(c.allPeers()); err != nil {
		return 0, nil, err
	}
	var nbs []*brick
	for _, rb := range req.Bricks {
		bp := cleanBrickPath(rb.Path)
		p := s.m.Peers[rb.PeerID]
		if p == nil {
			return fail(msgPeerNotFound)
		}
		bt := brickTypeBrick
		if strings.EqualFold(rb.Type, "arbiter") {
			bt = brickTypeArbiter
		}
		nbs = append(nbs, &brick{ID: s.newUUID(), PeerID: p.ID, Host: addrHost(p.PeerAddresses[0]), Path: bp, Type: bt})
	}
	if len(nbs) == 0 {
		return fail(msgInvalidBrickCount)
	}
	first := v.Subvols[0]
	switch {
	case first.Type == typeReplicate && req.ReplicaCount != 0:
		cur := first.ReplicaCount
		switch {
		case req.ReplicaCount < cur:
			return fail(msgInvalidBrickCount)
		case req.ReplicaCount == cur:
			return fail(msgReplicaSame)
		}
		add := req.ReplicaCount - cur
		if len(nbs) != add*len(v.Subvols) {
			return fail(msgInvalidBrickCount)
		}
		for i, sv := range v.Subvols {
			for _, b := range nbs[i*add : (i+1)*add] {
				// A new replica is empty and heals the whole set.
				b.Missing = sv.Files
				sv.Bricks = append(sv.Bricks, b)
			}
			sv.ReplicaCount = req.ReplicaCount
		}
	case first.Type == typeDistribute:
		for i, b := range nbs {
			sv := v.Subvols[i%len(v.Subvols)]
			sv.Bricks = append(sv.Bricks, b)
		}
	default:
		per := first.ReplicaCount + first.ArbiterCount
		if first.Type == typeDisperse {
			per = first.DisperseCount
		}
		if per == 0 || len(nbs)%per != 0 {
			return fail(msgInvalidBrickCount)
		}
		typeName := strings.ToLower(first.Type)
		for i := 0; i < len(nbs); i += per {
			// GD2 does not copy the arbiter count into new subvols.
			sv := &subvol{
				Name: fmt.Sprintf("%s-%s-%d", v.Name, typeName, len(v.Subvols)), Type: first.Type,
				ReplicaCount: first.ReplicaCount, DisperseCount: first.DisperseCount,
				DisperseData: first.DisperseData, DisperseRedundancy: first.DisperseRedundancy,
				Bricks: nbs[i : i+per],
			}
			v.Subvols = append(v.Subvols, sv)
		}
	}
	if v.State == volStarted {
		for _, b := range nbs {
			s.startBrickLocked(b)
		}
	}
	for _, b := range nbs {
		s.recordEventLocked("brick.added", map[string]string{"volume.name": v.Name, "brick.id": b.ID})
	}
	s.recordEventLocked("volume.expanded", map[string]string{"volume.name": v.Name})
	return http.StatusOK, wireVolumeOf(v), nil
}
