package sim

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"time"
)

// Hosts are GD2 processes. A host is a member of the simulated cluster
// (PeerID set) or a standalone one-node cluster. Liveness comes from admin
// calls, the Go API, or the Kubernetes link (pod Ready).

// HostSpec describes a host for UpsertHost.
type HostSpec struct {
	// Name is the first DNS label of the address (a pod's hostname).
	Name string `json:"name"`
	// Address is what peers dial; default "<name>:24008".
	Address string `json:"address,omitempty"`
	Alive   bool   `json:"alive"`
	// Unserving: alive, but outside the management Service, so requests
	// not addressed to it never reach it (see host.Unserving).
	Unserving bool `json:"unserving,omitempty"`
	// PeerID is the GD2_PEER_ID of the node's environment ("" = unset): the
	// host then has that id at first start, as the member id when it joins
	// and again standalone after its peer is deleted.
	PeerID string `json:"peerId,omitempty"`
	// Version is the glusterd-version the host's GD2 binary was built
	// with, what GET /version reports on it ("" = Config.Version). A
	// restart on another build (a pod on a new image) changes it.
	Version string `json:"version,omitempty"`
}

// HostInfo is a host as the admin API reports it.
type HostInfo struct {
	Name        string `json:"name"`
	Address     string `json:"address"`
	Alive       bool   `json:"alive"`
	Partitioned bool   `json:"partitioned"`
	PeerID      string `json:"peerId,omitempty"`
	// EnvPeerID is the host's GD2_PEER_ID, "" when unset.
	EnvPeerID string            `json:"envPeerId,omitempty"`
	Devices   map[string]uint64 `json:"devices"`
}

func (s *Simulator) ensureHostLocked(name, address string) *host {
	h := s.m.Hosts[name]
	if h == nil {
		h = &host{Name: name, Address: address}
		for _, p := range devicePaths(s.cfg.DevicesPerPeer) {
			h.Devices = append(h.Devices, physDevice{Path: p, Size: s.cfg.DeviceSize})
		}
		// A GD2 pod of anthill's also sees its brick claims, at the paths
		// anthill gives them in the container (objects.ClaimDevicePaths);
		// the privileged container sees the host's disks besides.
		for i := range s.cfg.DevicesPerPeer {
			h.Devices = append(h.Devices, physDevice{Path: fmt.Sprintf("/dev/anthill/brick-%d", i), Size: s.cfg.DeviceSize})
		}
		s.m.Hosts[name] = h
	}
	if address != "" {
		h.Address = address
	}
	if h.Address == "" {
		h.Address = name + ":24008"
	}
	return h
}

// joinLocked makes h a member with a fresh UUID: a joining GD2 gets a new
// id, and the one it had standing alone is gone; unless GD2_PEER_ID is set,
// which GD2 uses at join too.
func (s *Simulator) joinLocked(h *host, addrUsed, zone string, md map[string]string) *peer {
	id := h.EnvPeerID
	if id == "" {
		id = s.newUUID()
	}
	addrs := []string{addrUsed}
	if h.Address != addrUsed {
		addrs = append(addrs, h.Address)
	}
	p := &peer{
		ID:              id,
		Name:            h.Name,
		Host:            h.Name,
		PeerAddresses:   addrs,
		ClientAddresses: []string{addrHost(h.Address) + ":24007"},
		Metadata:        cloneMap(md),
		Seq:             s.m.NextSeq,
	}
	s.m.NextSeq++
	if zone == "" {
		zone = id
	}
	p.Metadata["_zone"] = zone
	s.m.Peers[id] = p
	h.PeerID, h.OwnID = id, ""
	s.recordEventLocked("peer.added", map[string]string{"peer.id": id, "peer.name": h.Name})
	return p
}

// bootstrapLocked mimics the management Service reaching the first GD2
// pod: while the cluster has no member, the first alive host is a one-node
// cluster containing itself, so it becomes member #1.
func (s *Simulator) bootstrapLocked() {
	if len(s.m.Peers) > 0 {
		return
	}
	names := make([]string, 0, len(s.m.Hosts))
	for n := range s.m.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if h := s.m.Hosts[n]; h.Alive && !h.Partitioned {
			s.joinLocked(h, h.Address, "", nil)
			return
		}
	}
}

// setHostAliveLocked changes liveness after settling time-dependent state
// up to now, so heal accounting uses the old liveness until this instant.
// timed applies GD2's restart timing (BrickReconnect,
// UnmountedBrickStarts) to a host coming back.
func (s *Simulator) setHostAliveLocked(h *host, alive, timed bool) {
	s.advanceLocked()
	if alive {
		// A clean stop or a restart replaces a crashed process's lease.
		h.LeaseUntil = time.Time{}
	}
	if h.Alive == alive {
		return
	}
	h.Alive = alive
	if alive {
		h.PID = s.newPID()
		s.restartBricksLocked(h)
		if timed {
			s.restartTimingLocked(h)
		}
		s.recordEventLocked("peer.connected.store", map[string]string{"peer.name": h.Name})
	} else {
		h.PID = 0
		s.recordEventLocked("peer.disconnected.store", map[string]string{"peer.name": h.Name})
	}
	s.bootstrapLocked()
}

// restartBricksLocked gives the bricks of a returning host new pids and
// ports, as glusterd2 respawns glusterfsd processes.
func (s *Simulator) restartBricksLocked(h *host) {
	if h.PeerID == "" {
		return
	}
	for _, v := range s.m.Volumes {
		if v.State != volStarted {
			continue
		}
		for _, b := range v.bricks() {
			if b.PeerID == h.PeerID {
				s.startBrickLocked(b)
			}
		}
	}
}

// UpsertHost creates or updates a host (the Kubernetes link calls it for
// every pod it sees).
func (s *Simulator) UpsertHost(spec HostSpec) error {
	if spec.Name == "" {
		return fmt.Errorf("host name is required")
	}
	if spec.PeerID != "" && !validUUID(spec.PeerID) {
		return fmt.Errorf("host %s: GD2_PEER_ID %q is not a UUID", spec.Name, spec.PeerID)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.ensureHostLocked(spec.Name, spec.Address)
	h.Unserving = spec.Unserving
	h.EnvPeerID = strings.ToLower(spec.PeerID)
	h.Version = spec.Version
	s.setHostAliveLocked(h, spec.Alive, true)
	return s.persistLocked()
}

// SetHostAlive sets the liveness of a known host.
func (s *Simulator) SetHostAlive(name string, alive bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m.Hosts[name]
	if h == nil {
		return fmt.Errorf("unknown host %q", name)
	}
	s.setHostAliveLocked(h, alive, false)
	return s.persistLocked()
}

// SetPeerAlive sets the liveness of the host behind a member peer.
func (s *Simulator) SetPeerAlive(peerID string, alive bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.hostOfPeerLocked(peerID)
	if err != nil {
		return err
	}
	s.setHostAliveLocked(h, alive, false)
	return s.persistLocked()
}

// RestartPeer stops and starts a peer's GD2: it comes back with a new pid
// and its bricks with new ports.
func (s *Simulator) RestartPeer(peerID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.hostOfPeerLocked(peerID)
	if err != nil {
		return err
	}
	s.setHostAliveLocked(h, false, false)
	s.setHostAliveLocked(h, true, true)
	return s.persistLocked()
}

// PartitionPeer isolates (or reconnects) a peer: its process keeps running
// but the cluster sees it offline and its bricks unreachable.
func (s *Simulator) PartitionPeer(peerID string, partitioned bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, err := s.hostOfPeerLocked(peerID)
	if err != nil {
		return err
	}
	s.advanceLocked()
	h.Partitioned = partitioned
	if !partitioned {
		s.restartBricksLocked(h)
	}
	return s.persistLocked()
}

// SetDeviceSizes sets the disks a host offers (device path → bytes).
// Registered devices keep their recorded sizes, as a VG does not grow by
// itself.
func (s *Simulator) SetDeviceSizes(hostName string, sizes map[string]uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m.Hosts[hostName]
	if h == nil {
		return fmt.Errorf("unknown host %q", hostName)
	}
	paths := make([]string, 0, len(sizes))
	for p := range sizes {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	h.Devices = h.Devices[:0]
	for _, p := range paths {
		h.Devices = append(h.Devices, physDevice{Path: p, Size: sizes[p]})
	}
	return s.persistLocked()
}

// SetHostFSUsed sets the bytes other files take on the file system of a
// path a host offers: what a loop-provisioner device registered on that
// directory sees as already used.
func (s *Simulator) SetHostFSUsed(hostName, path string, used uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.m.Hosts[hostName]
	if h == nil {
		return fmt.Errorf("unknown host %q", hostName)
	}
	for i := range h.Devices {
		if h.Devices[i].Path == path {
			h.Devices[i].Used = used
			return s.persistLocked()
		}
	}
	return fmt.Errorf("host %s offers no %s", hostName, path)
}

// PeerIDOfHost returns the member id of a host, "" when standalone.
func (s *Simulator) PeerIDOfHost(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h := s.m.Hosts[name]; h != nil {
		return h.PeerID
	}
	return ""
}

// Hosts lists the hosts, sorted by name.
func (s *Simulator) Hosts() []HostInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	names := make([]string, 0, len(s.m.Hosts))
	for n := range s.m.Hosts {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]HostInfo, 0, len(names))
	for _, n := range names {
		h := s.m.Hosts[n]
		hi := HostInfo{Name: h.Name, Address: h.Address, Alive: h.Alive, Partitioned: h.Partitioned, PeerID: h.PeerID, EnvPeerID: h.EnvPeerID, Devices: map[string]uint64{}}
		for _, d := range h.Devices {
			hi.Devices[d.Path] = d.Size
		}
		out = append(out, hi)
	}
	return out
}

func (s *Simulator) hostOfPeerLocked(peerID string) (*host, error) {
	p := s.m.Peers[peerID]
	if p == nil {
		return nil, errf(http.StatusNotFound, msgPeerNotFound)
	}
	h := s.m.Hosts[p.Host]
	if h == nil {
		return nil, fmt.Errorf("peer %s has no host", peerID)
	}
	return h, nil
}
