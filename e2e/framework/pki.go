package framework

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the throw-away certificate authority of one control plane: it signs
// the API server's serving certificate and the admin client certificate that
// every component and test uses (group system:masters), and the operator's
// own client certificate, with which it impersonates its service account.
type pki struct {
	CACert, ServingCert, ServingKey, AdminCert, AdminKey, SAPub, SAKey string // file paths
	caPEM, adminCertPEM, adminKeyPEM                                   []byte
	operatorCertPEM, operatorKeyPEM                                    []byte
}

func writePEM(path, typ string, der []byte) ([]byte, error) {
	b := pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
	return b, os.WriteFile(path, b, 0o600)
}

func newPKI(dir string) (*pki, error) {
	p := &pki{
		CACert: filepath.Join(dir, "ca.crt"), ServingCert: filepath.Join(dir, "apiserver.crt"),
		ServingKey: filepath.Join(dir, "apiserver.key"), AdminCert: filepath.Join(dir, "admin.crt"),
		AdminKey: filepath.Join(dir, "admin.key"), SAPub: filepath.Join(dir, "sa.pub"), SAKey: filepath.Join(dir, "sa.key"),
	}
	now := time.Now().Add(-time.Hour)
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "anthill-test-ca"},
		NotBefore: now, NotAfter: now.Add(10 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("create CA: %w", err)
	}
	if p.caPEM, err = writePEM(p.CACert, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	ca, _ := x509.ParseCertificate(caDER)

	leaf := func(serial int64, subject pkix.Name, usage x509.ExtKeyUsage, certPath, keyPath string, server bool) ([]byte, []byte, error) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return nil, nil, err
		}
		t := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: subject, NotBefore: now, NotAfter: now.Add(10 * 24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment, ExtKeyUsage: []x509.ExtKeyUsage{usage},
		}
		if server {
			t.IPAddresses = []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
			t.DNSNames = []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}
		}
		der, err := x509.CreateCertificate(rand.Reader, t, ca, &key.PublicKey, caKey)
		if err != nil {
			return nil, nil, err
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			return nil, nil, err
		}
		c, err := writePEM(certPath, "CERTIFICATE", der)
		if err != nil {
			return nil, nil, err
		}
		k, err := writePEM(keyPath, "EC PRIVATE KEY", kder)
		return c, k, err
	}
	if _, _, err := leaf(2, pkix.Name{CommonName: "kube-apiserver"}, x509.ExtKeyUsageServerAuth, p.ServingCert, p.ServingKey, true); err != nil {
		return nil, fmt.Errorf("serving certificate: %w", err)
	}
	if p.adminCertPEM, p.adminKeyPEM, err = leaf(3, pkix.Name{CommonName: "anthill-test-admin", Organization: []string{"system:masters"}},
		x509.ExtKeyUsageClientAuth, p.AdminCert, p.AdminKey, false); err != nil {
		return nil, fmt.Errorf("admin certificate: %w", err)
	}
	// A user of its own, so that the audit policy can select the
	// operator's requests (it is evaluated before impersonation).
	if p.operatorCertPEM, p.operatorKeyPEM, err = leaf(4, pkix.Name{CommonName: operatorImpersonator, Organization: []string{"system:masters"}},
		x509.ExtKeyUsageClientAuth, filepath.Join(dir, "operator.crt"), filepath.Join(dir, "operator.key"), false); err != nil {
		return nil, fmt.Errorf("operator certificate: %w", err)
	}
	// Service-account tokens are signed with RSA, which every component accepts.
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	if _, err := writePEM(p.SAKey, "RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)); err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&saKey.PublicKey)
	if err != nil {
		return nil, err
	}
	if _, err := writePEM(p.SAPub, "PUBLIC KEY", pubDER); err != nil {
		return nil, err
	}
	return p, nil
}
