//go:build e2e

package e2e

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
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// testCA is a CA key pair as a cert-manager CA secret holds it.
type testCA struct{ certPEM, keyPEM []byte }

func newTestCA(t *testing.T, name string, isCA bool) testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(365 * 24 * time.Hour),
		IsCA: isCA, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	if !isCA {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return testCA{
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}),
	}
}

// issueServer signs a server certificate for ip with ca.
func issueServer(t *testing.T, ca testCA, ip string) tls.Certificate {
	t.Helper()
	caPair, err := tls.X509KeyPair(ca.certPEM, ca.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caPair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: "pool"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP(ip)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caPair.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

func createCASecret(t *testing.T, ns, name string, ca testCA) {
	t.Helper()
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{"tls.crt": ca.certPEM, "tls.key": ca.keyPEM},
	}
	if _, err := env.Client.CoreV1().Secrets(ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createTLSCluster starts a simulator serving TLS with the pods'
// certificates and creates the sample cluster with caSecretRef.
func createTLSCluster(t *testing.T, ns, name, caSecret string, perTemplate int32) {
	t.Helper()
	ctx := context.Background()
	o := defaultSimOptions
	o.TLS = true
	startSim(t, ns, o)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, simOf(t), perTemplate)
	if err != nil {
		t.Fatal(err)
	}
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: caSecret}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// tlsClient is a GD2 client of the simulator that trusts caPEM and checks
// the server as serverName, dialling the simulator whatever the name.
func tlsClient(t *testing.T, caPEM []byte, serverName string) *gd2.Client {
	t.Helper()
	u, err := url.Parse(simOf(t).URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := gd2.New(gd2.Options{
		Endpoint: "https://" + serverName + ":24007", DialAddress: u.Host,
		Secret: simOf(t).Secret, CACert: caPEM, Retry: &gd2.RetryPolicy{MaxAttempts: 1},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestTLS: a cluster created with a CA comes up with every GD2 call of the
// operator over TLS verified against that CA (the simulator serves TLS
// only, each pod presenting the certificate the operator issued into its
// Secret, and counts handshakes and plain-HTTP attempts), across a
// SIGKILL of the operator; a CA secret that cannot issue holds a cluster
// in Pending with a condition naming the Secret and the problem, and
// fixing the Secret lets it start.
func TestTLS(t *testing.T) {
	sideBySide(t)
	t.Run("a cluster with a CA comes up over verified TLS across a SIGKILL", func(t *testing.T) {
		ctx := context.Background()
		ns := newNamespace(t)
		const name = "tls"
		ca := newTestCA(t, "anthill e2e CA", true)
		createCASecret(t, ns, "gluster-ca", ca)
		start := time.Now()
		createTLSCluster(t, ns, name, "gluster-ca", 1)
		// SIGKILL once the first node's certificate is issued and it is on
		// its way.
		if err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			nodes, desc, err := nodeStates(ctx, ns, name)
			for _, n := range nodes {
				if n.Status.State == "Joining" || n.Status.State == "Online" {
					return true, nil
				}
			}
			return false, fmt.Errorf("nodes: %s (%v)", desc, err)
		}); err != nil {
			t.Fatal(err)
		}
		restartOperator(t)
		nodes := waitNodes(t, ns, name, 3, 4*time.Minute)
		t.Logf("3 nodes Online over TLS after %s", time.Since(start).Round(time.Second))
		noViolations(t)

		st := simOf(t).TLS
		mgmt := fmt.Sprintf("%s-mgmt.%s.svc", name, ns)
		if st.PlainHTTP.Load() != 0 {
			t.Errorf("%d plain-HTTP connections reached a TLS-only GD2", st.PlainHTTP.Load())
		}
		if st.HandshakesFor(mgmt) == 0 {
			t.Errorf("no handshake asked for the management Service %s (%d in all)", mgmt, st.Handshakes.Load())
		}

		// Every issued Secret is the cluster's and labelled; the trust
		// bundle is the CA.
		trust, err := env.Client.CoreV1().Secrets(ns).Get(ctx, name+"-tls-trust", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if string(trust.Data["ca.crt"]) != string(ca.certPEM) {
			t.Error("the trust bundle is not the CA")
		}
		want := []string{name + "-etcd-tls"}
		for n := range nodes {
			want = append(want, n+"-tls")
		}
		for _, s := range want {
			sec, err := env.Client.CoreV1().Secrets(ns).Get(ctx, s, metav1.GetOptions{})
			if err != nil {
				t.Errorf("secret %s: %v", s, err)
				continue
			}
			if len(sec.OwnerReferences) != 1 || sec.OwnerReferences[0].Kind != "GlusterCluster" || sec.Labels["operator.gluster.org/cluster"] != name {
				t.Errorf("secret %s: owners %v labels %v", s, sec.OwnerReferences, sec.Labels)
			}
		}

		// The pods run GD2 with TLS, and etcd serves https.
		for n := range nodes {
			pod, err := env.Client.CoreV1().Pods(ns).Get(ctx, n+"-0", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{}
			for _, e := range pod.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
			if env["GD2_CERT_FILE"] == "" || env["GD2_KEY_FILE"] == "" || !strings.HasPrefix(env["GD2_ETCDENDPOINTS"], "https://") {
				t.Errorf("pod %s env %v", pod.Name, env)
			}
		}
		etcd, err := env.Client.AppsV1().StatefulSets(ns).Get(ctx, name+"-etcd", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cmd := strings.Join(etcd.Spec.Template.Spec.Containers[0].Command, " ")
		for _, arg := range []string{"--listen-client-urls=https://", "--client-cert-auth=true", "--peer-client-cert-auth=true"} {
			if !strings.Contains(cmd, arg) {
				t.Errorf("etcd runs without %s: %s", arg, cmd)
			}
		}

		// What a client sees: the management Service and each node by
		// its own name verify against the CA; another CA is refused;
		// plain HTTP is refused.
		if _, err := tlsClient(t, ca.certPEM, mgmt).ListPeers(ctx, gd2.Filter{}); err != nil {
			t.Errorf("the management Service over TLS: %v", err)
		}
		for n := range nodes {
			host := fmt.Sprintf("%s-0.%s-nodes.%s.svc", n, name, ns)
			before := st.HandshakesFor(host)
			if err := tlsClient(t, ca.certPEM, host).Ping(ctx); err != nil {
				t.Errorf("node %s by its own name: %v", n, err)
			}
			if st.HandshakesFor(host) != before+1 {
				t.Errorf("node %s: the handshake was not made for its name", n)
			}
		}
		other := newTestCA(t, "another CA", true)
		var certErr *tls.CertificateVerificationError
		if err := tlsClient(t, other.certPEM, mgmt).Ping(ctx); !errors.As(err, &certErr) {
			t.Errorf("a client trusting another CA: %v, want a certificate verification error", err)
		}
		plain := strings.Replace(simOf(t).URL, "https://", "http://", 1) + "/ping"
		if resp, err := http.Get(plain); err == nil {
			b, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("plain HTTP got %d %q", resp.StatusCode, b)
			}
		}
		if st.PlainHTTP.Load() != 1 {
			t.Errorf("plain-HTTP attempts %d, want exactly the test's own", st.PlainHTTP.Load())
		}

		t.Run("a CA rotation rolls every node heal-gated, trusting both CAs until the roll ends", func(t *testing.T) {
			untrustedBefore := strings.Count(operatorOf(t).Logs(), "unknown authority")
			next := newTestCA(t, "anthill e2e CA, rotated", true)
			since := time.Now()
			sec, err := env.Client.CoreV1().Secrets(ns).Get(ctx, "gluster-ca", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			sec.Data = map[string][]byte{"tls.crt": next.certPEM, "tls.key": next.keyPEM}
			if _, err := env.Client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			bundle := func(ctx context.Context) (string, error) {
				s, err := env.Client.CoreV1().Secrets(ns).Get(ctx, name+"-tls-trust", metav1.GetOptions{})
				if err != nil {
					return "", err
				}
				return string(s.Data["ca.crt"]), nil
			}
			if err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
				b, err := bundle(ctx)
				return strings.Contains(b, string(next.certPEM)) && strings.Contains(b, string(ca.certPEM)), err
			}); err != nil {
				t.Fatalf("the bundle never held both CAs: %v", err)
			}
			waitRunState(t, ns, name, "Complete", since, 6*time.Minute)
			if err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
				b, err := bundle(ctx)
				return b == string(next.certPEM), err
			}); err != nil {
				t.Fatalf("after the roll the bundle must hold the new CA only: %v", err)
			}
			waitNodes(t, ns, name, 3, 2*time.Minute)
			if _, err := tlsClient(t, next.certPEM, mgmt).ListPeers(ctx, gd2.Filter{}); err != nil {
				t.Errorf("the management Service on the new CA: %v", err)
			}
			for n := range nodes {
				host := fmt.Sprintf("%s-0.%s-nodes.%s.svc", n, name, ns)
				if err := tlsClient(t, next.certPEM, host).Ping(ctx); err != nil {
					t.Errorf("node %s on the new CA: %v", n, err)
				}
			}
			if after := strings.Count(operatorOf(t).Logs(), "unknown authority"); after != untrustedBefore {
				t.Errorf("the operator distrusted a server %d time(s) during the rotation", after-untrustedBefore)
			}
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, h := range c.Status.History {
				if h.Time.After(since) && h.To == "Degraded" {
					t.Errorf("the cluster degraded during the rotation: %+v", h)
				}
			}
			t.Logf("CA rotation rolled 3 nodes in %s", time.Since(since).Round(time.Second))
			noViolations(t)
		})
	})

	t.Run("a CA secret that cannot issue holds the cluster and says why; fixing it starts the cluster", func(t *testing.T) {
		ctx := context.Background()
		ns := newNamespace(t)
		const name = "tlsbad"
		createCASecret(t, ns, "not-a-ca", newTestCA(t, "a leaf", false))
		createTLSCluster(t, ns, name, "not-a-ca", 1)
		var msg string
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Reason == "CAInvalid" {
					msg = cond.Message
					return c.Status.Phase == "Pending", fmt.Errorf("phase %s", c.Status.Phase)
				}
			}
			return false, fmt.Errorf("phase %s conditions %+v", c.Status.Phase, c.Status.Conditions)
		})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, ns+"/not-a-ca") || !strings.Contains(msg, "is not a CA") {
			t.Errorf("the condition must name the Secret and the problem: %q", msg)
		}
		nodes, err := framework.ClusterNodes(ctx, anthill, ns, name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Client.AppsV1().StatefulSets(ns).Get(ctx, name+"-etcd", metav1.GetOptions{}); len(nodes) != 0 || !apierrors.IsNotFound(err) {
			t.Errorf("with a bad CA nothing may start: %d nodes, etcd %v", len(nodes), err)
		}
		events, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(events.Items, func(e corev1.Event) bool { return e.Reason == "CAInvalid" && e.Type == corev1.EventTypeWarning }) {
			t.Error("no Warning event CAInvalid")
		}

		// The admin puts a CA in the Secret: the cluster starts.
		good := newTestCA(t, "the right CA", true)
		sec, err := env.Client.CoreV1().Secrets(ns).Get(ctx, "not-a-ca", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sec.Data = map[string][]byte{"tls.crt": good.certPEM, "tls.key": good.keyPEM}
		if _, err := env.Client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitNodes(t, ns, name, 3, 4*time.Minute)
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if cond := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionReady); cond == nil || cond.Reason == "CAInvalid" {
			t.Errorf("Ready condition %+v", cond)
		}
		noViolations(t)
	})

	t.Run("external mode: a pool whose certificate the CA does not verify is refused and surfaced; the right CA makes it Ready", func(t *testing.T) {
		ctx := context.Background()
		ns := newNamespace(t)
		const name = "tlsext"
		poolCA := newTestCA(t, "the pool's CA", true)
		pair := issueServer(t, poolCA, "127.0.0.1")
		o := defaultSimOptions
		o.TLS, o.Certificates = true, func(string) (*tls.Certificate, error) { return &pair, nil }
		s := startSim(t, ns, o)
		g, err := gd2.New(gd2.Options{Endpoint: s.URL, Secret: s.Secret, CACert: poolCA.certPEM})
		if err != nil {
			t.Fatal(err)
		}
		buildPool(t, s, g)
		wrong := newTestCA(t, "not the pool's CA", true)
		if _, err := env.Client.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "pool-ca"},
			Data:       map[string][]byte{"tls.crt": wrong.certPEM},
		}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if err := env.CreateSimAuthSecret(ctx, ns, name, s); err != nil {
			t.Fatal(err)
		}
		c := &operatorv1alpha1.GlusterCluster{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
			Spec: operatorv1alpha1.GlusterClusterSpec{
				Mode: operatorv1alpha1.ClusterModeExternal,
				External: &operatorv1alpha1.ExternalSpec{Nodes: []operatorv1alpha1.ExternalNode{
					{Address: "gluster-1.storage.example.com", Zone: "rack-1"},
				}},
				Management: &operatorv1alpha1.ManagementSpec{
					Endpoint:      s.URL,
					AuthSecretRef: &operatorv1alpha1.SecretReference{Name: framework.SimSecretName(name), Key: "secret"},
				},
				CASecretRef: &operatorv1alpha1.SecretReference{Name: "pool-ca"},
			},
		}
		if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		var msg string
		if err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, cond := range c.Status.Conditions {
				if cond.Reason == "GD2Untrusted" {
					msg = cond.Message
					return true, nil
				}
			}
			return false, fmt.Errorf("phase %s conditions %+v", c.Status.Phase, c.Status.Conditions)
		}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(msg, "unknown authority") || !strings.Contains(msg, s.URL) {
			t.Errorf("the condition must say whose certificate and why: %q", msg)
		}
		if s.TLS.Failures.Load() == 0 {
			t.Error("the simulator saw no refused handshake")
		}

		// The admin puts the pool's CA in the Secret.
		sec, err := env.Client.CoreV1().Secrets(ns).Get(ctx, "pool-ca", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		sec.Data = map[string][]byte{"tls.crt": poolCA.certPEM}
		if _, err := env.Client.CoreV1().Secrets(ns).Update(ctx, sec, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitExternalReady(t, ns, name, "archive")
		trust, err := env.Client.CoreV1().Secrets(ns).Get(ctx, name+"-tls-trust", metav1.GetOptions{})
		if err != nil || string(trust.Data["ca.crt"]) != string(poolCA.certPEM) {
			t.Errorf("trust bundle %v", err)
		}
		if s.TLS.PlainHTTP.Load() != 0 || s.TLS.HandshakesFor("") == 0 {
			t.Errorf("plain HTTP %d, handshakes without SNI (an IP address) %d", s.TLS.PlainHTTP.Load(), s.TLS.HandshakesFor(""))
		}
		noViolations(t)
	})

	t.Run("caSecretRef cannot be switched off or on for a running cluster", func(t *testing.T) {
		ctx := context.Background()
		ns := newNamespace(t)
		c, err := framework.SampleCluster(ns, "fixed", &framework.GD2Sim{URL: "http://127.0.0.1:1"}, 1)
		if err != nil {
			t.Fatal(err)
		}
		c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "ca"}
		if c, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		// The operator may write the cluster (its finalizer, its status)
		// between the create and the update: a conflict is retried on the
		// latest copy, as kubectl edit would.
		err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
			live, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, c.Name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			live.Spec.CASecretRef = nil
			_, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Update(ctx, live, metav1.UpdateOptions{})
			return err
		})
		if !apierrors.IsInvalid(err) || !strings.Contains(err.Error(), "spec.caSecretRef is fixed at creation") {
			t.Errorf("switching TLS off: %v", err)
		}
	})
}
