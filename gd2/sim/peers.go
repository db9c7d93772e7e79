package sim

import (
	"fmt"
	"net"
	"net/http"

	"github.com/google/uuid"
)

func (s *Simulator) wirePeerLocked(p *peer) wirePeer {
	w := wirePeer{
		ID:              p.ID,
		Name:            p.Name,
		PeerAddresses:   append([]string(nil), p.PeerAddresses...),
		ClientAddresses: append([]string(nil), p.ClientAddresses...),
		Metadata:        cloneMap(p.Metadata),
		Online:          s.m.peerOnline(p.ID),
	}
	if w.Online {
		w.PID = s.m.Hosts[p.Host].PID
	}
	return w
}

func validUUID(s string) bool {
	_, err := uuid.Parse(s)
	return err == nil && len(s) == 36
}

func (c *call) peerArg() (*peer, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return nil, errf(http.StatusBadRequest, msgInvalidPeerID)
	}
	p := c.m.Peers[id]
	if p == nil {
		return nil, errf(http.StatusNotFound, msgPeerNotFound)
	}
	return p, nil
}

// peerList is ordered by UUID string (etcd prefix scan); a filter that
// matches nothing yields JSON null.
func peerList(c *call) (int, any, error) {
	if c.serving.standalone {
		return standalonePeerList(c)
	}
	key, value, hasKey, hasValue := listFilter(c.r)
	var out []wirePeer
	for _, p := range sortedPeers(c.m) {
		for range filterMatches(p.Metadata, key, value, hasKey, hasValue) {
			out = append(out, c.s.wirePeerLocked(p))
		}
	}
	if out == nil && !hasKey && !hasValue {
		out = []wirePeer{}
	}
	return http.StatusOK, out, nil
}

func peerGet(c *call) (int, any, error) {
	if c.serving.standalone {
		return standalonePeerGet(c)
	}
	p, err := c.peerArg()
	if err != nil {
		return 0, nil, err
	}
	return http.StatusOK, c.s.wirePeerLocked(p), nil
}

func peerAdd(c *call) (int, any, error) {
	var req wirePeerAddReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	if len(req.Addresses) == 0 {
		return 0, nil, errf(http.StatusBadRequest, msgNoHostnames)
	}
	if err := checkUserMetadata(req.Metadata); err != nil {
		return 0, nil, err
	}
	addr := req.Addresses[0]
	name := hostName(addr)
	if name == "" {
		return 0, nil, errf(http.StatusBadRequest, msgBadRemoteAddr)
	}
	addr = withPeerPort(addr)
	// Duplicates are found by the exact host:port string among the
	// members' peer addresses: "gd2-2" is "gd2-2:24008", but
	// "gd2-2.ns.svc:24008" is another address and is tried as a join.
	for _, p := range sortedPeers(c.m) {
		if inList(p.PeerAddresses, addr) {
			return 0, nil, errf(http.StatusConflict, "Peer exists with given addresses (ID: %s)", p.ID)
		}
	}
	h := c.m.Hosts[name]
	if isLoopback(addrHost(addr)) {
		// Loopback names the serving node itself.
		h = c.m.Hosts[c.serving.Host]
	}
	if h != nil && h.PeerID != "" && c.m.Peers[h.PeerID] != nil {
		// The target GD2 already belongs to a cluster with other peers (the
		// serving node's own among them): it refuses to join.
		if h.Alive && !h.Partitioned {
			return 0, nil, errf(http.StatusInternalServerError, msgOtherCluster)
		}
		return 0, nil, errf(http.StatusInternalServerError, msgConnect)
	}
	if h == nil && !c.s.cfg.StrictHosts {
		h = c.s.ensureHostLocked(name, addr)
		h.Alive = true
		h.PID = c.s.newPID()
	}
	if h == nil || !h.Alive || h.Partitioned {
		return 0, nil, errf(http.StatusInternalServerError, msgConnect)
	}
	p := c.s.joinLocked(h, addr, req.Zone, req.Metadata)
	w := c.s.wirePeerLocked(p)
	// GD2's add response always says online, without a pid.
	w.Online, w.PID = true, 0
	c.header.Set("Location", "/v1/peers/"+p.ID)
	return http.StatusCreated, w, nil
}

func peerEdit(c *call) (int, any, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return 0, nil, errf(http.StatusBadRequest, msgPeerEditBadID)
	}
	var req wirePeerEditReq
	if err := c.decode(&req); err != nil {
		return 0, nil, err
	}
	for k := range req.Metadata {
		if len(k) > 0 && k[0] == '_' {
			return 0, nil, errf(http.StatusBadRequest, msgReservedKey)
		}
	}
	if err := c.lock(id); err != nil {
		return 0, nil, err
	}
	p := c.m.Peers[id]
	if p == nil {
		return 0, nil, errf(http.StatusInternalServerError, msgPeerEditFailed)
	}
	merged := cloneMap(p.Metadata)
	for k, v := range req.Metadata {
		merged[k] = v
	}
	if metadataSize(merged) > maxMetadataSize {
		return 0, nil, errf(http.StatusInternalServerError, msgPeerEditFailed)
	}
	if req.Zone != "" {
		merged["_zone"] = req.Zone
	}
	p.Metadata = merged
	w := c.s.wirePeerLocked(p)
	// GD2's edit response says offline, without a pid, even for a live peer.
	w.Online, w.PID = false, 0
	return http.StatusOK, w, nil
}

// peerDelete checks in GD2's order: uuid, existence, self, liveness,
// bricks. The bricks check is also recorded as a violation attempt.
func peerDelete(c *call) (int, any, error) {
	p, err := c.peerArg()
	if err != nil {
		return 0, nil, err
	}
	hasBricks := c.m.peerHasBricks(p.ID)
	if hasBricks {
		// Deleting a peer that holds bricks would orphan them; GD2 refuses
		// below, but an operator that tries has a bug worth seeing.
		c.s.recordViolationLocked(c, Violation{
			Kind:     ViolationPeerDeleteWithBricks,
			PeerID:   p.ID,
			Rejected: true,
			Detail:   fmt.Sprintf("peer %s (%s) still holds bricks", p.ID, p.Name),
		})
	}
	if p.ID == c.serving.ID {
		return 0, nil, errf(http.StatusBadRequest, msgRemoveSelf)
	}
	if !c.m.peerOnline(p.ID) {
		return 0, nil, errf(http.StatusInternalServerError, msgPeerNotAlive)
	}
	if hasBricks {
		return 0, nil, errf(http.StatusForbidden, msgPeerHasBricks)
	}
	if err := c.lock(p.ID); err != nil {
		return 0, nil, err
	}
	delete(c.m.Peers, p.ID)
	// The removed node comes back as a one-node cluster, with a fresh id
	// (or its GD2_PEER_ID); its device records stay in the store, as in GD2.
	if h := c.m.Hosts[p.Host]; h != nil && h.PeerID == p.ID {
		h.PeerID, h.OwnID = "", ""
	}
	c.s.recordEventLocked("peer.removed", map[string]string{"peer.id": p.ID, "peer.name": p.Name})
	return http.StatusNoContent, nil, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func sortedPeers(m *model) []*peer {
	out := make([]*peer, 0, len(m.Peers))
	for _, p := range m.Peers {
		out = append(out, p)
	}
	sortBy(out, func(p *peer) string { return p.ID })
	return out
}
