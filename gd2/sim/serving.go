package sim

import (
	"context"
	"net"
	"net/http"
	"strings"
)

// Which GD2 answers a request.
//
// Every simulated host is reachable on its own address, as every GD2 pod is
// on its pod DNS name. The request's Host header says which: its host part
// (port stripped), cut to the first DNS label, names a simulated host
// ("node-a-0.gc-nodes.ns.svc:24007" is host "node-a-0"). Anything else (an
// IP address such as httptest's 127.0.0.1, "localhost", a management
// Service name) reaches an arbitrary serving member, drawn per request from
// the seeded generator, as a load-balanced Service spreads connections.
//
// Addressed directly:
//   - a down host drops the connection without an HTTP answer (the client
//     sees a transport error, as for an unreachable pod);
//   - a partitioned host still runs: it answers what needs no store (ping,
//     version, endpoints) and fails everything else with 500
//     msgStoreTimeout, as its store cannot reach a quorum;
//   - a standalone host (not a member of the simulated cluster) is a
//     one-node cluster of its own: it answers ping, version, endpoints and
//     its one-member peer list (and GET of its own peer); the rest of its
//     store is not modelled (503 msgStandalone).

type routeKey struct{}

// routing is the decision made for one request before authentication (the
// serving node's id is in every response's headers, 401s included).
type routing struct {
	host string // serving host's name, "" when nobody can serve
	drop bool   // addressed host is down: no HTTP response
}

// addressedHost returns the simulated host a Host header names, or nil.
func (m *model) addressedHost(hostHeader string) *host {
	h := addrHost(hostHeader)
	if h == "" || net.ParseIP(h) != nil {
		return nil
	}
	if i := strings.IndexByte(h, '.'); i >= 0 {
		h = h[:i]
	}
	return m.Hosts[h]
}

// routeLocked picks the host serving r.
func (s *Simulator) routeLocked(r *http.Request) routing {
	if h := s.m.addressedHost(r.Host); h != nil {
		if !h.Alive {
			return routing{drop: true}
		}
		return routing{host: h.Name}
	}
	var pool []*peer
	for _, p := range s.m.members() {
		if h := s.m.Hosts[p.Host]; h != nil && !h.Unserving && s.m.processUp(p.ID) {
			pool = append(pool, p)
		}
	}
	if len(pool) == 0 {
		return routing{}
	}
	return routing{host: pool[s.rng.IntN(len(pool))].Host}
}

// servingIDLocked is the peer id a routed host reports: its member id, or
// its own id when standalone.
func (s *Simulator) servingIDLocked(rt routing) string {
	h := s.m.Hosts[rt.host]
	if h == nil {
		return ""
	}
	if h.PeerID != "" {
		return h.PeerID
	}
	return s.standaloneIDLocked(h)
}

// standaloneIDLocked is the id of a host standing alone: its GD2_PEER_ID,
// else the id it drew at start or when it left the cluster (drawn here,
// on first use, so hosts nobody addresses draw nothing).
func (s *Simulator) standaloneIDLocked(h *host) string {
	if h.EnvPeerID != "" {
		return h.EnvPeerID
	}
	if h.OwnID == "" {
		h.OwnID = s.newUUID()
	}
	return h.OwnID
}

// standaloneRoute lists the routes a standalone GD2 answers from its own
// one-node store: everything else is 503 msgStandalone.
func standaloneRoute(rt *route) bool {
	return storeless(rt) || rt.name == "GetPeers" || rt.name == "GetPeer"
}

func withRouting(r *http.Request, rt routing) *http.Request {
	return r.WithContext(context.WithValue(r.Context(), routeKey{}, rt))
}

func routingOf(r *http.Request) routing {
	rt, _ := r.Context().Value(routeKey{}).(routing)
	return rt
}

// dropConnection closes the client's connection without an HTTP response.
func dropConnection(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			_ = conn.Close()
			return
		}
	}
	panic(http.ErrAbortHandler)
}

// storeless routes read nothing from GD2's store, so a partitioned or
// standalone GD2 answers them like any other.
func storeless(rt *route) bool {
	return rt.name == "Ping" || rt.name == "Version" || rt.name == "Endpoints"
}

// servingPeerLocked resolves the routing decision against the current
// model, for a route about to run.
func (s *Simulator) servingPeerLocked(rt *route, r routing) (*peer, error) {
	h := s.m.Hosts[r.host]
	if h == nil {
		return nil, errf(http.StatusServiceUnavailable, msgNoServer)
	}
	if !h.Alive {
		return nil, errDropped
	}
	p := s.m.Peers[h.PeerID]
	if p == nil || h.PeerID == "" {
		switch {
		case storeless(rt):
			return nil, nil
		case standaloneRoute(rt):
			return s.standalonePeerLocked(h), nil
		}
		return nil, errf(http.StatusServiceUnavailable, msgStandalone)
	}
	if h.Partitioned && !storeless(rt) {
		return nil, errf(http.StatusInternalServerError, msgStoreTimeout)
	}
	return p, nil
}

// errDropped makes serve close the connection without an answer.
var errDropped = &apiError{Status: -1}
