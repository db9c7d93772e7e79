package machines

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/kube/pki"
)

// testCA is a CA valid for a year from now, as spec.caSecretRef holds it.
func testCA(t *testing.T, now time.Time) *pki.CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.ParseCA(map[string][]byte{
		pki.CertKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pki.KeyKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}),
	}, pki.CertKey, now)
	if err != nil {
		t.Fatal(err)
	}
	return ca
}

// The collector exports each issued certificate's NotAfter from the very
// Secrets the operator writes (objects.TLSSecret), follows a renewal and a
// deletion, and leaves out the trust bundle, an unparsable certificate
// and Secrets anthill did not label.
func TestCertificateCollectorExportsWhenEachIssuedCertificateEnds(t *testing.T) {
	now := time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
	ca := testCA(t, now)
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "c"}}
	issue := func(secret string, at time.Time) (*corev1.Secret, time.Time) {
		t.Helper()
		is, err := ca.Issue(objects.EtcdCertRequest(c), at)
		if err != nil {
			t.Fatal(err)
		}
		return objects.TLSSecret(c, secret, is, ca.CertPEM), is.NotAfter
	}
	si := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	etcd, etcdEnd := issue(objects.EtcdTLSSecretName(c.Name), now)
	node, nodeEnd := issue(objects.NodeTLSSecretName("c-abcde"), now.Add(time.Hour))
	broken := objects.TLSSecret(c, c.Name+"-broken-tls", pki.Issued{CertPEM: []byte("not PEM"), KeyPEM: []byte("x")}, ca.CertPEM)
	foreign := etcd.DeepCopy()
	foreign.Name, foreign.Labels = "someone-elses-tls", nil
	for _, s := range []*corev1.Secret{etcd, node, broken, foreign, objects.TLSTrustSecret(c, ca.CertPEM)} {
		if err := si.Add(s); err != nil {
			t.Fatal(err)
		}
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewCertificateCollector(corev1listers.NewSecretLister(si)))

	got := fixtures.Gathered(t, reg, "anthill_certificate_expiry_timestamp_seconds")
	want := map[string]float64{
		"cluster=c,namespace=ns,secret=" + etcd.Name + ",": float64(etcdEnd.Unix()),
		"cluster=c,namespace=ns,secret=" + node.Name + ",": float64(nodeEnd.Unix()),
	}
	if len(got) != len(want) || got[labelsOf(etcd)] != want[labelsOf(etcd)] || got[labelsOf(node)] != want[labelsOf(node)] {
		t.Fatalf("anthill_certificate_expiry_timestamp_seconds = %v, want %v", got, want)
	}
	if etcdEnd.Sub(now) != pki.Validity {
		t.Fatalf("the etcd certificate ends %v after it was issued, want %v", etcdEnd.Sub(now), pki.Validity)
	}

	renewed, renewedEnd := issue(etcd.Name, now.Add(61*24*time.Hour))
	if err := si.Update(renewed); err != nil {
		t.Fatal(err)
	}
	if err := si.Delete(node); err != nil {
		t.Fatal(err)
	}
	got = fixtures.Gathered(t, reg, "anthill_certificate_expiry_timestamp_seconds")
	if len(got) != 1 || got[labelsOf(etcd)] != float64(renewedEnd.Unix()) {
		t.Fatalf("after a renewal and a deletion: %v, want only %s at %d", got, etcd.Name, renewedEnd.Unix())
	}
}

func labelsOf(s *corev1.Secret) string {
	return "cluster=" + s.Labels[objects.LabelCluster] + ",namespace=" + s.Namespace + ",secret=" + s.Name + ","
}
