package sim

import (
	"fmt"
	"net/http"
	"strings"
)

func volumeCreate(c *call) (int, any, error) {
	var req wireVolCreateReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !volNameRE.MatchString(req.Name) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidVolName)
	}
	if req.Size == 0 && len(req.Subvols) == 0 {
		return 0, nil, errf(http.StatusBadRequest, msgNoSubvols)
	}
	if err := checkFlags(req.Flags); err != nil {
		return 0, nil, err
	}
	// Create checks the size of user metadata but not reserved keys.
	if metadataSize(req.Metadata) > maxMetadataSize {
		return 0, nil, errf(http.StatusBadRequest, msgMetadataTooLarge)
	}
	if req.Transport != "" && req.Transport != "tcp" && req.Transport != "rdma" {
		return 0, nil, errf(http.StatusBadRequest, msgBadTransport)
	}
	if c.m.Volumes[req.Name] != nil {
		return 0, nil, errf(http.StatusBadRequest, msgVolExists)
	}
	if err := c.lock(req.Name); err != nil {
		return 0, nil, err
	}
	opts, oerr := normaliseOptions(req.Options, req.AllowAdvancedOptions, req.AllowExperimentalOptions, req.AllowDeprecatedOptions)
	if oerr != "" {
		return 0, nil, errf(http.StatusBadRequest, "%s", string(oerr))
	}
	var err error
	v := &volume{
		ID:        c.s.newUUID(),
		Name:      req.Name,
		Transport: req.Transport,
		State:     volCreated,
		Metadata:  cloneMap(req.Metadata),
		Factor:    1,
		Created:   c.now,
	}
	if v.Transport == "" {
		v.Transport = "tcp"
	}
	if req.Size > 0 {
		err = c.s.createSmartLocked(v, &req)
	} else {
		err = c.s.createManualLocked(v, &req)
	}
	if err != nil {
		return 0, nil, err
	}
	v.Type = volType(v)
	v.Options = defaultVolumeOptions(v.Subvols[0].Type)
	for k, val := range opts {
		v.Options[k] = val
	}
	for _, sv := range v.Subvols {
		sv.Files = c.s.cfg.InitialFiles
	}
	c.m.Volumes[v.Name] = v
	c.s.recordEventLocked("volume.created", map[string]string{"volume.name": v.Name})
	c.header.Set("Location", "/v1/volumes/"+v.Name)
	return http.StatusCreated, wireVolumeOf(v), nil
}

func (s *Simulator) createSmartLocked(v *volume, req *wireVolCreateReq) error {
	if req.Size < minBrickSize {
		return errf(http.StatusBadRequest, msgVolTooSmall)
	}
	if req.MaxBrickSize != 0 && req.MaxBrickSize < minBrickSize {
		return errf(http.StatusBadRequest, msgMaxBrickTooSmall)
	}
	factor := 1.0
	if req.Snapshot {
		factor = req.SnapshotReserveFactor
		if factor == 0 {
			factor = 1
		}
		if factor < 1 {
			return errf(http.StatusBadRequest, msgBadReserveFactor)
		}
	}
	prov := req.Provisioner
	if prov == "" {
		prov = provLVM
	}
	if prov != provLVM && prov != provLoop {
		return errf(http.StatusBadRequest, msgBadProvisioner)
	}
	pr := planRequest{
		Volume: req.Name, Size: req.Size, MaxBrickSize: req.MaxBrickSize, Distribute: req.Distribute,
		Replica: req.Replica, Arbiter: req.Arbiter, Disperse: req.Disperse, DisperseData: req.DisperseData,
		DisperseRedundancy: req.DisperseRedundancy, AvgFileSize: req.AverageFileSize, Factor: factor,
		Provisioner: prov, LimitPeers: req.LimitPeers, ExcludePeers: req.ExcludePeers,
		LimitZones: req.LimitZones, ExcludeZones: req.ExcludeZones, SubvolZonesOverlap: req.SubvolZonesOverlap,
	}
	planned, err := plan(pr, s.m.candidates(prov, req.LimitPeers, req.ExcludePeers, req.LimitZones, req.ExcludeZones))
	if err != nil {
		return err
	}
	// Commit: check every device really has the space (the planner may
	// over-commit one), then deduct.
	need := map[string]uint64{}
	for _, sv := range planned {
		for _, b := range sv.Bricks {
			need[deviceKey(b.PeerID, b.Device)] += b.TotalSize
		}
	}
	for k, n := range need {
		if d := s.m.Devices[k]; d == nil || d.Free < n {
			return errf(http.StatusInternalServerError, msgLVCreateFailed)
		}
	}
	for k, n := range need {
		s.m.Devices[k].take(n)
	}
	for _, sv := range planned {
		for _, b := range sv.Bricks {
			d := s.m.Devices[deviceKey(b.PeerID, b.Device)]
			d.addLV(b.Pool, b.TotalSize)
			d.addLV(b.LV, 0)
		}
	}
	typeName := strings.ToLower(planned[0].Type)
	for i, psv := range planned {
		sv := &subvol{
			Name: fmt.Sprintf("%s-%s-%d", v.Name, typeName, i), Type: psv.Type,
			ReplicaCount: max(psv.Replica, 1), ArbiterCount: psv.Arbiter,
			DisperseCount: psv.DisperseCount, DisperseData: psv.DisperseData, DisperseRedundancy: psv.DisperseRedundancy,
		}
		if psv.Type == typeDisperse {
			sv.ReplicaCount = 1
		}
		for _, pb := range psv.Bricks {
			sv.Bricks = append(sv.Bricks, &brick{
				ID: s.newUUID(), PeerID: pb.PeerID, Host: pb.Host, Path: pb.Path, Type: pb.Type,
				Device: pb.Device, VG: pb.VG, LV: pb.LV, Pool: pb.Pool, Size: pb.Size, TotalSize: pb.TotalSize,
			})
		}
		v.Subvols = append(v.Subvols, sv)
	}
	v.Provisioner = prov
	v.Factor = factor
	v.Capacity = req.Size
	v.Metadata["_brick-provision-type"] = "auto"
	return nil
}

func subvolTypeOf(reqType string) (string, error) {
	switch strings.ToLower(reqType) {
	case "", "distribute":
		return typeDistribute, nil
	case "replicate":
		return typeReplicate, nil
	case "disperse":
		return typeDisperse, nil
	}
	return "", errf(http.StatusBadRequest, "invalid subvolume type %q", reqType)
}

func (s *Simulator) createManualLocked(v *volume, req *wireVolCreateReq) error {
	seen := map[string]bool{}
	for _, svr := range req.Subvols {
		if _, err := subvolTypeOf(svr.Type); err != nil {
			return err
		}
		for _, b := range svr.Bricks {
			if !validUUID(b.PeerID) {
				return errf(http.StatusBadRequest, msgInvalidPeerID)
			}
			k := b.PeerID + cleanBrickPath(b.Path)
			if seen[k] {
				return errf(http.StatusBadRequest, msgDupBrick)
			}
			seen[k] = true
		}
	}
	typeName := ""
	for i, svr := range req.Subvols {
		t, _ := subvolTypeOf(svr.Type)
		if i == 0 {
			typeName = strings.ToLower(t)
		}
		sv, err := s.buildManualSubvol(v, t, svr.Replica, svr.Arbiter, svr.DisperseCount, svr.DisperseData, svr.DisperseRedundancy, svr.Bricks)
		if err != nil {
			return err
		}
		sv.Name = fmt.Sprintf("%s-%s-%d", v.Name, typeName, i)
		v.Subvols = append(v.Subvols, sv)
	}
	v.Provisioner = ""
	v.Metadata["_brick-provision-type"] = ""
	return nil
}

// buildManualSubvol validates one explicit subvol the way GD2's create txn
// does (errors are 500s there).
func (s *Simulator) buildManualSubvol(v *volume, t string, replica, arbiter, disp, data, red int, reqBricks []wireBrickReq) (*subvol, error) {
	sv := &subvol{Type: t, ReplicaCount: max(replica, 1), ArbiterCount: arbiter}
	switch t {
	case typeReplicate:
		if replica == 0 {
			return nil, errf(http.StatusInternalServerError, msgReplicaNotGiven)
		}
		if arbiter != 0 && (arbiter != 1 || replica != 2) {
			return nil, errf(http.StatusInternalServerError, msgInvalidArbiter)
		}
		if len(reqBricks) != replica+arbiter {
			return nil, errf(http.StatusInternalServerError, msgCreateBrickCount)
		}
	case typeDisperse:
		if disp == 0 {
			disp = len(reqBricks)
		}
		if red == 0 && data > 0 {
			red = disp - data
		}
		if red == 0 {
			red = max(1, disp/3)
		}
		if data == 0 {
			data = disp - red
		}
		if disp != len(reqBricks) || disp < 3 || data+red != disp || data <= red {
			return nil, errf(http.StatusInternalServerError, msgInvalidDisperse)
		}
		sv.ReplicaCount, sv.DisperseCount, sv.DisperseData, sv.DisperseRedundancy = 1, disp, data, red
	default:
		if len(reqBricks) == 0 {
			return nil, errf(http.StatusInternalServerError, msgCreateBrickCount)
		}
	}
	for _, rb := range reqBricks {
		p := s.m.Peers[rb.PeerID]
		if p == nil {
			return nil, errf(http.StatusInternalServerError, "%s: %s", msgPeerNotFound, rb.PeerID)
		}
		if !s.m.peerOnline(p.ID) {
			return nil, errf(http.StatusInternalServerError, msgNodesDown)
		}
		bp := cleanBrickPath(rb.Path)
		if s.m.brickInUse(p.ID, bp) {
			return nil, errf(http.StatusInternalServerError, "%s: %s:%s", msgBrickInUse, p.Name, bp)
		}
		bt := brickTypeBrick
		if strings.EqualFold(rb.Type, "arbiter") {
			bt = brickTypeArbiter
		}
		sv.Bricks = append(sv.Bricks, &brick{ID: s.newUUID(), PeerID: p.ID, Host: addrHost(p.PeerAddresses[0]), Path: bp, Type: bt})
	}
	if t == typeReplicate && arbiter == 1 {
		n := 0
		for _, b := range sv.Bricks {
			if b.Type == brickTypeArbiter {
				n++
			}
		}
		if n != 1 {
			return nil, errf(http.StatusInternalServerError, msgInvalidArbiter)
		}
	}
	return sv, nil
}
