package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
)

// handlerFunc runs with Simulator.mu held. A nil body means an empty
// response; a typed nil slice encodes as JSON null, as GD2 sends it.
type handlerFunc func(c *call) (status int, body any, err error)

type route struct {
	name    string // operation name, also the key for per-op faults
	method  string
	pattern string
	h       handlerFunc
	// txnV1 marks operations GD2 runs on its v1 transaction engine, whose
	// failures are code-2 errors.
	txnV1 bool
	desc  string
}

// call is one request being served.
type call struct {
	s       *Simulator
	m       *model
	r       *http.Request
	body    []byte
	serving *peer
	now     time.Time
	header  http.Header
	route   *route
	// fault is the injected fault the handler itself plays out (the
	// others answer before it runs).
	fault faultKind
}

func (c *call) pv(name string) string { return c.r.PathValue(name) }

// decode parses the JSON body; an empty body is a parse error like GD2's.
func (c *call) decode(v any) error {
	if err := json.Unmarshal(c.body, v); err != nil {
		return errf(http.StatusBadRequest, msgParse)
	}
	return nil
}

// decodeOptional accepts an empty body (e.g. volume start).
func (c *call) decodeOptional(v any) error {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return nil
	}
	return c.decode(v)
}

// lock fails with GD2's 409 when an admin call holds one of the keys (GD2
// keys its cluster locks by volume name, peer id, peerid+device and
// "clusteroptions").
func (c *call) lock(keys ...string) error {
	for _, k := range keys {
		if c.m.Locks[k] {
			return lockErr()
		}
	}
	return nil
}

const maxBody = 4 << 20

func (s *Simulator) buildHandler() http.Handler {
	gd2 := http.NewServeMux()
	routes := s.routes()
	for i := range routes {
		gd2.HandleFunc(routes[i].method+" "+routes[i].pattern, s.serve(&routes[i]))
	}
	admin := s.adminMux()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/sim/") {
			admin.ServeHTTP(w, r)
			return
		}
		s.mu.Lock()
		rt := s.routeLocked(r)
		clusterID, servingID := s.m.ClusterID, s.servingIDLocked(rt)
		s.mu.Unlock()
		if rt.drop {
			dropConnection(w)
			return
		}
		h := w.Header()
		h.Set("X-Request-Id", uuid.NewString())
		h.Set("X-Gluster-Cluster-Id", clusterID)
		if servingID != "" {
			h.Set("X-Gluster-Peer-Id", servingID)
		}
		// GD2 authenticates before routing: an unknown path without a token
		// is a 401, not a 404.
		if err := s.authenticate(r); err != nil {
			writeError(w, err)
			return
		}
		gd2.ServeHTTP(w, withRouting(r, rt))
	})
}

// serve wraps one route: fault injection, the model lock, lazy time
// evaluation, persistence and response encoding.
func (s *Simulator) serve(rt *route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		f := s.faults.decide(rt.name)
		if f.latency > 0 {
			select {
			case <-s.clock.After(f.latency):
			case <-r.Context().Done():
				return
			}
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
		if err != nil {
			writeError(w, errf(http.StatusBadRequest, msgParse))
			return
		}
		status, resp, herr := s.run(rt, r, body, f)
		if f.kind == faultHang {
			// The operation has run (or not, on an error); like a GD2 handler
			// outliving the 30 s write timeout, the client gets no answer.
			select {
			case <-s.clock.After(s.faults.hangFor()):
			case <-r.Context().Done():
			}
			panic(http.ErrAbortHandler)
		}
		if herr == errDropped {
			dropConnection(w)
			return
		}
		if herr != nil {
			writeError(w, herr)
			return
		}
		writeJSON(w, status, resp)
	}
}

func (s *Simulator) run(rt *route, r *http.Request, body []byte, f faultDecision) (int, any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.advanceLocked()
	serving, err := s.servingPeerLocked(rt, routingOf(r))
	if err != nil {
		return 0, nil, err
	}
	if serving != nil {
		s.servingID = serving.ID
		defer func() { s.servingID = "" }()
	}
	switch f.kind {
	case faultError:
		if rt.txnV1 && serving != nil {
			return 0, nil, txnErr(serving.ID, rt.name+".Injected", msgInjected)
		}
		return 0, nil, errf(http.StatusInternalServerError, msgInjected)
	case faultConflict:
		return 0, nil, lockErr()
	}
	c := &call{s: s, m: s.m, r: r, body: body, serving: serving, now: s.now(), header: http.Header{}, route: rt, fault: f.kind}
	var before map[quorumKey]bool
	if rt.method != http.MethodGet {
		before = s.quorumSnapshot()
	}
	status, resp, err := rt.h(c)
	if rt.method != http.MethodGet {
		s.recordDestructiveLocked(c, err == nil)
		if err == nil {
			s.checkQuorumLoss(c, before)
			if s.changes == nil {
				s.changes = map[string]int{}
			}
			s.changes[rt.name]++
		}
		// Persist even after failures: a rejected op may still have
		// recorded a violation.
		if perr := s.persistLocked(); perr != nil && err == nil {
			err = errf(http.StatusInternalServerError, "persist state: %v", perr)
		}
	}
	if err == nil {
		return status, &reply{body: resp, header: c.header}, nil
	}
	return status, nil, err
}

// reply carries extra headers (Location) next to the body.
type reply struct {
	body   any
	header http.Header
}

func writeJSON(w http.ResponseWriter, status int, resp any) {
	if rp, ok := resp.(*reply); ok {
		for k, v := range rp.header {
			w.Header()[k] = v
		}
		resp = rp.body
	}
	if resp == nil {
		w.WriteHeader(status)
		return
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(resp); err != nil {
		writeError(w, errf(http.StatusInternalServerError, "encode response: %v", err))
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, err error) {
	ae, ok := err.(*apiError)
	if !ok {
		ae = errf(http.StatusInternalServerError, "%v", err)
	}
	writeJSON(w, ae.Status, wireErrorResp{Errors: ae.Items})
}
