package sim

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
)

// FuzzRequests throws arbitrary bodies at the mutating routes. The
// simulator must never panic, and must answer either success or a
// well-formed GD2 error envelope.
func FuzzRequests(f *testing.F) {
	seeds := []struct {
		route int
		body  string
	}{
		{0, `{"addresses":["x"],"zone":"z","metadata":{"k":"v"}}`},
		{1, `{"name":"v","size":1073741824,"replica":3}`},
		{1, `{"name":"m","subvols":[{"type":"replicate","replica":2,"bricks":[{"peerid":"00000000-0000-4000-8000-000000000000","path":"/b"}]}]}`},
		{2, `{"replica":3,"bricks":[],"size":5,"distribute":1}`},
		{3, `{"src-peerid":"00000000-0000-4000-8000-000000000000","src-brickpath":"/x"}`},
		{4, `{"device":"/dev/sdb","provisioner":"lvm"}`},
		{5, `{"options":{"cluster.op-version":"1"}}`},
		{6, `{"metadata":{"a":"b"},"delete-metadata":true}`},
		{7, `{"filename":"/f","hostname":"h","brickname":"/b"}`},
		{1, `{`},
		{1, `null`},
	}
	for _, s := range seeds {
		f.Add(s.route, []byte(s.body))
	}
	sim, err := New(Config{Peers: 3, Zones: 3})
	if err != nil {
		f.Fatal(err)
	}
	h := sim.Handler()
	ps := sim.Hosts()
	peerID := ps[0].PeerID
	targets := []struct{ method, path string }{
		{"POST", "/v1/peers"},
		{"POST", "/v1/volumes"},
		{"POST", "/v1/volumes/v/expand"},
		{"POST", "/v1/volumes/v/replacebrick"},
		{"POST", "/v1/devices/" + peerID},
		{"POST", "/v1/cluster/options"},
		{"POST", "/v1/volumes/v/edit"},
		{"POST", "/v1/volumes/v/split-brain/source-brick"},
		{"POST", "/v1/peers/" + peerID},
		{"POST", "/v1/volumes/v/options"},
	}
	f.Fuzz(func(t *testing.T, route int, body []byte) {
		if route < 0 {
			route = -route
		}
		tg := targets[route%len(targets)]
		req := httptest.NewRequest(tg.method, tg.path, bytes.NewReader(body))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code >= 400 && rec.Code != http.StatusNotFound && rec.Code != http.StatusMethodNotAllowed {
			if !bytes.HasPrefix(rec.Body.Bytes(), []byte(`{"errors":[`)) {
				t.Fatalf("status %d without error envelope: %q", rec.Code, rec.Body.String())
			}
		}
	})
}

// FuzzAuthHeader checks that arbitrary Authorization headers never panic
// and are always either accepted or answered with a 401 envelope.
func FuzzAuthHeader(f *testing.F) {
	f.Add("Bearer a.b.c")
	f.Add("bearer eyJhbGciOiJIUzI1NiJ9.e30.x")
	f.Add("")
	f.Add("Basic  x")
	sim, err := New(Config{Peers: 1, Secret: testSecret})
	if err != nil {
		f.Fatal(err)
	}
	h := sim.Handler()
	f.Fuzz(func(t *testing.T, hdr string) {
		req := httptest.NewRequest("GET", "/v1/peers", nil)
		req.Header["Authorization"] = []string{hdr}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusUnauthorized {
			t.Fatalf("header %q got %d", hdr, rec.Code)
		}
	})
}
