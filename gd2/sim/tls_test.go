package sim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func selfSignedPair(t *testing.T, name string) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, DNSNames: []string{name},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pool
}

func TestTLSListenerServesOnlyTLSAndCountsHandshakes(t *testing.T) {
	pair, pool := selfSignedPair(t, "gd2-1.example")
	_, otherPool := selfSignedPair(t, "gd2-1.example")
	stats := &TLSStats{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	src := func(string) (*tls.Certificate, error) { return &pair, nil }
	srv := &http.Server{
		Handler:  http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }),
		ErrorLog: HandshakeErrorLog(stats, nil),
	}
	go func() { _ = srv.Serve(TLSListener(ln, TLSConfig(src, stats), stats)) }()
	t.Cleanup(func() { _ = srv.Close() })
	addr := ln.Addr().String()

	client := func(roots *x509.CertPool) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
			TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "gd2-1.example"},
		}}
	}
	resp, err := client(pool).Get("https://" + addr + "/ping")
	if err != nil {
		t.Fatalf("a client trusting the CA: %v", err)
	}
	_ = resp.Body.Close()
	if resp.TLS == nil || resp.TLS.Version < tls.VersionTLS12 || stats.HandshakesFor("gd2-1.example") != 1 {
		t.Errorf("handshake not recorded (%d) or below TLS 1.2", stats.HandshakesFor("gd2-1.example"))
	}

	if _, err := client(otherPool).Get("https://" + addr + "/ping"); err == nil {
		t.Error("a client trusting another CA must refuse the server")
	}
	resp, err = http.Get("http://" + addr + "/ping")
	if err == nil {
		b, _ := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(b), "HTTPS") {
			t.Errorf("plain HTTP answered %d %q", resp.StatusCode, b)
		}
	}
	if stats.PlainHTTP.Load() != 1 {
		t.Errorf("plain HTTP connections %d, want 1", stats.PlainHTTP.Load())
	}
	tlsOld := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "gd2-1.example", MaxVersion: tls.VersionTLS11}}}
	if _, err := tlsOld.Get("https://" + addr + "/ping"); err == nil {
		t.Error("TLS 1.1 must be refused")
	}
	deadline := time.Now().Add(5 * time.Second)
	for stats.Failures.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if stats.Failures.Load() < 2 {
		t.Errorf("failed handshakes %d, want at least 2 (unknown CA, old version)", stats.Failures.Load())
	}
}
