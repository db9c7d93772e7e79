package sim

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"
)

const testSecret = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

var epoch = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)

type harness struct {
	t     *testing.T
	sim   *Simulator
	srv   *httptest.Server
	clock *clocktesting.FakeClock
	// via, when set, is the simulated host every request is addressed to
	// (its Host header); "" = the server's IP, which reaches a random
	// serving member.
	via string
}

// newHarness starts a simulator behind a real HTTP server with a fake
// clock. Auth is on unless cfg.Secret is set to "-".
func newHarness(t *testing.T, cfg Config) *harness {
	t.Helper()
	fc := clocktesting.NewFakeClock(epoch)
	cfg.Clock = fc
	switch cfg.Secret {
	case "":
		cfg.Secret = testSecret
	case "-":
		cfg.Secret = ""
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() {
		srv.Close()
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &harness{t: t, sim: s, srv: srv, clock: fc}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.body, v); err != nil {
		t.Fatalf("decode %s: %v", r.body, err)
	}
}

// errMsg returns the first error message of a GD2 error envelope.
func (r response) errMsg(t *testing.T) string {
	t.Helper()
	var e wireErrorResp
	r.decode(t, &e)
	if len(e.Errors) == 0 {
		t.Fatalf("no errors in %s", r.body)
	}
	return e.Errors[0].Message
}

// do sends an authenticated request (path may carry a query) to h.via.
func (h *harness) do(method, path string, body any) response {
	h.t.Helper()
	return h.doAt(h.via, method, path, body)
}

// doAt sends an authenticated request addressed to one simulated host
// ("" = any serving member).
func (h *harness) doAt(host, method, path string, body any) response {
	h.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			h.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if host != "" {
		req.Host = host + ":24007"
	}
	if h.sim.cfg.Secret != "" {
		tok, err := Token(h.sim.cfg.Secret, method, req.URL.Path, h.clock.Now(), 120*time.Second)
		if err != nil {
			h.t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	return h.send(req)
}

func (h *harness) send(req *http.Request) response {
	h.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: b}
}

func (h *harness) must(status int, method, path string, body any) response {
	h.t.Helper()
	return h.mustAt(h.via, status, method, path, body)
}

func (h *harness) mustAt(host string, status int, method, path string, body any) response {
	h.t.Helper()
	r := h.doAt(host, method, path, body)
	if r.status != status {
		h.t.Fatalf("%s %s: status %d, want %d: %s", method, path, r.status, status, r.body)
	}
	return r
}

func (h *harness) peers() []wirePeer {
	h.t.Helper()
	var ps []wirePeer
	h.must(200, "GET", "/v1/peers", nil).decode(h.t, &ps)
	return ps
}

// registerAll registers every simulated device of every member.
func (h *harness) registerAll() {
	h.t.Helper()
	for _, p := range h.peers() {
		for _, d := range devicePaths(h.sim.cfg.DevicesPerPeer) {
			h.must(201, "POST", "/v1/devices/"+p.ID, wireDeviceAddReq{Device: d})
		}
	}
}

func (h *harness) volume(name string) wireVolume {
	h.t.Helper()
	var v wireVolume
	h.must(200, "GET", "/v1/volumes/"+name, nil).decode(h.t, &v)
	return v
}

func newServer(t *testing.T, s *Simulator) *httptest.Server {
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func jsonBody(t *testing.T, v any) io.Reader {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}
