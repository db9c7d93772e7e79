package sim

import "net/http"

// A GD2 that is not (or no longer) a member of the simulated cluster runs
// as a one-node cluster of its own: at first start, before anyone adds
// it, and after its peer was deleted (the leave RPC makes it reset its
// store and add itself again). Its peer list is then itself alone, under
// its own id: GD2_PEER_ID when set, else the id it drew (see
// standaloneIDLocked). The simulator serves that list and GET of that one
// peer; the rest of a lone store (its volumes, devices) is not modelled.

// standalonePeerLocked is the peer record a standalone host keeps about
// itself. It is not a member: it is never stored in the model's peers.
func (s *Simulator) standalonePeerLocked(h *host) *peer {
	id := s.standaloneIDLocked(h)
	return &peer{
		ID: id, Name: h.Name, Host: h.Name,
		PeerAddresses:   []string{h.Address},
		ClientAddresses: []string{addrHost(h.Address) + ":24007"},
		// A fresh store's self entry: the zone defaults to the own id.
		Metadata:   map[string]string{"_zone": id},
		standalone: true,
	}
}

// wireStandalonePeerLocked is the lone node as its own peer list shows it:
// online (it publishes its own liveness), with its pid.
func (s *Simulator) wireStandalonePeerLocked(p *peer) wirePeer {
	h := s.m.Hosts[p.Host]
	return wirePeer{
		ID: p.ID, Name: p.Name,
		PeerAddresses:   append([]string(nil), p.PeerAddresses...),
		ClientAddresses: append([]string(nil), p.ClientAddresses...),
		Metadata:        cloneMap(p.Metadata),
		Online:          true,
		PID:             h.PID,
	}
}

// standalonePeerList answers GET /v1/peers on a lone node: itself, with
// the same filter rules and null for a filter matching nothing.
func standalonePeerList(c *call) (int, any, error) {
	key, value, hasKey, hasValue := listFilter(c.r)
	var out []wirePeer
	for range filterMatches(c.serving.Metadata, key, value, hasKey, hasValue) {
		out = append(out, c.s.wireStandalonePeerLocked(c.serving))
	}
	return http.StatusOK, out, nil
}

// standalonePeerGet answers GET /v1/peers/{id} on a lone node: only its
// own id is known.
func standalonePeerGet(c *call) (int, any, error) {
	id := c.pv("peerid")
	if !validUUID(id) {
		return 0, nil, errf(http.StatusBadRequest, msgInvalidPeerID)
	}
	if id != c.serving.ID {
		return 0, nil, errf(http.StatusNotFound, msgPeerNotFound)
	}
	return http.StatusOK, c.s.wireStandalonePeerLocked(c.serving), nil
}
