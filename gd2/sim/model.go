package sim

import (
	"sort"
	"strings"
	"time"
)

// The model is plain data with exported fields so it persists as JSON as is.
// Everything in it is guarded by Simulator.mu.

// host is one GD2 process, known by the first DNS label of its address.
type host struct {
	Name    string
	Address string // host:port GD2 peers dial, e.g. "gd2-1:24008"
	Alive   bool
	// Partitioned hosts run but cannot reach the rest of the cluster: their
	// peer shows offline and their bricks are unreachable.
	Partitioned bool
	// PeerID is the member id while the host is in the cluster, "" when it
	// is a standalone one-node cluster of its own.
	PeerID  string
	PID     int
	Devices []physDevice
	// Unserving hosts are alive but outside the management Service (the
	// operator takes a leaving node out of it before deleting its peer,
	// because GD2 refuses to remove the node serving the request).
	Unserving bool `json:",omitempty"`
	// EnvPeerID is the id set by GD2_PEER_ID in the node's environment: GD2
	// then uses it at first start, on join and after leaving, so the host
	// keeps one id. "" = a fresh id on every join and leave.
	EnvPeerID string `json:",omitempty"`
	// OwnID is the id a standalone host without GD2_PEER_ID answers as (its
	// one-member peer list, X-Gluster-Peer-Id): drawn when first needed,
	// forgotten on join and leave, as GD2 saves a fresh id each time.
	OwnID string `json:",omitempty"`
	// LeaseUntil, while set, is when the liveness key of a crashed host
	// expires: until then its peers still see it online.
	LeaseUntil time.Time `json:",omitempty"`
	// Version is the glusterd-version its GD2 binary was built with, what
	// GET /version reports on it; "" = the simulator's Config.Version.
	Version string `json:",omitempty"`
}

// physDevice is a disk a host offers, whether registered in GD2 or not.
// Registered with the loop provisioner, the path is a directory on a file
// system of Size bytes, of which Used are taken by other files.
type physDevice struct {
	Path string
	Size uint64
	Used uint64 `json:",omitempty"`
}

type peer struct {
	ID              string
	Name            string
	Host            string
	PeerAddresses   []string
	ClientAddresses []string
	Metadata        map[string]string
	// Seq orders members by join time; the serving node is the alive member
	// with the lowest Seq.
	Seq int
	// standalone marks the self record of a host serving as a one-node
	// cluster of its own (never stored in model.Peers).
	standalone bool
}

type device struct {
	PeerID      string
	Path        string
	Provisioner string
	State       string
	Total       uint64
	Free        uint64
	// Used is what GD2 stores as used-size for a loop device (see
	// device_loop.go); an LVM device's is Total - Free.
	Used   uint64 `json:",omitempty"`
	Extent uint64
	// LVs are the brick LVs and thin pools (loop: brick images) in the
	// device's volume group, name → bytes. A name there makes the next
	// lvcreate of that name fail; 0-byte entries are what a failed
	// replace-brick leaves behind.
	LVs map[string]uint64 `json:",omitempty"`
}

func (d *device) addLV(name string, size uint64) {
	if d.LVs == nil {
		d.LVs = map[string]uint64{}
	}
	d.LVs[name] = size
}

// orphanBrick is a replaced brick: GD2 no longer lists it, but its process
// keeps running and its file system stays mounted on its node, so statfs
// of its path still answers there and its space is never given back.
type orphanBrick struct {
	PeerID string
	Path   string
	Size   uint64 // statfs capacity
}

type volume struct {
	ID   string
	Name string
	// Type is fixed at create: expand does not recompute it.
	Type        string
	Transport   string
	State       string
	Options     map[string]string
	Metadata    map[string]string
	Capacity    uint64
	Provisioner string
	Factor      float64
	Subvols     []*subvol
	Used        uint64
	// ShdStale: a replace-brick happened since GD2 last wrote the
	// self-heal daemons' volfile, so they do not know the new brick and a
	// full heal queues nothing for it.
	ShdStale  bool `json:",omitempty"`
	Rebalance *rebalance
	Created   time.Time
	// SnapList names the volume's snapshots, oldest first.
	SnapList []string `json:",omitempty"`
}

type subvol struct {
	Name               string
	Type               string // Distribute, Replicate, Disperse
	ReplicaCount       int
	ArbiterCount       int
	DisperseCount      int
	DisperseData       int
	DisperseRedundancy int
	Bricks             []*brick
	// Files counts the entries this replica set holds: the full backlog a
	// replacement brick starts with.
	Files float64
	// SplitBrain lists files in split-brain; only an admin call or a
	// split-brain resolution op clears them.
	SplitBrain []string
}

// A replicate volume's self-heal daemons run a volfile GD2 wrote at the
// volume's start or when cluster/replicate.self-heal-daemon was last set
// on; a replace-brick does not rewrite it (ShdStale), so the daemons do
// not know the new brick.

type brick struct {
	ID     string
	PeerID string
	Host   string
	Path   string
	Type   string // Brick or Arbiter
	// Planner output; empty for bricks given explicitly.
	Device    string
	VG        string
	LV        string
	Pool      string
	Size      uint64 // usable brick size
	TotalSize uint64 // thin pool + metadata, deducted from the device
	Port      int
	PID       int
	// Missing is how many entries this brick lacks and must receive by
	// self-heal. Heal-info reports them on the brick's healthy siblings.
	Missing float64
	// Hidden is how many entries a replacement brick of a replica set
	// lacks that no index records: GD2 never marks a replacement as a
	// heal sink, so heal-info does not count them and no daemon heals
	// them, until a full heal reaches daemons that know the brick and run
	// with data, metadata and entry self-heal on; that moves them to
	// Missing.
	Hidden float64 `json:",omitempty"`
	// AwaitsFullHeal: a replacement that no full heal has reached yet
	// (it may lack data even when Hidden is 0: bytes written with no
	// entries counted).
	AwaitsFullHeal bool `json:",omitempty"`
	// ReconnectAt, while set, is when clients and self-heal reconnect to
	// the brick after its node restarted: until then it is unreachable.
	ReconnectAt time.Time `json:",omitempty"`
	// Unmounted bricks were started before their file system was mounted:
	// offline until a force-start-bricks volume start.
	Unmounted bool `json:",omitempty"`
}

type rebalance struct {
	ID      string
	Option  string
	Started time.Time
	Stopped bool
	Cmd     int
	Nodes   []string
}

type event struct {
	ID     string
	Name   string
	Data   map[string]string
	Origin string
	Time   time.Time
}

// model is the whole simulated world; it is what persistence writes.
type model struct {
	ClusterID      string
	Hosts          map[string]*host
	Peers          map[string]*peer
	Devices        map[string]*device // key peerid + device path
	Volumes        map[string]*volume
	Snapshots      map[string]*snapshot `json:",omitempty"`
	ClusterOptions map[string]string
	Events         []event
	Orphans        []orphanBrick `json:",omitempty"`
	Violations     []Violation
	Locks          map[string]bool
	LastTick       time.Time
	NextPort       int
	NextSeq        int
}

func newModel() *model {
	return &model{
		Hosts:          map[string]*host{},
		Peers:          map[string]*peer{},
		Devices:        map[string]*device{},
		Volumes:        map[string]*volume{},
		ClusterOptions: map[string]string{},
		Locks:          map[string]bool{},
		NextPort:       49152,
	}
}

func deviceKey(peerID, path string) string { return peerID + path }

func (p *peer) zone() string {
	if z := p.Metadata["_zone"]; z != "" {
		return z
	}
	return p.ID
}

// peerOnline is what GD2 reports as "online": the node's liveness key is
// in the store, because its process runs and reaches the store, or it
// crashed less than LivenessTTL ago. The liveness gate, the planner and
// the peer list read this.
func (m *model) peerOnline(id string) bool {
	p := m.Peers[id]
	if p == nil {
		return false
	}
	h := m.Hosts[p.Host]
	return h != nil && (h.Alive || !h.LeaseUntil.IsZero()) && !h.Partitioned && h.PeerID == id
}

// processUp says the node's GD2 really runs and reaches the cluster: what
// running a step there, serving a request or its bricks need.
func (m *model) processUp(id string) bool {
	p := m.Peers[id]
	if p == nil {
		return false
	}
	h := m.Hosts[p.Host]
	return h != nil && h.Alive && !h.Partitioned && h.PeerID == id
}

// members returns the cluster members ordered by join order.
func (m *model) members() []*peer {
	out := make([]*peer, 0, len(m.Peers))
	for _, p := range m.Peers {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// firstOnline is the earliest-joined online member: the origin recorded
// for events no request caused (liveness changes from admin calls).
func (m *model) firstOnline() *peer {
	for _, p := range m.members() {
		if m.processUp(p.ID) {
			return p
		}
	}
	return nil
}

func (m *model) peerHasBricks(id string) bool {
	for _, v := range m.Volumes {
		for _, sv := range v.Subvols {
			for _, b := range sv.Bricks {
				if b.PeerID == id {
					return true
				}
			}
		}
	}
	return false
}

func (m *model) sortedVolumes() []*volume {
	out := make([]*volume, 0, len(m.Volumes))
	for _, v := range m.Volumes {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func (m *model) sortedDevices() []*device {
	out := make([]*device, 0, len(m.Devices))
	for _, d := range m.Devices {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].PeerID+"/"+out[i].Path < out[j].PeerID+"/"+out[j].Path
	})
	return out
}

// hostName is the first DNS label of an address' host part: the identity
// of a GD2 process (a pod's hostname) regardless of the domain used.
func hostName(addr string) string {
	h := addrHost(addr)
	if i := strings.IndexByte(h, '.'); i >= 0 {
		h = h[:i]
	}
	return h
}

// addrHost strips a port from host[:port] (IPv6 in brackets allowed).
func addrHost(addr string) string {
	if strings.HasPrefix(addr, "[") {
		if i := strings.IndexByte(addr, ']'); i > 0 {
			return addr[1:i]
		}
	}
	if i := strings.LastIndexByte(addr, ':'); i >= 0 && strings.Count(addr, ":") == 1 {
		return addr[:i]
	}
	return addr
}

// withPeerPort adds GD2's peer port when the address has none.
func withPeerPort(addr string) string {
	if strings.Count(addr, ":") == 1 || strings.HasPrefix(addr, "[") && strings.Contains(addr, "]:") {
		return addr
	}
	if strings.Contains(addr, ":") {
		return "[" + addr + "]:24008"
	}
	return addr + ":24008"
}

func devicePaths(n int) []string {
	out := make([]string, n)
	for i := range n {
		out[i] = "/dev/sd" + string(rune('b'+i))
	}
	return out
}

func cloneMap(in map[string]string) map[string]string {
	out := make(map[string]string, len(in))
	for k, v := range in {
		out[k] = v
	}
	return out
}

func (v *volume) bricks() []*brick {
	var out []*brick
	for _, sv := range v.Subvols {
		out = append(out, sv.Bricks...)
	}
	return out
}
