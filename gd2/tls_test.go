package gd2

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// testPKI is a throwaway CA and a server certificate for 127.0.0.1 it signed.
type testPKI struct {
	caPEM      []byte
	serverCert tls.Certificate
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "anthill test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	srvTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "gd2"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{
		caPEM:      pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		serverCert: tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
	}
}

func TestTLSTrustComesOnlyFromTheConfiguredCA(t *testing.T) {
	pki := newTestPKI(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.serverCert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pki.caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	otherCA := newTestPKI(t).caPEM

	cases := []struct {
		name    string
		opts    Options
		wantErr bool
	}{
		{name: "the CA bundle as PEM bytes verifies the server", opts: Options{CACert: pki.caPEM}},
		{name: "the CA bundle from a file verifies the server", opts: Options{CACertFile: caFile}},
		{name: "the system roots alone do not trust a private CA", opts: Options{}, wantErr: true},
		{name: "a different CA replaces the system roots and still fails", opts: Options{CACert: otherCA}, wantErr: true},
		{name: "insecure mode skips verification only when asked", opts: Options{InsecureSkipVerify: true}},
		{name: "a server name replaces the URL's host in the check", opts: Options{CACert: pki.caPEM, ServerName: "gd2.elsewhere"}, wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Endpoint = srv.URL
			tc.opts.Retry = &RetryPolicy{MaxAttempts: 1}
			c, err := New(tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			err = c.Ping(context.Background())
			if tc.wantErr {
				var certErr *tls.CertificateVerificationError
				if !errors.As(err, &certErr) {
					t.Fatalf("want a certificate verification error, got %v", err)
				}
				if !errors.Is(err, ErrNoResponse) {
					t.Errorf("a TLS failure should match ErrNoResponse: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Ping: %v", err)
			}
		})
	}
}

func TestNewRejectsUnusableTLSAndEndpointOptions(t *testing.T) {
	cases := []struct {
		name string
		opts Options
	}{
		{name: "a CA bundle without certificates is refused", opts: Options{Endpoint: "https://h:24007", CACert: []byte("not pem")}},
		{name: "a missing CA file is refused", opts: Options{Endpoint: "https://h:24007", CACertFile: filepath.Join(t.TempDir(), "none")}},
		{name: "an own HTTP client cannot be combined with TLS options", opts: Options{Endpoint: "https://h:24007", HTTPClient: http.DefaultClient, InsecureSkipVerify: true}},
		{name: "an empty endpoint is refused", opts: Options{}},
		{name: "an endpoint without scheme is refused", opts: Options{Endpoint: "gd2:24007"}},
		{name: "an endpoint with another scheme is refused", opts: Options{Endpoint: "ftp://gd2:24007"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := New(tc.opts); err == nil {
				t.Fatal("New accepted the options")
			}
		})
	}
}
