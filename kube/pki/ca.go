package pki

import (
	"bytes"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"time"
)

// Data keys of a CA secret, as cert-manager's CA issuer reads it (a
// kubernetes.io/tls Secret).
const (
	CertKey = "tls.crt"
	KeyKey  = "tls.key"
)

// Problem is why a CA secret cannot issue. Its text is safe for a
// condition: it never holds key material.
type Problem struct {
	// Reason is a CamelCase condition reason.
	Reason string
	// Detail is a sentence fragment ("has no key \"tls.key\"").
	Detail string
}

func (p *Problem) Error() string { return p.Detail }

// Reasons of a Problem.
const (
	ReasonMissingKey  = "CAKeyMissing"
	ReasonBadPEM      = "CAUnreadable"
	ReasonNotCA       = "NotACA"
	ReasonExpired     = "CAExpired"
	ReasonKeyMismatch = "CAKeyMismatch"
)

// CA is a certificate authority that can sign.
type CA struct {
	Cert *x509.Certificate
	// CertPEM is the CA certificate as found in the secret (first block).
	CertPEM []byte
	key     crypto.Signer
}

// ParseCA reads a CA key pair from a secret's data: certKey holds the CA
// certificate (PEM), KeyKey its private key (PKCS#8, PKCS#1 or SEC 1). The
// certificate must be a CA that may sign certificates, valid at now, and
// match the key.
func ParseCA(data map[string][]byte, certKey string, now time.Time) (*CA, error) {
	cert, certPEM, err := parseCACert(data, certKey, now)
	if err != nil {
		return nil, err
	}
	raw, ok := data[KeyKey]
	if !ok || len(raw) == 0 {
		return nil, &Problem{ReasonMissingKey, fmt.Sprintf("has no key %q", KeyKey)}
	}
	key, err := parseKey(raw)
	if err != nil {
		return nil, &Problem{ReasonBadPEM, fmt.Sprintf("key %q is not a PEM private key", KeyKey)}
	}
	if !samePublicKey(cert.PublicKey, key.Public()) {
		return nil, &Problem{ReasonKeyMismatch, fmt.Sprintf("key %q does not belong to the certificate in %q", KeyKey, certKey)}
	}
	return &CA{Cert: cert, CertPEM: certPEM, key: key}, nil
}

// ParseTrust reads only the CA certificate (for a pool anthill does not
// issue for: external mode), with the same checks as ParseCA but no key.
func ParseTrust(data map[string][]byte, certKey string, now time.Time) ([]byte, error) {
	_, certPEM, err := parseCACert(data, certKey, now)
	return certPEM, err
}

func parseCACert(data map[string][]byte, certKey string, now time.Time) (*x509.Certificate, []byte, error) {
	raw, ok := data[certKey]
	if !ok || len(raw) == 0 {
		return nil, nil, &Problem{ReasonMissingKey, fmt.Sprintf("has no key %q", certKey)}
	}
	block, _ := pem.Decode(raw)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, &Problem{ReasonBadPEM, fmt.Sprintf("key %q holds no PEM certificate", certKey)}
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, &Problem{ReasonBadPEM, fmt.Sprintf("key %q holds an unreadable certificate", certKey)}
	}
	if !cert.IsCA || !cert.BasicConstraintsValid || (cert.KeyUsage != 0 && cert.KeyUsage&x509.KeyUsageCertSign == 0) {
		return nil, nil, &Problem{ReasonNotCA, fmt.Sprintf("certificate %q in key %q is not a CA (basic constraints CA:TRUE and key usage certSign are required)", cert.Subject.CommonName, certKey)}
	}
	if now.After(cert.NotAfter) || now.Before(cert.NotBefore) {
		return nil, nil, &Problem{ReasonExpired, fmt.Sprintf("CA %q in key %q is valid only from %s to %s", cert.Subject.CommonName, certKey,
			cert.NotBefore.UTC().Format(time.RFC3339), cert.NotAfter.UTC().Format(time.RFC3339))}
	}
	return cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), nil
}

func parseKey(raw []byte) (crypto.Signer, error) {
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, errors.New("no PEM block")
	}
	if k, err := x509.ParsePKCS8PrivateKey(block.Bytes); err == nil {
		if s, ok := k.(crypto.Signer); ok {
			return s, nil
		}
		return nil, errors.New("unsupported key type")
	}
	if k, err := x509.ParsePKCS1PrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	if k, err := x509.ParseECPrivateKey(block.Bytes); err == nil {
		return k, nil
	}
	return nil, errors.New("unreadable key")
}

func samePublicKey(a, b crypto.PublicKey) bool {
	type equaler interface{ Equal(crypto.PublicKey) bool }
	switch a.(type) {
	case *ecdsa.PublicKey, *rsa.PublicKey, ed25519.PublicKey:
		if e, ok := a.(equaler); ok {
			return e.Equal(b)
		}
	}
	return false
}

// Bundle is a PEM trust bundle: the given CA certificates, each once, in
// order, dropping any already expired at now. During a CA rotation the
// bundle holds the new CA and the previous one, so a client trusts servers
// still presenting a certificate of the old CA and those already on the
// new one.
func Bundle(now time.Time, pems ...[]byte) []byte {
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, p := range pems {
		for rest := p; ; {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" || seen[string(block.Bytes)] {
				continue
			}
			c, err := x509.ParseCertificate(block.Bytes)
			if err != nil || now.After(c.NotAfter) {
				continue
			}
			seen[string(block.Bytes)] = true
			_ = pem.Encode(&out, block)
		}
	}
	return out.Bytes()
}
