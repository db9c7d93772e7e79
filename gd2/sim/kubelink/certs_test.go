package kubelink

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

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
)

func pemPair(t *testing.T, cn string) (certPEM, keyPEM []byte) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder})
}

func tlsPod(name, secret string, uid types.UID) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: uid, Labels: map[string]string{"app": "gd2"}},
		Spec: corev1.PodSpec{
			Hostname: name, Subdomain: "gc-nodes",
			Containers: []corev1.Container{{
				Name: "glusterd2",
				Env: []corev1.EnvVar{
					{Name: "GD2_CERT_FILE", Value: "/etc/glusterd2/tls/tls.crt"},
					{Name: "GD2_KEY_FILE", Value: "/etc/glusterd2/tls/tls.key"},
				},
				VolumeMounts: []corev1.VolumeMount{{Name: "tls", MountPath: "/etc/glusterd2/tls"}},
			}},
			Volumes: []corev1.Volume{{Name: "tls", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{SecretName: secret}}}},
		},
		Status: corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
}

func tlsSecret(name string, certPEM, keyPEM []byte) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
		Data: map[string][]byte{"tls.crt": certPEM, "tls.key": keyPEM}}
}

func commonName(t *testing.T, src func(string) (string, error), name string) string {
	t.Helper()
	cn, err := src(name)
	if err != nil {
		t.Fatalf("certificate for %q: %v", name, err)
	}
	return cn
}

func TestCertificatesServeEachPodItsOwnSecretPinnedUntilThePodIsReplaced(t *testing.T) {
	aCert, aKey := pemPair(t, "a")
	bCert, bKey := pemPair(t, "b")
	cs := fake.NewClientset(tlsPod("gc-a-0", "gc-a-tls", "uid-a"), tlsPod("gc-b-0", "gc-b-tls", "uid-b"),
		tlsSecret("gc-a-tls", aCert, aKey), tlsSecret("gc-b-tls", bCert, bKey))
	certs := &Certificates{Client: cs, Namespace: "ns", Selector: "app=gd2"}
	src := func(name string) (string, error) {
		c, err := certs.Source()(name)
		if err != nil {
			return "", err
		}
		leaf, err := x509.ParseCertificate(c.Certificate[0])
		if err != nil {
			return "", err
		}
		return leaf.Subject.CommonName, nil
	}
	if got := commonName(t, src, "gc-b-0.gc-nodes.ns.svc"); got != "b" {
		t.Errorf("a pod's own name gets %q, want its own certificate b", got)
	}
	if got := commonName(t, src, "gc-mgmt.ns.svc"); got != "a" {
		t.Errorf("the management Service gets %q, want a Ready pod's (a, the first by name)", got)
	}

	// The Secret is renewed: the running pod keeps the certificate it
	// started with; its replacement serves the new one.
	nCert, nKey := pemPair(t, "a-renewed")
	if _, err := cs.CoreV1().Secrets("ns").Update(t.Context(), tlsSecret("gc-a-tls", nCert, nKey), metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := commonName(t, src, "gc-a-0.gc-nodes.ns.svc"); got != "a" {
		t.Errorf("a running pod serves %q; GD2 reads its certificate at start", got)
	}
	if err := cs.CoreV1().Pods("ns").Delete(t.Context(), "gc-a-0", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods("ns").Create(t.Context(), tlsPod("gc-a-0", "gc-a-tls", "uid-a2"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := commonName(t, src, "gc-a-0.gc-nodes.ns.svc"); got != "a-renewed" {
		t.Errorf("the replaced pod serves %q, want the renewed certificate", got)
	}

	plain := tlsPod("gc-c-0", "", "uid-c")
	plain.Spec.Containers[0].Env = nil
	if _, err := cs.CoreV1().Pods("ns").Create(t.Context(), plain, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := src("gc-c-0.gc-nodes.ns.svc"); err == nil {
		t.Error("a pod running GD2 without TLS has no certificate to serve")
	}
}
