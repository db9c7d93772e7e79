package sim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Snapshots as glusterd2@54ce5f6f serves them (commands/snapshot): a
// snapshot is a read-only copy of a started volume made of one LVM thin
// snapshot per brick, kept under its own name beside the volumes; it is
// activated (its bricks started) before it can be cloned into a new,
// writable volume. The GD2-era CSI driver creates, activates, lists,
// deactivates, deletes and clones them; restore and status are not served.

const (
	msgSnapExists         = "snapshot already exists"
	msgSnapNotFound       = "snapshot not found"
	msgSnapNotSupported   = "snapshot not supported"
	msgSnapDeactivated    = "snapshot is already deactivated"
	msgSnapActivated      = "snapshot already activated. Use force to override the behaviour"
	msgEmptyVolName       = "volume name is empty"
	msgEmptySnapName      = "snapshot name is empty"
	msgInvalidSnapName    = "invalid snapshot name"
	msgCloneNameExists    = "A volume with the same clone name exist."
	msgCloneSnapNotActive = "Snapshot must be in started state before cloning."
	msgBrickOffline       = "one or more brick is offline"
	// msgLvsNotAnLV is what the Validate step returns when lvs fails on a
	// brick's device because it is no logical volume: the exec error of
	// lvs (simulator's choice of exit code).
	msgLvsNotAnLV = "exit status 5"

	stepSnapValidate  = "snap-create.Validate"
	stepCloneValidate = "snap-clone.Validate"
	provisionSnapshot = "snapshot"
)

// snapOverrides are the options snapshot create sets on the snapshot's
// volume: a snapshot is read-only and heals nothing.
var snapOverrides = map[string]string{
	"features/quota": "off", "features/inode-quota": "off", "feature/deem-statfs": "off",
	"features/quota-deem-statfs": "off", "bitrot-stub.bitrot": "off",
	"replicate.self-heal-daemon": "off", "features/read-only": "on", "features/uss": "off",
}

// snapshot is one GD2 snapshot: its own volume record (bricks on thin LV
// snapshots of the parent's bricks) and the parent's name.
type snapshot struct {
	Vol         *volume
	Parent      string
	Description string
	Created     time.Time
	// ParentOptions are the parent's options when the snapshot was taken:
	// what a clone gets back.
	ParentOptions map[string]string
}

type wireSnapCreateReq struct {
	VolName     string `json:"volname"`
	SnapName    string `json:"snapname"`
	TimeStamp   bool   `json:"timestamp,omitempty"`
	Description string `json:"description,omitempty"`
	Force       bool   `json:"force,omitempty"`
}

type wireSnapActivateReq struct {
	Force bool `json:"force,omitempty"`
}

type wireSnapCloneReq struct {
	CloneName string `json:"clonename"`
}

type wireSnapInfo struct {
	VolInfo     wireVolume `json:"snapinfo"`
	Parent      string     `json:"parentname"`
	Description string     `json:"description"`
	CreatedAt   time.Time  `json:"created-at"`
}

type wireSnapList struct {
	Parent string         `json:"parentname"`
	Snaps  []wireSnapInfo `json:"snaps"`
}

func wireSnapOf(sn *snapshot) wireSnapInfo {
	return wireSnapInfo{VolInfo: wireVolumeOf(sn.Vol), Parent: sn.Parent, Description: sn.Description, CreatedAt: sn.Created}
}

// snapArg finds the snapshot the path names. GD2's lookup fails with an
// error of its own, not the one its status mapping knows, so a missing
// snapshot is a 500 everywhere but info (which always answers 404).
func (c *call) snapArg() (*snapshot, error) {
	sn := c.m.Snapshots[c.pv("snapname")]
	if sn == nil {
		return nil, errf(http.StatusInternalServerError, msgSnapNotFound)
	}
	return sn, nil
}

func snapshotCreate(c *call) (int, any, error) {
	var req wireSnapCreateReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	switch {
	case req.VolName == "":
		return 0, nil, errf(http.StatusBadRequest, msgEmptyVolName)
	case req.SnapName == "":
		return 0, nil, errf(http.StatusBadRequest, msgEmptySnapName)
	}
	if req.TimeStamp {
		req.SnapName += c.now.UTC().Format("_GMT_2006_01_02_15_04_05")
	}
	if !volNameRE.MatchString(req.SnapName) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidSnapName)
	}
	if err := c.lock(req.VolName, req.SnapName); err != nil {
		return 0, nil, err
	}
	// The originator's checks answer 422 whatever they find.
	if c.m.Snapshots[req.SnapName] != nil {
		return 0, nil, errf(http.StatusUnprocessableEntity, msgSnapExists)
	}
	v := c.m.Volumes[req.VolName]
	if v == nil {
		return 0, nil, errf(http.StatusUnprocessableEntity, msgVolumeNotFound)
	}
	if v.State != volStarted {
		return 0, nil, errf(http.StatusUnprocessableEntity, msgVolNotStarted)
	}
	if v.Provisioner == provLoop {
		return 0, nil, errf(http.StatusInternalServerError, msgSnapNotSupported)
	}
	nodes := volumeNodes(v)
	if err := c.gate(nodes); err != nil {
		return 0, nil, err
	}
	if err := c.validateSnapBricks(v, stepSnapValidate, true); err != nil {
		return 0, nil, err
	}
	sn := c.s.takeSnapshotLocked(v, req.SnapName, req.Description, c.now)
	c.header.Set("Location", "/v1/snapshots/"+req.SnapName)
	return http.StatusCreated, wireSnapOf(sn), nil
}

// validateSnapBricks is the Validate step every node holding a brick of
// v runs: its bricks must be online, and (for a snapshot of a volume)
// each must sit on a thin LV that lvs knows. A node's first failure is
// its item of the code-2 error.
func (c *call) validateSnapBricks(v *volume, step string, needLV bool) error {
	fails := map[string]string{}
	var order []string
	for _, b := range v.bricks() {
		if fails[b.PeerID] != "" {
			continue
		}
		cause := ""
		switch {
		case b.Unmounted || b.PID == 0:
			cause = msgBrickOffline
		case needLV && b.Device == "":
			cause = msgLvsNotAnLV
		}
		if cause != "" {
			fails[b.PeerID] = cause
			order = append(order, b.PeerID)
		}
	}
	if len(order) == 0 {
		return nil
	}
	e := &apiError{Status: http.StatusInternalServerError}
	for _, id := range order {
		e.Items = append(e.Items, txnErr(id, step, fails[id]).Items...)
	}
	return e
}

// brickDirSuffix is what a brick path has below its mount root: smart
// bricks live in a "brick" directory at the top of their file system.
func brickDirSuffix(p string) string {
	if strings.HasSuffix(p, "/brick") {
		return "/brick"
	}
	return ""
}

// thinCopy is a brick on a thin LV snapshot of b, named lv at path p: the
// same thin pool and size, nothing more taken from the device.
func (s *Simulator) thinCopy(b *brick, lv, p string) *brick {
	nb := &brick{
		ID: s.newUUID(), PeerID: b.PeerID, Host: b.Host, Path: p, Type: b.Type,
		Device: b.Device, VG: b.VG, LV: lv, Pool: b.Pool, Size: b.Size,
	}
	if d := s.m.Devices[deviceKey(b.PeerID, b.Device)]; d != nil {
		d.addLV(lv, 0)
	}
	return nb
}

// copyVolume makes the volume record of a snapshot or clone of src named
// name: same layout, type, capacity and data, bricks from brickOf.
func (s *Simulator) copyVolume(src *volume, name string, brickOf func(i, j int, b *brick) *brick) *volume {
	nv := &volume{
		ID: s.newUUID(), Name: name, Type: src.Type, Transport: src.Transport, State: volCreated,
		Options: cloneMap(src.Options), Metadata: cloneMap(src.Metadata), Capacity: src.Capacity,
		Provisioner: src.Provisioner, Factor: src.Factor, Used: src.Used, Created: s.now(),
	}
	typeName := strings.ToLower(src.Subvols[0].Type)
	for i, sv := range src.Subvols {
		nsv := &subvol{
			Name: fmt.Sprintf("%s-%s-%d", name, typeName, i), Type: sv.Type, ReplicaCount: sv.ReplicaCount,
			ArbiterCount: sv.ArbiterCount, DisperseCount: sv.DisperseCount, DisperseData: sv.DisperseData,
			DisperseRedundancy: sv.DisperseRedundancy, Files: sv.Files,
		}
		for j, b := range sv.Bricks {
			nsv.Bricks = append(nsv.Bricks, brickOf(i, j, b))
		}
		nv.Subvols = append(nv.Subvols, nsv)
	}
	return nv
}

func (s *Simulator) takeSnapshotLocked(v *volume, name, desc string, now time.Time) *snapshot {
	sv := s.copyVolume(v, name, func(i, j int, b *brick) *brick {
		lv := fmt.Sprintf("snap_%s_%s_s%d_b%d", name, v.Name, i+1, j+1)
		p := fmt.Sprintf("%s/snaps/%s/%s/subvol%d/brick%d%s", brickRunDir, name, v.Name, i+1, j+1, brickDirSuffix(b.Path))
		return s.thinCopy(b, lv, p)
	})
	for k, val := range snapOverrides {
		sv.Options[k] = val
	}
	sv.Metadata["_brick-provision-type"] = provisionSnapshot
	sn := &snapshot{Vol: sv, Parent: v.Name, Description: desc, Created: now.UTC(), ParentOptions: cloneMap(v.Options)}
	if s.m.Snapshots == nil {
		s.m.Snapshots = map[string]*snapshot{}
	}
	s.m.Snapshots[name] = sn
	v.SnapList = append(v.SnapList, name)
	return sn
}

// lockedSnap takes the snapshot's lock, then finds it (activate and
// deactivate lock before they look).
func (c *call) lockedSnap() (*snapshot, error) {
	if err := c.lock(c.pv("snapname")); err != nil {
		return nil, err
	}
	return c.snapArg()
}

func snapshotActivate(c *call) (int, any, error) {
	sn, err := c.lockedSnap()
	if err != nil {
		return 0, nil, err
	}
	var req wireSnapActivateReq
	if err := c.decodeOptional(&req); err != nil {
		return 0, nil, err
	}
	if sn.Vol.State == volStarted && !req.Force {
		return 0, nil, errf(http.StatusBadRequest, msgSnapActivated)
	}
	if err := c.gate(volumeNodes(sn.Vol)); err != nil {
		return 0, nil, err
	}
	for _, b := range sn.Vol.bricks() {
		c.s.startBrickLocked(b)
	}
	sn.Vol.State = volStarted
	return http.StatusOK, wireSnapOf(sn), nil
}

func snapshotDeactivate(c *call) (int, any, error) {
	sn, err := c.lockedSnap()
	if err != nil {
		return 0, nil, err
	}
	if sn.Vol.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgSnapDeactivated)
	}
	if err := c.gate(volumeNodes(sn.Vol)); err != nil {
		return 0, nil, err
	}
	for _, b := range sn.Vol.bricks() {
		b.Port, b.PID = 0, 0
	}
	sn.Vol.State = volStopped
	return http.StatusOK, wireSnapOf(sn), nil
}

// snapshotDelete removes an active snapshot too (its bricks are stopped
// first) and takes it off its parent's snap-list.
func snapshotDelete(c *call) (int, any, error) {
	sn, err := c.snapArg()
	if err != nil {
		return 0, nil, err
	}
	if err := c.lock(sn.Vol.Name, sn.Parent); err != nil {
		return 0, nil, err
	}
	if err := c.gate(volumeNodes(sn.Vol)); err != nil {
		return 0, nil, err
	}
	for _, b := range sn.Vol.bricks() {
		c.s.releaseBrickLocked(b)
	}
	delete(c.m.Snapshots, sn.Vol.Name)
	if p := c.m.Volumes[sn.Parent]; p != nil {
		removeString(&p.SnapList, sn.Vol.Name)
	}
	return http.StatusNoContent, nil, nil
}

func snapshotInfo(c *call) (int, any, error) {
	sn := c.m.Snapshots[c.pv("snapname")]
	if sn == nil {
		return 0, nil, errf(http.StatusNotFound, msgSnapNotFound)
	}
	return http.StatusOK, wireSnapOf(sn), nil
}

// snapshotList groups snapshots by parent, groups in random order (GD2
// ranges over a map); ?volume= lists one volume's in snap-list order.
func snapshotList(c *call) (int, any, error) {
	groups := map[string][]wireSnapInfo{}
	if name := c.r.URL.Query().Get("volume"); name != "" {
		v := c.m.Volumes[name]
		if v == nil {
			return 0, nil, errf(http.StatusNotFound, msgVolumeNotFound)
		}
		for _, s := range v.SnapList {
			if sn := c.m.Snapshots[s]; sn != nil {
				groups[name] = append(groups[name], wireSnapOf(sn))
			}
		}
	} else {
		names := make([]string, 0, len(c.m.Snapshots))
		for n := range c.m.Snapshots {
			names = append(names, n)
		}
		sort.Strings(names) // the store lists keys in order
		for _, n := range names {
			sn := c.m.Snapshots[n]
			groups[sn.Parent] = append(groups[sn.Parent], wireSnapOf(sn))
		}
	}
	out := []wireSnapList{}
	for p, snaps := range groups {
		out = append(out, wireSnapList{Parent: p, Snaps: snaps})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Parent < out[j].Parent })
	c.s.rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return http.StatusOK, out, nil
}

// snapshotClone makes a new volume (state Created) from an active
// snapshot: one thin snapshot per snapshot brick, the parent's options
// back, the snapshot's metadata (so the clone is marked snapshot
// provisioned).
func snapshotClone(c *call) (int, any, error) {
	var req wireSnapCloneReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if !volNameRE.MatchString(req.CloneName) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidVolName)
	}
	if err := c.lock(req.CloneName, c.pv("snapname")); err != nil {
		return 0, nil, err
	}
	sn, err := c.snapArg()
	if err != nil {
		return 0, nil, err
	}
	if c.m.Volumes[req.CloneName] != nil {
		return 0, nil, errf(http.StatusBadRequest, msgCloneNameExists)
	}
	if sn.Vol.State != volStarted {
		return 0, nil, errf(http.StatusBadRequest, msgCloneSnapNotActive)
	}
	if err := c.gate(volumeNodes(sn.Vol)); err != nil {
		return 0, nil, err
	}
	if err := c.validateSnapBricks(sn.Vol, stepCloneValidate, false); err != nil {
		return 0, nil, err
	}
	nv := c.s.copyVolume(sn.Vol, req.CloneName, func(i, j int, b *brick) *brick {
		lv := fmt.Sprintf("clone_%s_%s_s%d_b%d", req.CloneName, sn.Vol.Name, i+1, j+1)
		p := fmt.Sprintf("%s/clones/%s/subvol%d/brick%d%s", brickRunDir, req.CloneName, i+1, j+1, brickDirSuffix(b.Path))
		return c.s.thinCopy(b, lv, p)
	})
	nv.Options = cloneMap(sn.ParentOptions)
	c.m.Volumes[nv.Name] = nv
	// GD2 appends the new name to the request's URL, as for every
	// created resource: here that is the clone route, not the volume's.
	c.header.Set("Location", c.r.URL.String()+"/"+nv.Name)
	return http.StatusCreated, wireVolumeOf(nv), nil
}

// poolShared says whether a brick other than b, of a volume or a
// snapshot, lives in b's thin pool: LVM keeps a pool with thin LVs in it.
func (m *model) poolShared(b *brick) bool {
	if b.Pool == "" {
		return false
	}
	in := func(v *volume) bool {
		for _, o := range v.bricks() {
			if o != b && o.PeerID == b.PeerID && o.Device == b.Device && o.Pool == b.Pool {
				return true
			}
		}
		return false
	}
	for _, v := range m.Volumes {
		if in(v) {
			return true
		}
	}
	for _, sn := range m.Snapshots {
		if in(sn.Vol) {
			return true
		}
	}
	return false
}
