package gd2

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// hostSeen is a server that records the Host header and TLS server name of
// every request it gets.
type hostSeen struct {
	mu          sync.Mutex
	hosts, snis []string
	paths       []string
}

func (h *hostSeen) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.hosts = append(h.hosts, r.Host)
	h.paths = append(h.paths, r.URL.Path)
	if r.TLS != nil {
		h.snis = append(h.snis, r.TLS.ServerName)
	}
	h.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write([]byte(`{"name":"vol1"}` + "\n"))
}

func TestDialAddressConnectsElsewhereButSpeaksToTheEndpointName(t *testing.T) {
	seen := &hostSeen{}
	srv := httptest.NewServer(seen)
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "http://")

	// gd2-2.gd2.ns.svc does not resolve: every byte must go to addr.
	c, err := New(Options{Endpoint: "http://gd2-2.gd2.ns.svc:24007", DialAddress: addr, Secret: strings.Repeat("ab", 32)})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := c.GetVolume(context.Background(), "vol1"); err != nil {
			t.Fatalf("GetVolume through the dial address: %v", err)
		}
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	for i, h := range seen.hosts {
		if h != "gd2-2.gd2.ns.svc:24007" || seen.paths[i] != "/v1/volumes/vol1" {
			t.Errorf("request %d: Host %q path %q, want the endpoint's host and the API path", i, h, seen.paths[i])
		}
	}
	if len(seen.hosts) != 2 {
		t.Errorf("%d requests reached the dial address, want 2", len(seen.hosts))
	}
	if c.Endpoint() != "http://gd2-2.gd2.ns.svc:24007" || c.DialAddress() != addr {
		t.Errorf("Endpoint %q DialAddress %q", c.Endpoint(), c.DialAddress())
	}
}

func TestDialAddressKeepsTheEndpointNameForTLSVerification(t *testing.T) {
	seen := &hostSeen{}
	srv := httptest.NewUnstartedServer(seen)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake below
	srv.StartTLS()                                   // certificate for example.com and 127.0.0.1
	t.Cleanup(srv.Close)
	addr := strings.TrimPrefix(srv.URL, "https://")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})

	c, err := New(Options{Endpoint: "https://example.com:24007", DialAddress: addr, CACert: ca})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetVolume(context.Background(), "vol1"); err != nil {
		t.Fatalf("a certificate for the endpoint's name must verify: %v", err)
	}
	seen.mu.Lock()
	if len(seen.snis) != 1 || seen.snis[0] != "example.com" || seen.hosts[0] != "example.com:24007" {
		t.Errorf("server name %v, Host %v; want example.com", seen.snis, seen.hosts)
	}
	seen.mu.Unlock()

	// The same server under a name its certificate does not carry fails:
	// verification is against Endpoint, not against the address dialled.
	other, err := New(Options{Endpoint: "https://gd2-2:24007", DialAddress: addr, CACert: ca, Retry: &RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = other.GetVolume(context.Background(), "vol1")
	var hostErr x509.HostnameError
	if !errors.Is(err, ErrNoResponse) || !errors.As(err, &hostErr) {
		t.Fatalf("want a hostname verification failure for gd2-2, got %v", err)
	}
}

func TestDialAddressIsValidated(t *testing.T) {
	for _, bad := range []string{"gd2-2", ":24007", "gd2-2:", "http://gd2-2:24007"} {
		if _, err := New(Options{Endpoint: "http://gd2:24007", DialAddress: bad}); err == nil {
			t.Errorf("DialAddress %q accepted", bad)
		}
	}
	if _, err := New(Options{Endpoint: "http://gd2:24007", DialAddress: "10.0.0.2:24007", HTTPClient: &http.Client{}}); err == nil {
		t.Error("DialAddress with a caller's HTTPClient accepted: it could not be honoured")
	}
	if _, err := New(Options{Endpoint: "http://gd2:24007", DialAddress: "[fd00::2]:24007"}); err != nil {
		t.Errorf("an IPv6 pod address is refused: %v", err)
	}
}
