package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

// newCA makes a CA secret's data; mutate adjusts the template.
func newCA(t *testing.T, name string, mutate func(*x509.Certificate)) map[string][]byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: t0.Add(-time.Hour), NotAfter: t0.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	if mutate != nil {
		mutate(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalECPrivateKey(key)
	return map[string][]byte{
		CertKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}
}

func mustCA(t *testing.T, data map[string][]byte) *CA {
	t.Helper()
	ca, err := ParseCA(data, CertKey, t0)
	if err != nil {
		t.Fatalf("parse CA: %v", err)
	}
	return ca
}

func leaf(t *testing.T, is Issued) *x509.Certificate {
	t.Helper()
	b, _ := pem.Decode(is.CertPEM)
	c, err := x509.ParseCertificate(b.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

var serving = Request{
	CommonName: "gc-a-0",
	DNSNames:   []string{"gc-a-0.gc-nodes.ns.svc", "gc-mgmt.ns.svc", "gc-mgmt"},
	IPs:        []net.IP{net.ParseIP("10.1.2.3")},
	Usage:      Server,
}

func TestAServingCertificateCarriesTheNodeNamesAndServerUsageOnly(t *testing.T) {
	ca := mustCA(t, newCA(t, "ca", nil))
	is, err := ca.Issue(serving, t0)
	if err != nil {
		t.Fatal(err)
	}
	c := leaf(t, is)
	if !sameStrings(c.DNSNames, serving.DNSNames) || len(c.IPAddresses) != 1 || !c.IPAddresses[0].Equal(serving.IPs[0]) {
		t.Errorf("SANs %v %v, want %v %v", c.DNSNames, c.IPAddresses, serving.DNSNames, serving.IPs)
	}
	if c.IsCA {
		t.Error("a leaf must not be a CA")
	}
	if c.KeyUsage != x509.KeyUsageDigitalSignature || !slices.Equal(c.ExtKeyUsage, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}) {
		t.Errorf("usage %v %v", c.KeyUsage, c.ExtKeyUsage)
	}
	for _, name := range serving.DNSNames {
		if _, err := c.Verify(x509.VerifyOptions{DNSName: name, Roots: pool(ca.CertPEM), CurrentTime: t0}); err != nil {
			t.Errorf("verify as %s: %v", name, err)
		}
	}
	if _, err := c.Verify(x509.VerifyOptions{DNSName: "gc-b-0.gc-nodes.ns.svc", Roots: pool(ca.CertPEM), CurrentTime: t0}); err == nil {
		t.Error("a node's certificate must not be valid for another node")
	}
}

func TestClientAndPeerCertificatesHaveTheirUsages(t *testing.T) {
	ca := mustCA(t, newCA(t, "ca", nil))
	for _, tc := range []struct {
		usage Usage
		want  []x509.ExtKeyUsage
	}{
		{Client, []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}},
		{Peer, []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}},
	} {
		is, err := ca.Issue(Request{CommonName: "x", Usage: tc.usage}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if got := leaf(t, is).ExtKeyUsage; !slices.Equal(got, tc.want) {
			t.Errorf("usage %d: %v, want %v", tc.usage, got, tc.want)
		}
	}
}

func TestValidityIsNinetyDaysBackdatedAndNeverPastTheCA(t *testing.T) {
	ca := mustCA(t, newCA(t, "ca", nil))
	is, _ := ca.Issue(serving, t0)
	c := leaf(t, is)
	if !c.NotBefore.Equal(t0.Add(-backdate)) || !c.NotAfter.Equal(t0.Add(Validity)) || !is.NotAfter.Equal(c.NotAfter) {
		t.Errorf("validity %s..%s", c.NotBefore, c.NotAfter)
	}
	short := mustCA(t, newCA(t, "short", func(c *x509.Certificate) { c.NotAfter = t0.Add(10 * 24 * time.Hour) }))
	is, _ = short.Issue(serving, t0)
	if got := leaf(t, is).NotAfter; !got.Equal(t0.Add(10 * 24 * time.Hour)) {
		t.Errorf("a leaf of a CA ending in 10 days ends at %s", got)
	}
}

func TestRenewalTiming(t *testing.T) {
	ca := mustCA(t, newCA(t, "ca", nil))
	is, _ := ca.Issue(serving, t0)
	for _, tc := range []struct {
		name string
		at   time.Time
		want string
	}{
		{"a fresh certificate is kept", t0, ""},
		{"one day before the lead time it is kept", t0.Add(Validity - RenewBefore - 24*time.Hour), ""},
		{"at the lead time it is renewed", t0.Add(Validity - RenewBefore), RenewExpiring},
		{"an expired one is renewed", t0.Add(Validity + time.Hour), RenewExpiring},
	} {
		if got := ca.NeedsRenewal(is.CertPEM, is.KeyPEM, serving, tc.at); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	// A short-lived certificate renews a third of its life ahead.
	nb, na := t0, t0.Add(9*24*time.Hour)
	if RenewDue(nb, na, t0.Add(5*24*time.Hour)) || !RenewDue(nb, na, t0.Add(6*24*time.Hour)) {
		t.Error("a 9-day certificate renews 3 days before its end")
	}
}

func TestRenewalOnChangedNamesUsageKeyOrCA(t *testing.T) {
	ca := mustCA(t, newCA(t, "ca", nil))
	other := mustCA(t, newCA(t, "other", nil))
	is, _ := ca.Issue(serving, t0)
	is2, _ := ca.Issue(serving, t0)
	moved := serving
	moved.IPs = []net.IP{net.ParseIP("10.9.9.9")}
	client := serving
	client.Usage = Client
	for _, tc := range []struct {
		name      string
		ca        *CA
		cert, key []byte
		req       Request
		want      string
	}{
		{"nothing issued yet", ca, nil, nil, serving, RenewMissing},
		{"a garbled certificate", ca, []byte("junk"), is.KeyPEM, serving, RenewUnusable},
		{"a key of another certificate", ca, is.CertPEM, is2.KeyPEM, serving, RenewUnusable},
		{"the CA was rotated", other, is.CertPEM, is.KeyPEM, serving, RenewOtherCA},
		{"the pod moved to another address", ca, is.CertPEM, is.KeyPEM, moved, RenewNames},
		{"the usage changed", ca, is.CertPEM, is.KeyPEM, client, RenewUsage},
		{"names in another order are the same", ca, is.CertPEM, is.KeyPEM, Request{CommonName: "x", DNSNames: []string{"gc-mgmt", "gc-mgmt.ns.svc", "gc-a-0.gc-nodes.ns.svc"}, IPs: serving.IPs}, ""},
	} {
		if got := tc.ca.NeedsRenewal(tc.cert, tc.key, tc.req, t0); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestBadCASecretsSayWhatIsWrong(t *testing.T) {
	good := newCA(t, "ca", nil)
	other := newCA(t, "other", nil)
	for _, tc := range []struct {
		name   string
		data   map[string][]byte
		reason string
	}{
		{"no certificate", map[string][]byte{KeyKey: good[KeyKey]}, ReasonMissingKey},
		{"no private key", map[string][]byte{CertKey: good[CertKey]}, ReasonMissingKey},
		{"garbage certificate", map[string][]byte{CertKey: []byte("x"), KeyKey: good[KeyKey]}, ReasonBadPEM},
		{"garbage key", map[string][]byte{CertKey: good[CertKey], KeyKey: []byte("x")}, ReasonBadPEM},
		{"not a CA", newCA(t, "leaf", func(c *x509.Certificate) { c.IsCA = false; c.KeyUsage = x509.KeyUsageDigitalSignature }), ReasonNotCA},
		{"expired", newCA(t, "old", func(c *x509.Certificate) { c.NotBefore = t0.Add(-48 * time.Hour); c.NotAfter = t0.Add(-time.Hour) }), ReasonExpired},
		{"not yet valid", newCA(t, "new", func(c *x509.Certificate) { c.NotBefore = t0.Add(time.Hour) }), ReasonExpired},
		{"key of another CA", map[string][]byte{CertKey: good[CertKey], KeyKey: other[KeyKey]}, ReasonKeyMismatch},
	} {
		_, err := ParseCA(tc.data, CertKey, t0)
		var p *Problem
		if !errors.As(err, &p) || p.Reason != tc.reason {
			t.Errorf("%s: %v, want reason %s", tc.name, err, tc.reason)
			continue
		}
		if strings.Contains(p.Error(), "-----BEGIN") || strings.Contains(p.Error(), string(good[KeyKey][30:60])) {
			t.Errorf("%s: the problem quotes PEM material: %s", tc.name, p.Error())
		}
	}
	if _, err := ParseTrust(map[string][]byte{CertKey: good[CertKey]}, CertKey, t0); err != nil {
		t.Errorf("a CA certificate without its key is trust enough: %v", err)
	}
}

func pool(pems ...[]byte) *x509.CertPool {
	p := x509.NewCertPool()
	for _, b := range pems {
		p.AppendCertsFromPEM(b)
	}
	return p
}

// During a rotation a client holding the bundle trusts servers of both
// CAs, so the roll has no window where a client refuses a server; after
// it, the old CA's leaves are refused.
func TestRotationBundleTrustsBothCAsDuringTheRoll(t *testing.T) {
	oldCA := mustCA(t, newCA(t, "old", nil))
	newCA := mustCA(t, newCA(t, "new", nil))
	oldLeaf, _ := oldCA.Issue(serving, t0)
	newLeaf, _ := newCA.Issue(serving, t0)
	bundle := Bundle(t0, newCA.CertPEM, oldCA.CertPEM, newCA.CertPEM)
	if n := countBlocks(bundle); n != 2 {
		t.Fatalf("bundle has %d certificates, want 2 (each CA once)", n)
	}
	for name, is := range map[string]Issued{"old": oldLeaf, "new": newLeaf} {
		if _, err := leaf(t, is).Verify(x509.VerifyOptions{DNSName: serving.DNSNames[0], Roots: pool(bundle), CurrentTime: t0}); err != nil {
			t.Errorf("during the roll a server on the %s CA must be trusted: %v", name, err)
		}
	}
	if _, err := leaf(t, oldLeaf).Verify(x509.VerifyOptions{DNSName: serving.DNSNames[0], Roots: pool(Bundle(t0, newCA.CertPEM)), CurrentTime: t0}); err == nil {
		t.Error("after the roll the old CA's leaves must be refused")
	}
	expired := mustCA(t, newCA2(t))
	if n := countBlocks(Bundle(t0.Add(48*time.Hour), newCA.CertPEM, expired.CertPEM)); n != 1 {
		t.Errorf("an expired CA stays in the bundle (%d certificates)", n)
	}
}

func newCA2(t *testing.T) map[string][]byte {
	return newCA(t, "brief", func(c *x509.Certificate) { c.NotAfter = t0.Add(24 * time.Hour) })
}

func countBlocks(b []byte) int {
	n := 0
	for {
		var blk *pem.Block
		if blk, b = pem.Decode(b); blk == nil {
			return n
		}
		n++
	}
}
