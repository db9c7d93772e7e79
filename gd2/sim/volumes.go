package sim

import (
	"net/http"
	"path"
	"regexp"
	"sort"
	"strings"
	"time"
)

const (
	volCreated = "Created"
	volStarted = "Started"
	volStopped = "Stopped"

	typeDistribute = "Distribute"
	typeReplicate  = "Replicate"
	typeDisperse   = "Disperse"

	brickTypeBrick   = "Brick"
	brickTypeArbiter = "Arbiter"
)

var volNameRE = regexp.MustCompile(`^[a-zA-Z0-9_-]+$`)

var knownFlags = map[string]bool{
	"reuse-bricks": true, "allow-root-dir": true, "allow-mount-as-brick": true, "create-brick-dir": true,
}

func checkFlags(flags map[string]bool) error {
	if len(flags) > len(knownFlags) {
		return errf(http.StatusBadRequest, msgInvalidFlag)
	}
	for k := range flags {
		if !knownFlags[k] {
			return errf(http.StatusBadRequest, "%s: %s", msgInvalidFlag, k)
		}
	}
	return nil
}

func sortBy[T any](xs []T, key func(T) string) {
	sort.SliceStable(xs, func(i, j int) bool { return key(xs[i]) < key(xs[j]) })
}

// volType is GD2's volume type: the first subvol's type, "Distributed-"
// when there are several subvols (never recomputed by expand).
func volType(v *volume) string {
	if len(v.Subvols) == 0 {
		return typeDistribute
	}
	t := v.Subvols[0].Type
	if t != typeDistribute && len(v.Subvols) > 1 {
		return "Distributed-" + t
	}
	return t
}

func wireBrickOf(v *volume, b *brick) wireBrick {
	return wireBrick{ID: b.ID, Path: b.Path, VolumeID: v.ID, VolumeName: v.Name, PeerID: b.PeerID, Host: b.Host, Type: b.Type}
}

func wireVolumeOf(v *volume) wireVolume {
	w := wireVolume{
		ID:              v.ID,
		Name:            v.Name,
		Type:            v.Type,
		Transport:       v.Transport,
		DistributeCount: len(v.Subvols),
		Options:         cloneMap(v.Options),
		State:           v.State,
		Metadata:        cloneMap(v.Metadata),
		SnapList:        append([]string{}, v.SnapList...),
		Capacity:        v.Capacity,
		Subvols:         []wireSubvol{},
	}
	if len(v.Subvols) > 0 {
		f := v.Subvols[0]
		w.ReplicaCount = f.ReplicaCount
		w.ArbiterCount = f.ArbiterCount
		w.DisperseCount = f.DisperseCount
		w.DisperseDataCount = f.DisperseData
		w.DisperseRedundancyCount = f.DisperseRedundancy
	}
	for _, sv := range v.Subvols {
		ws := wireSubvol{
			Name: sv.Name, Type: sv.Type, ReplicaCount: sv.ReplicaCount, ArbiterCount: sv.ArbiterCount,
			DisperseCount: sv.DisperseCount, DisperseDataCount: sv.DisperseData, DisperseRedundancyCount: sv.DisperseRedundancy,
			Bricks: []wireBrick{},
		}
		for _, b := range sv.Bricks {
			ws.Bricks = append(ws.Bricks, wireBrickOf(v, b))
		}
		w.Subvols = append(w.Subvols, ws)
	}
	return w
}

func (c *call) volumeArg() (*volume, error) {
	v := c.m.Volumes[c.pv("volname")]
	if v == nil {
		return nil, errf(http.StatusNotFound, msgVolumeNotFound)
	}
	return v, nil
}

// volumeList always answers a list, [] when empty (unlike peers/devices).
func volumeList(c *call) (int, any, error) {
	key, value, hasKey, hasValue := listFilter(c.r)
	out := []wireVolume{}
	for _, v := range c.m.sortedVolumes() {
		for range filterMatches(v.Metadata, key, value, hasKey, hasValue) {
			out = append(out, wireVolumeOf(v))
		}
	}
	return http.StatusOK, out, nil
}

func volumeGet(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, wireVolumeOf(v), nil
}

// downPeersOf lists the offline peers holding bricks of v: GD2's txn
// engine fails when an involved node is unreachable.
func (m *model) downPeersOf(v *volume) []string {
	seen := map[string]bool{}
	var out []string
	for _, b := range v.bricks() {
		if !seen[b.PeerID] && !m.peerOnline(b.PeerID) {
			seen[b.PeerID] = true
			out = append(out, b.PeerID)
		}
	}
	return out
}

// nodesDownErr is the v2 txn engine's (create, start, stop, delete)
// node-down error: the same text whichever and however many nodes are down.
func nodesDownErr([]string) error {
	return errf(http.StatusInternalServerError, msgNodesDown)
}

func (s *Simulator) startBrickLocked(b *brick) {
	b.Port = s.m.NextPort
	s.m.NextPort++
	if s.m.NextPort > 60999 {
		s.m.NextPort = 49152
	}
	b.PID = s.newPID()
}

func volumeStart(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	var req wireVolStartReq
	if err := c.decodeOptional(&req); err != nil {
		return 0, nil, err
	}
	if v.State == volStarted && !req.ForceStartBricks {
		return 0, nil, errf(http.StatusBadRequest, msgVolAlreadyStarted)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if err := c.m.v2NodesCheck(v); err != nil {
		return 0, nil, err
	}
	for _, b := range v.bricks() {
		// Mounts what a restart left unmounted, and starts every brick.
		c.s.startBrickLocked(b)
		b.Unmounted, b.ReconnectAt = false, time.Time{}
	}
	v.State = volStarted
	if v.Options[optSelfHeal] != "off" {
		// Every start (a force start too) writes the self-heal daemons'
		// volfile again.
		v.ShdStale = false
	}
	c.s.recordEventLocked("volume.started", map[string]string{"volume.name": v.Name})
	return http.StatusOK, wireVolumeOf(v), nil
}

func volumeStop(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	switch v.State {
	case volStopped:
		return 0, nil, errf(http.StatusBadRequest, msgVolAlreadyStopped)
	case volCreated:
		return 0, nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if err := c.m.v2NodesCheck(v); err != nil {
		return 0, nil, err
	}
	for _, b := range v.bricks() {
		b.Port, b.PID = 0, 0
		b.Unmounted, b.ReconnectAt = false, time.Time{}
	}
	v.State = volStopped
	c.s.recordEventLocked("volume.stopped", map[string]string{"volume.name": v.Name})
	return http.StatusOK, wireVolumeOf(v), nil
}

func volumeDelete(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if v.State == volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgVolDeleteStarted)
	}
	if len(v.SnapList) > 0 {
		return 0, nil, errf(http.StatusFailedDependency, "cannot delete Volume %s ,as it has %d snapshots", v.Name, len(v.SnapList))
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	if err := c.m.v2NodesCheck(v); err != nil {
		return 0, nil, err
	}
	for _, b := range v.bricks() {
		c.s.releaseBrickLocked(b)
	}
	delete(c.m.Volumes, v.Name)
	c.s.recordEventLocked("volume.deleted", map[string]string{"volume.name": v.Name})
	return http.StatusNoContent, nil, nil
}

// releaseBrickLocked returns a planned brick's total size to its device.
func (s *Simulator) releaseBrickLocked(b *brick) {
	if b.Device == "" {
		return
	}
	if d := s.m.Devices[deviceKey(b.PeerID, b.Device)]; d != nil {
		delete(d.LVs, b.LV)
		if !s.m.poolShared(b) {
			delete(d.LVs, b.Pool)
		}
		d.give(b.TotalSize)
	}
}

func volumeEdit(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	var req wireVolEditReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	for k := range req.Metadata {
		if strings.HasPrefix(k, "_") {
			return 0, nil, errf(http.StatusBadRequest, msgReservedKey)
		}
	}
	if err := c.lock(v.Name); err != nil {
		return 0, nil, err
	}
	merged := cloneMap(v.Metadata)
	for k, val := range req.Metadata {
		if req.DeleteMetadata {
			delete(merged, k)
		} else {
			merged[k] = val
		}
	}
	if metadataSize(merged) > maxMetadataSize {
		return 0, nil, errf(http.StatusBadRequest, msgMetadataTooLarge)
	}
	v.Metadata = merged
	return http.StatusOK, wireVolumeOf(v), nil
}

// cleanBrickPath makes a brick path absolute and clean, as GD2 does.
func cleanBrickPath(p string) string {
	if !path.IsAbs(p) {
		p = "/" + p
	}
	return path.Clean(p)
}

// brickInUse finds a volume already using peer+path.
func (m *model) brickInUse(peerID, p string) bool {
	for _, v := range m.Volumes {
		for _, b := range v.bricks() {
			if b.PeerID == peerID && b.Path == p {
				return true
			}
		}
	}
	return false
}

// volumeUsage is what statfs of a FUSE mount of v reports (fact sheet
// §5: GD2 mounts the volume to answer /status), built from statfs of its
// data bricks as Gluster's translators combine them: a replica set is as
// large as its smallest data brick, a disperse set is its smallest brick
// times the data count, a distribute set the sum of its bricks, and the
// volume the sum of its sets. used is what the bricks' fresh file systems
// already use (combined the same way) plus the clients' bytes
// (SetVolumeUsed, capped at what is left), which are spread over the sets
// in proportion to their capacity; brickUsed is what statfs of each brick
// directory then reports used: its file system's own plus its part of the
// clients' bytes (the set's share on every copy of a replica set, a
// data-count fraction on a disperse set, a share in proportion to size on
// distribute, nothing on arbiters, which hold metadata only).
func (s *Simulator) volumeUsage(v *volume) (capacity, used uint64, brickUsed map[*brick]uint64) {
	caps := make([]uint64, len(v.Subvols))
	var base uint64 // what the sets' file systems use before any write
	for i, sv := range v.Subvols {
		var least, leastBase, sum, sumBase uint64
		for _, b := range sv.Bricks {
			if b.Type == brickTypeArbiter {
				continue
			}
			sz, fu := s.brickStatfs(b), s.brickFSUsed(b)
			sum += sz
			sumBase += fu
			if least == 0 || sz < least {
				least, leastBase = sz, fu
			}
		}
		switch sv.Type {
		case typeReplicate:
			caps[i] = least
			base += leastBase
		case typeDisperse:
			caps[i] = least * uint64(max(sv.DisperseData, 1))
			base += leastBase * uint64(max(sv.DisperseData, 1))
		default:
			caps[i] = sum
			base += sumBase
		}
		capacity += caps[i]
	}
	base = min(base, capacity)
	written := min(v.Used, capacity-base)
	used = base + written
	brickUsed = map[*brick]uint64{}
	left := written
	for i, sv := range v.Subvols {
		share := left
		if i < len(v.Subvols)-1 && capacity > 0 {
			share = min(uint64(float64(written)*float64(caps[i])/float64(capacity)), left)
		}
		left -= share
		for _, b := range sv.Bricks {
			var w uint64
			switch {
			case b.Type == brickTypeArbiter:
				// Arbiters hold metadata only.
			case sv.Type == typeReplicate:
				// A copy lacking entries lacks their bytes too.
				w = uint64(float64(share) * held(sv, b))
			case sv.Type == typeDisperse:
				d := uint64(max(sv.DisperseData, 1))
				w = (share + d - 1) / d
			case caps[i] > 0:
				w = uint64(float64(share) * float64(s.brickStatfs(b)) / float64(caps[i]))
			}
			brickUsed[b] = min(s.brickFSUsed(b)+w, s.brickStatfs(b))
		}
	}
	return capacity, used, brickUsed
}

// held is the fraction of its replica set's data brick b holds: all of
// it less the entries it lacks, none for a replacement no full heal has
// reached while the set counts no entries (bytes set with no writes).
func held(sv *subvol, b *brick) float64 {
	lack := b.Missing + b.Hidden
	switch {
	case sv.Files >= 1:
		return max(0, 1-lack/sv.Files)
	case b.AwaitsFullHeal:
		return 0
	}
	return 1
}

// brickStatfs is the capacity statfs reports for a brick's file system:
// for a brick GD2 made, the size it was made with less the XFS log (see
// fs_xfs.go); for a brick given explicitly, whose file system the
// simulator does not know, ManualBrickSize less 1 %.
func (s *Simulator) brickStatfs(b *brick) uint64 {
	if b.Size == 0 {
		c := s.cfg.ManualBrickSize
		return (c - c/100) / xfsBlock * xfsBlock
	}
	c, _ := xfsFresh(b.Size)
	return c
}

// brickFSUsed is what a brick's file system uses before any client write:
// a fresh XFS's own blocks for a brick GD2 made, nothing known for one
// given explicitly.
func (s *Simulator) brickFSUsed(b *brick) uint64 {
	if b.Size == 0 {
		return 0
	}
	_, u := xfsFresh(b.Size)
	return u
}

// statfsOn is statfs of path on a node: a brick of any volume mounted
// there, or a replaced brick still mounted; 0 when nothing is (GD2 then
// sizes a replacement brick 0).
func (s *Simulator) statfsOn(peerID, path string) uint64 {
	if path == "" {
		return 0
	}
	for _, v := range s.m.sortedVolumes() {
		for _, b := range v.bricks() {
			if b.PeerID == peerID && b.Path == path {
				return s.brickStatfs(b)
			}
		}
	}
	for _, o := range s.m.Orphans {
		if o.PeerID == peerID && o.Path == path {
			return o.Size
		}
	}
	return 0
}

func volumeStatus(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	if v.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgVolNotStarted)
	}
	capacity, used, _ := c.s.volumeUsage(v)
	return http.StatusOK, wireVolumeStatus{
		Info:   wireVolumeOf(v),
		Online: true,
		Size:   wireSize{Capacity: capacity, Used: used, Free: capacity - used},
	}, nil
}

// brickStatuses lists bricks in random order (GD2 iterates a map); bricks
// on unreachable nodes carry only their info.
func bricksStatus(c *call) (int, any, error) {
	v, err := c.volumeArg()
	if err != nil {
		return 0, nil, err
	}
	out := []wireBrickStatus{}
	_, _, used := c.s.volumeUsage(v)
	for _, b := range v.bricks() {
		st := wireBrickStatus{Info: wireBrickOf(v, b)}
		if c.m.processUp(b.PeerID) {
			st.FsType = "xfs"
			st.MountOpts = "rw,inode64,noatime,nouuid"
			if b.Device != "" {
				st.Device = "/dev/mapper/" + strings.ReplaceAll(b.VG, "-", "--") + "-" + b.LV
			} else {
				st.Device = "/dev/root"
			}
			// statfs of the brick directory (fact sheet §5).
			capacity := c.s.brickStatfs(b)
			st.Size = wireSize{Capacity: capacity, Used: used[b], Free: capacity - used[b]}
			if v.State == volStarted && !b.Unmounted {
				st.Online, st.PID, st.Port = true, b.PID, b.Port
			}
		}
		out = append(out, st)
	}
	c.s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return http.StatusOK, out, nil
}
