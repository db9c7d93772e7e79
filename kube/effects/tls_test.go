package effects

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

var tlsNow = time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)

func caSecret(t *testing.T, name string, mutate func(*x509.Certificate)) *corev1.Secret {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: tlsNow.Add(-time.Hour), NotAfter: tlsNow.Add(2 * 365 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	if mutate != nil {
		mutate(tmpl)
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: fixtures.Namespace},
		Type:       corev1.SecretTypeTLS,
		Data: map[string][]byte{
			"tls.crt": pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			"tls.key": pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
		},
	}
}

func tlsCluster() *operatorv1alpha1.GlusterCluster {
	c := fixtures.Cluster("gc")
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	return c
}

type fxTLS struct {
	*fxKube
	tls   *TLS
	c     *operatorv1alpha1.GlusterCluster
	nodes []*operatorv1alpha1.GlusterNode
}

func newFxTLS(t *testing.T, kubeObjs []runtime.Object) *fxTLS {
	c := tlsCluster()
	n1, n2 := fixtures.Node("gc", "gc-a", nil), fixtures.Node("gc", "gc-b", nil)
	f := &fxTLS{fxKube: newFxKube(t, kubeObjs, c, n1, n2), c: c}
	f.tls = &TLS{Client: f.kube, Anthill: f.crs, Now: func() time.Time { return tlsNow }}
	f.ops.TLS = f.tls
	f.reloadNodes(t)
	return f
}

func (f *fxTLS) reloadNodes(t *testing.T) {
	t.Helper()
	l, err := f.crs.OperatorV1alpha1().GlusterNodes(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f.nodes = nil
	for i := range l.Items {
		f.nodes = append(f.nodes, &l.Items[i])
	}
}

func (f *fxTLS) check(t *testing.T) TLSCheck {
	t.Helper()
	ch, err := f.tls.Check(fixtures.Ctx, f.c, f.nodes)
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

func (f *fxTLS) secret(t *testing.T, name string) *corev1.Secret {
	t.Helper()
	s, err := f.kube.CoreV1().Secrets(fixtures.Namespace).Get(fixtures.Ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("secret %s: %v", name, err)
	}
	return s
}

func TestTLSBadCASecretsAreNamedProblemsNotErrors(t *testing.T) {
	good := caSecret(t, "gluster-ca", nil)
	noKey := good.DeepCopy()
	delete(noKey.Data, "tls.key")
	leaf := caSecret(t, "gluster-ca", func(c *x509.Certificate) { c.IsCA = false; c.KeyUsage = x509.KeyUsageDigitalSignature })
	expired := caSecret(t, "gluster-ca", func(c *x509.Certificate) { c.NotBefore, c.NotAfter = tlsNow.Add(-72*time.Hour), tlsNow.Add(-time.Hour) })
	for _, tc := range []struct {
		name string
		objs []runtime.Object
		want string
	}{
		{"a missing secret", nil, "CA secret storage/gluster-ca (spec.caSecretRef) does not exist."},
		{"a secret without its key", []runtime.Object{noKey}, `CA secret storage/gluster-ca (spec.caSecretRef) has no key "tls.key".`},
		{"a certificate that is not a CA", []runtime.Object{leaf}, "is not a CA"},
		{"an expired CA", []runtime.Object{expired}, "is valid only from"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFxTLS(t, tc.objs)
			ch := f.check(t)
			if !strings.Contains(ch.Problem, tc.want) || len(ch.Due) != 0 {
				t.Errorf("check = %+v, want a problem containing %q", ch, tc.want)
			}
			if strings.Contains(ch.Problem, "BEGIN") {
				t.Errorf("the problem quotes PEM: %s", ch.Problem)
			}
			if err := f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes); err == nil || strings.Contains(err.Error(), "BEGIN") {
				t.Errorf("issuing with a bad CA: %v", err)
			}
			if n := len(f.secrets(t)); n != len(tc.objs) {
				t.Errorf("%d secrets exist, nothing may be issued", n)
			}
		})
	}
}

func TestTLSIssuesEverySecretOnceOwnedAndLabelled(t *testing.T) {
	ca := caSecret(t, "gluster-ca", nil)
	f := newFxTLS(t, []runtime.Object{ca})
	ch := f.check(t)
	want := []string{"gc-a-tls (missing)", "gc-b-tls (missing)", "gc-etcd-tls (missing)", "gc-tls-trust (missing)"}
	if strings.Join(ch.Due, ",") != strings.Join(want, ",") || ch.Problem != "" {
		t.Fatalf("due %v (problem %q), want %v", ch.Due, ch.Problem, want)
	}
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "issue")
	f.reloadNodes(t)
	if ch := f.check(t); len(ch.Due) != 0 {
		t.Fatalf("after issuing, still due: %v", ch.Due)
	}
	for _, name := range []string{"gc-a-tls", "gc-b-tls", "gc-etcd-tls", "gc-tls-trust"} {
		s := f.secret(t, name)
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].Name != "gc" || s.Labels[objects.LabelCluster] != "gc" || s.Labels[objects.LabelComponent] != objects.ComponentTLS {
			t.Errorf("%s: owner %v labels %v", name, s.OwnerReferences, s.Labels)
		}
		if !bytes.Equal(s.Data["ca.crt"], ca.Data["tls.crt"]) {
			t.Errorf("%s: the bundle is not the CA", name)
		}
	}
	for _, n := range f.nodes {
		if n.Annotations[objects.AnnotationCertificate] != CertificateHash(f.secret(t, objects.NodeTLSSecretName(n.Name)).Data["tls.crt"]) {
			t.Errorf("node %s does not carry its certificate's hash", n.Name)
		}
	}
	before := f.secret(t, "gc-a-tls").ResourceVersion
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "issue again")
	if f.secret(t, "gc-a-tls").ResourceVersion != before {
		t.Error("issuing again rewrote a good certificate")
	}
}

func TestTLSNewNodeIsCreatedWithItsCertificate(t *testing.T) {
	ca := caSecret(t, "gluster-ca", nil)
	f := newFxTLS(t, []runtime.Object{ca})
	f.c.Spec.NodeTemplates[0].Nodes = ptrInt32(3)
	if _, err := f.crs.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Update(fixtures.Ctx, f.c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	fixtures.Must(t, f.ops.ScaleNodes(fixtures.Ctx, fxScaleTarget(t, f.ops, f.c), 3), "scale")
	f.reloadNodes(t)
	found := false
	for _, n := range f.nodes {
		if n.Name == "gc-a" || n.Name == "gc-b" {
			continue
		}
		found = true
		s := f.secret(t, objects.NodeTLSSecretName(n.Name))
		if h := n.Annotations[objects.AnnotationCertificate]; h == "" || h != CertificateHash(s.Data["tls.crt"]) {
			t.Errorf("new node %s created without its certificate's hash (%q)", n.Name, h)
		}
	}
	if !found {
		t.Fatal("no node was created")
	}
}

func ptrInt32(v int32) *int32 { return &v }

// A CA rotation: the trust bundle holds both CAs until every certificate
// is re-signed and every node runs the template carrying it; then only
// the new CA.
func TestTLSRotationTrustsBothCAsUntilTheRollEnds(t *testing.T) {
	oldCA := caSecret(t, "gluster-ca", nil)
	f := newFxTLS(t, []runtime.Object{oldCA})
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "issue")
	f.reloadNodes(t)
	for _, n := range f.nodes {
		n.Status.Revision = objects.NodeTemplateRevision(f.c, n) // pods run it
	}

	newCA := caSecret(t, "gluster-ca", nil)
	if _, err := f.kube.CoreV1().Secrets(fixtures.Namespace).Update(fixtures.Ctx, newCA, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	ch := f.check(t)
	if len(ch.Due) != 4 || !strings.Contains(strings.Join(ch.Due, ","), "gc-a-tls (signed by another CA)") {
		t.Fatalf("after rotation due %v", ch.Due)
	}
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "re-sign")
	bundle := f.secret(t, "gc-tls-trust").Data["ca.crt"]
	if !bytes.Contains(bundle, newCA.Data["tls.crt"]) || !bytes.Contains(bundle, oldCA.Data["tls.crt"]) {
		t.Fatal("during the roll the bundle must hold both CAs")
	}
	// The nodes' annotations changed; their pods still run the old
	// template (status.revision is the old one): both CAs stay.
	f.reloadNodes(t)
	for _, n := range f.nodes {
		n.Status.Revision = "old"
	}
	if ch := f.check(t); len(ch.Due) != 0 {
		t.Fatalf("while the nodes roll nothing is due, got %v", ch.Due)
	}
	for _, n := range f.nodes {
		n.Status.Revision = objects.NodeTemplateRevision(f.c, n)
	}
	ch = f.check(t)
	if len(ch.Due) != 1 || ch.Due[0] != "gc-tls-trust (previous CA no longer needed)" {
		t.Fatalf("after the roll due %v", ch.Due)
	}
	fixtures.Must(t, f.tls.IssueCertificates(fixtures.Ctx, f.c, f.nodes), "drop the old CA")
	if b := f.secret(t, "gc-tls-trust").Data["ca.crt"]; !bytes.Equal(b, newCA.Data["tls.crt"]) {
		t.Error("after the roll only the new CA is trusted")
	}
}
