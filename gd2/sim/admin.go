package sim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sort"
	"strings"
)

// Admin routes under /sim/ are not part of GD2: they drive the simulated
// world (liveness, writes, split-brain, faults, locks) and expose the
// invariant checker. They need no token. Errors use GD2's envelope.

func (s *Simulator) adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	h := func(pattern string, fn func(r *http.Request) (int, any, error)) {
		mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
			status, body, err := fn(r)
			if err != nil {
				var ae *apiError
				if !errors.As(err, &ae) {
					ae = errf(http.StatusBadRequest, "%v", err)
				}
				writeError(w, ae)
				return
			}
			writeJSON(w, status, body)
		})
	}
	ok := func(err error) (int, any, error) {
		if err != nil {
			return 0, nil, err
		}
		return http.StatusNoContent, nil, nil
	}

	h("GET /sim/violations", func(*http.Request) (int, any, error) { return http.StatusOK, s.Violations(), nil })
	h("DELETE /sim/violations", func(*http.Request) (int, any, error) { s.ResetViolations(); return http.StatusNoContent, nil, nil })

	h("GET /sim/changes", func(*http.Request) (int, any, error) { return http.StatusOK, s.Changes(), nil })
	h("GET /sim/destructive", func(*http.Request) (int, any, error) { return http.StatusOK, s.DestructiveCalls(), nil })
	h("GET /sim/hosts", func(*http.Request) (int, any, error) { return http.StatusOK, s.Hosts(), nil })
	h("POST /sim/hosts", func(r *http.Request) (int, any, error) {
		var spec HostSpec
		if err := decodeAdmin(r, &spec); err != nil {
			return 0, nil, err
		}
		return ok(s.UpsertHost(spec))
	})
	h("POST /sim/hosts/{name}/{action}", func(r *http.Request) (int, any, error) {
		name := r.PathValue("name")
		switch r.PathValue("action") {
		case "up":
			return ok(s.SetHostAlive(name, true))
		case "down":
			return ok(s.SetHostAlive(name, false))
		case "devices":
			var sizes map[string]uint64
			if err := decodeAdmin(r, &sizes); err != nil {
				return 0, nil, err
			}
			return ok(s.SetDeviceSizes(name, sizes))
		}
		return 0, nil, errf(http.StatusNotFound, "unknown host action")
	})

	h("POST /sim/peers/{id}/{action}", func(r *http.Request) (int, any, error) {
		id := r.PathValue("id")
		switch r.PathValue("action") {
		case "up":
			return ok(s.SetPeerAlive(id, true))
		case "down":
			return ok(s.SetPeerAlive(id, false))
		case "crash":
			// Killed: peers see it offline only after LivenessTTL.
			return ok(s.CrashPeer(id))
		case "restart":
			return ok(s.RestartPeer(id))
		case "partition":
			return ok(s.PartitionPeer(id, true))
		case "unpartition":
			return ok(s.PartitionPeer(id, false))
		}
		return 0, nil, errf(http.StatusNotFound, "unknown peer action")
	})

	h("POST /sim/volumes/{v}/write", func(r *http.Request) (int, any, error) {
		var req struct {
			Entries float64 `json:"entries"`
		}
		if err := decodeAdmin(r, &req); err != nil {
			return 0, nil, err
		}
		return ok(s.Write(r.PathValue("v"), req.Entries))
	})
	h("POST /sim/volumes/{v}/split-brain", func(r *http.Request) (int, any, error) {
		var req struct {
			Subvol int      `json:"subvol"`
			Files  []string `json:"files"`
		}
		if err := decodeAdmin(r, &req); err != nil {
			return 0, nil, err
		}
		return ok(s.InjectSplitBrain(r.PathValue("v"), req.Subvol, req.Files))
	})
	h("DELETE /sim/volumes/{v}/split-brain", func(r *http.Request) (int, any, error) {
		return ok(s.ClearSplitBrain(r.PathValue("v")))
	})
	h("POST /sim/volumes/{v}/usage", func(r *http.Request) (int, any, error) {
		var req struct {
			Used uint64 `json:"used"`
		}
		if err := decodeAdmin(r, &req); err != nil {
			return 0, nil, err
		}
		return ok(s.SetVolumeUsed(r.PathValue("v"), req.Used))
	})

	h("GET /sim/faults", func(*http.Request) (int, any, error) { return http.StatusOK, s.CurrentFaults(), nil })
	h("PUT /sim/faults", func(r *http.Request) (int, any, error) {
		var f Faults
		if err := decodeAdmin(r, &f); err != nil {
			return 0, nil, err
		}
		return ok(s.SetFaults(f))
	})

	h("GET /sim/locks", func(*http.Request) (int, any, error) { return http.StatusOK, s.Locks(), nil })
	h("POST /sim/locks/{key...}", func(r *http.Request) (int, any, error) {
		s.HoldLock(r.PathValue("key"), true)
		return http.StatusNoContent, nil, nil
	})
	h("DELETE /sim/locks/{key...}", func(r *http.Request) (int, any, error) {
		s.HoldLock(r.PathValue("key"), false)
		return http.StatusNoContent, nil, nil
	})

	h("POST /sim/save", func(*http.Request) (int, any, error) { return ok(s.Save()) })
	h("GET /sim/state", func(*http.Request) (int, any, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.advanceLocked()
		b, err := json.Marshal(s.m)
		return http.StatusOK, json.RawMessage(b), err
	})
	return mux
}

func decodeAdmin(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody))
	if err != nil {
		return errf(http.StatusBadRequest, msgParse)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errf(http.StatusBadRequest, msgParse)
	}
	return nil
}

// HoldLock takes (or releases) a GD2 cluster lock key as if another
// transaction held it: operations needing it answer 409. Keys are GD2's:
// a volume name, a peer id, peer id + device path, "clusteroptions".
func (s *Simulator) HoldLock(key string, held bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if held {
		s.m.Locks[key] = true
	} else {
		delete(s.m.Locks, key)
	}
}

// Locks lists the held lock keys.
func (s *Simulator) Locks() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.m.Locks))
	for k := range s.m.Locks {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Changes counts the configuration-altering GD2 calls (every route but a
// GET) that succeeded since the simulator started, by operation name
// (ReplaceBrick, DeletePeer, DeviceEdit, ...): what a test compares with
// the operator's audit log. It is not persisted across a restart.
func (s *Simulator) Changes() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]int, len(s.changes))
	for k, v := range s.changes {
		out[k] = v
	}
	return out
}
