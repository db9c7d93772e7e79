package sim

import (
	"fmt"
	"math"
	"net/http"
	"sort"
	"strings"
)

// The smart-volume planner, after GD2's: candidates are enabled devices of
// online peers sorted by free size, and every brick of a volume goes to a
// zone no other brick of the volume uses (per subvol with
// subvolume-zones-overlap).

const (
	mib           = 1 << 20
	gib           = 1 << 30
	minBrickSize  = 20 * mib
	minArbiter    = 100 * mib
	maxPoolMeta   = 16 * gib
	loopMaxBrick  = 100 * gib
	defaultAvgFSz = 64 << 10
	brickRunDir   = "/var/run/glusterd2"
	maxSubvols    = 4096
)

// planRequest is what the planner needs from a create request.
type planRequest struct {
	Volume             string
	Size               uint64
	MaxBrickSize       uint64
	Distribute         int
	Replica            int
	Arbiter            int
	Disperse           int
	DisperseData       int
	DisperseRedundancy int
	AvgFileSize        uint64
	Factor             float64
	Provisioner        string
	LimitPeers         []string
	ExcludePeers       []string
	LimitZones         []string
	ExcludeZones       []string
	SubvolZonesOverlap bool
}

// candidate is a device the planner may use.
type candidate struct {
	PeerID string
	Host   string
	Zone   string
	Device string
	Free   uint64
}

type plannedBrick struct {
	candidate
	Path      string
	Type      string
	Size      uint64
	TotalSize uint64
	VG, LV    string
	Pool      string
}

type plannedSubvol struct {
	Type               string
	Replica            int
	Arbiter            int
	DisperseCount      int
	DisperseData       int
	DisperseRedundancy int
	Bricks             []plannedBrick
}

func align512(n uint64) uint64 { return n / 512 * 512 }

// brickSizes returns the usable size and the device bytes (thin pool plus
// pool metadata) a brick of size takes.
func brickSizes(size uint64, factor float64) (usable, total uint64) {
	usable = align512(size)
	pool := align512(uint64(float64(usable) * factor))
	meta := align512(min(uint64(float64(pool)*0.005), uint64(maxPoolMeta)))
	return usable, pool + meta
}

func inList(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// candidates lists usable devices, largest free first (ties by peer and
// device, so planning is deterministic).
func (m *model) candidates(provisioner string, limitPeers, excludePeers, limitZones, excludeZones []string) []candidate {
	var out []candidate
	for _, d := range m.Devices {
		p := m.Peers[d.PeerID]
		if p == nil || !m.peerOnline(p.ID) || d.State != deviceEnabled || d.Provisioner != provisioner {
			continue
		}
		zone := p.zone()
		if len(limitPeers) > 0 && !inList(limitPeers, p.ID) || inList(excludePeers, p.ID) {
			continue
		}
		if len(limitZones) > 0 && !inList(limitZones, zone) || inList(excludeZones, zone) {
			continue
		}
		out = append(out, candidate{PeerID: p.ID, Host: addrHost(p.PeerAddresses[0]), Zone: zone, Device: d.Path, Free: d.Free})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Free != out[j].Free {
			return out[i].Free > out[j].Free
		}
		return out[i].PeerID+out[i].Device < out[j].PeerID+out[j].Device
	})
	return out
}

// layout turns the request into subvol shapes and brick sizes.
func (r *planRequest) layout() (subvols int, sv plannedSubvol, brickSize, arbiterSize uint64, err error) {
	if r.Replica > 3 || r.Replica < 0 {
		return 0, sv, 0, 0, errf(http.StatusInternalServerError, msgInvalidReplica)
	}
	if r.Arbiter < 0 || r.Arbiter > 1 || r.Arbiter == 1 && r.Replica != 2 {
		return 0, sv, 0, 0, errf(http.StatusInternalServerError, msgInvalidArbiter)
	}
	data := 1
	switch {
	case r.Disperse > 0 || r.DisperseData > 0 || r.DisperseRedundancy > 0:
		disp, d, red := r.Disperse, r.DisperseData, r.DisperseRedundancy
		if disp == 0 {
			disp = d + red
		}
		if red == 0 && d == 0 {
			red = max(1, disp/3)
		}
		if d == 0 {
			d = disp - red
		}
		if red == 0 {
			red = disp - d
		}
		if disp < 3 || d+red != disp || red < 1 || d <= red {
			return 0, sv, 0, 0, errf(http.StatusInternalServerError, msgInvalidDisperse)
		}
		sv = plannedSubvol{Type: typeDisperse, DisperseCount: disp, DisperseData: d, DisperseRedundancy: red}
		data = d
	case r.Replica >= 2:
		sv = plannedSubvol{Type: typeReplicate, Replica: r.Replica, Arbiter: r.Arbiter}
	default:
		sv = plannedSubvol{Type: typeDistribute, Replica: 1}
	}
	maxBrick := r.MaxBrickSize
	if r.Provisioner == provLoop && (maxBrick == 0 || maxBrick > loopMaxBrick) {
		maxBrick = loopMaxBrick
	}
	subvols = max(r.Distribute, 1)
	if maxBrick > 0 && maxBrick*uint64(data) < r.Size {
		subvols = int(math.Ceil(float64(r.Size) / float64(maxBrick*uint64(data))))
	}
	subvolSize := r.Size / uint64(subvols)
	brickSize = subvolSize / uint64(data)
	if sv.Arbiter == 1 {
		avg := r.AvgFileSize
		if avg == 0 {
			avg = defaultAvgFSz
		}
		arbiterSize = max(4*subvolSize/avg, minArbiter)
		arbiterSize = min(arbiterSize, subvolSize)
	}
	if brickSize < minBrickSize {
		return 0, sv, 0, 0, errf(http.StatusInternalServerError, msgBrickTooSmall)
	}
	return subvols, sv, brickSize, arbiterSize, nil
}

// plan places every brick. Like GD2 it does not deduct free space while
// planning (its updates hit a loop copy), so with zone overlap one device
// can be over-committed within a request; the commit then fails as
// lvcreate would.
func plan(r planRequest, cands []candidate) ([]plannedSubvol, error) {
	n, shape, brickSize, arbiterSize, err := r.layout()
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, errf(http.StatusInternalServerError, msgNoDevices)
	}
	perSubvol := 1
	switch shape.Type {
	case typeReplicate:
		perSubvol = shape.Replica + shape.Arbiter
	case typeDisperse:
		perSubvol = shape.DisperseCount
	}
	// No cluster fits thousands of subvols; refusing early keeps a hostile
	// request from allocating without bound.
	if n > maxSubvols {
		return nil, errf(http.StatusInternalServerError, msgNoSpace)
	}
	usedZones := map[string]bool{}
	out := make([]plannedSubvol, 0, n)
	for i := 1; i <= n; i++ {
		if r.SubvolZonesOverlap {
			usedZones = map[string]bool{}
		}
		sv := shape
		sv.Bricks = nil
		for j := 1; j <= perSubvol; j++ {
			size, typ := brickSize, brickTypeBrick
			if shape.Arbiter == 1 && j == perSubvol {
				size, typ = arbiterSize, brickTypeArbiter
			}
			usable, total := brickSizes(size, r.Factor)
			found := false
			for _, c := range cands {
				if c.Free < total || usedZones[c.Zone] {
					continue
				}
				usedZones[c.Zone] = true
				vg := "gluster" + strings.ReplaceAll(c.Device, "/", "-")
				sv.Bricks = append(sv.Bricks, plannedBrick{
					candidate: c,
					Path:      fmt.Sprintf("%s/bricks/%s/subvol%d/brick%d/brick", brickRunDir, r.Volume, i, j),
					Type:      typ,
					Size:      usable,
					TotalSize: total,
					VG:        vg,
					LV:        fmt.Sprintf("brick_%s_s%d_b%d", r.Volume, i, j),
					Pool:      fmt.Sprintf("tp_%s_s%d_b%d", r.Volume, i, j),
				})
				found = true
				break
			}
			if !found {
				return nil, errf(http.StatusInternalServerError, msgNoSpace)
			}
		}
		out = append(out, sv)
	}
	return out, nil
}
