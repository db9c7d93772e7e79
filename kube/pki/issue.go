package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"slices"
	"time"
)

// Validity is how long an issued certificate is valid (cut to the CA's
// own end), and RenewBefore how long before its end it is issued anew.
const (
	Validity    = 90 * 24 * time.Hour
	RenewBefore = 30 * 24 * time.Hour
)

// backdate absorbs clock skew between the operator and the servers.
const backdate = 5 * time.Minute

// Usage is what a certificate is for.
type Usage int

// Usages of an issued certificate.
const (
	// Server: TLS server authentication (GD2's REST API, etcd's client
	// port).
	Server Usage = iota
	// Client: TLS client authentication (the CSI drivers, GD2 to etcd).
	Client
	// Peer: both (etcd members to each other).
	Peer
)

// Request says what to issue.
type Request struct {
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	Usage      Usage
}

func (r Request) extUsages() []x509.ExtKeyUsage {
	switch r.Usage {
	case Client:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	case Peer:
		return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	}
	return []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
}

// Issued is a leaf certificate and its key, PEM encoded.
type Issued struct {
	CertPEM, KeyPEM []byte
	NotAfter        time.Time
}

// Issue signs a fresh P-256 key for r, valid from now (less a few minutes
// for clock skew) for Validity or until the CA expires, whichever is
// first.
func (ca *CA) Issue(r Request, now time.Time) (Issued, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return Issued{}, fmt.Errorf("generate key: %w", err)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return Issued{}, fmt.Errorf("generate serial: %w", err)
	}
	notAfter := now.Add(Validity)
	if ca.Cert.NotAfter.Before(notAfter) {
		notAfter = ca.Cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: r.CommonName, Organization: []string{"anthill"}},
		NotBefore:             now.Add(-backdate),
		NotAfter:              notAfter,
		KeyUsage:              x509.KeyUsageDigitalSignature,
		ExtKeyUsage:           r.extUsages(),
		BasicConstraintsValid: true,
		DNSNames:              slices.Clone(r.DNSNames),
		IPAddresses:           slices.Clone(r.IPs),
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.key)
	if err != nil {
		return Issued{}, fmt.Errorf("sign certificate for %q: %w", r.CommonName, err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return Issued{}, fmt.Errorf("encode key: %w", err)
	}
	return Issued{
		CertPEM:  pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:   pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		NotAfter: notAfter,
	}, nil
}

// Renewal reasons: why an existing certificate must be issued anew.
const (
	RenewMissing  = "missing"
	RenewUnusable = "unreadable"
	RenewOtherCA  = "signed by another CA"
	RenewNames    = "names changed"
	RenewUsage    = "usage changed"
	RenewExpiring = "expiring"
)

// NeedsRenewal says whether the certificate certPEM (with its key keyPEM)
// must be replaced by one issued for r by ca at now, and why ("" when it is
// good): it is missing or unreadable, its key is not its own, it was not
// signed by ca (a CA rotation), its names or usage differ from r, or it
// ends within RenewBefore (or a third of its lifetime, for short-lived
// certificates).
func (ca *CA) NeedsRenewal(certPEM, keyPEM []byte, r Request, now time.Time) string {
	if len(certPEM) == 0 || len(keyPEM) == 0 {
		return RenewMissing
	}
	block, _ := pem.Decode(certPEM)
	if block == nil {
		return RenewUnusable
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return RenewUnusable
	}
	key, err := parseKey(keyPEM)
	if err != nil || !samePublicKey(cert.PublicKey, key.Public()) {
		return RenewUnusable
	}
	if cert.CheckSignatureFrom(ca.Cert) != nil {
		return RenewOtherCA
	}
	if !sameStrings(cert.DNSNames, r.DNSNames) || !sameIPs(cert.IPAddresses, r.IPs) {
		return RenewNames
	}
	if !slices.Equal(cert.ExtKeyUsage, r.extUsages()) {
		return RenewUsage
	}
	if RenewDue(cert.NotBefore, cert.NotAfter, now) {
		return RenewExpiring
	}
	return ""
}

// RenewDue says whether a certificate valid from notBefore to notAfter is
// due for renewal at now: RenewBefore ahead of its end, or a third of its
// lifetime ahead for one shorter lived than three times RenewBefore (a
// CA close to its own end issues such certificates).
func RenewDue(notBefore, notAfter, now time.Time) bool {
	lead := RenewBefore
	if life := notAfter.Sub(notBefore); life < 3*RenewBefore {
		lead = life / 3
	}
	return !now.Before(notAfter.Add(-lead))
}

func sameStrings(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func sameIPs(a, b []net.IP) bool {
	as, bs := make([]string, 0, len(a)), make([]string, 0, len(b))
	for _, ip := range a {
		as = append(as, ip.String())
	}
	for _, ip := range b {
		bs = append(bs, ip.String())
	}
	return sameStrings(as, bs)
}
