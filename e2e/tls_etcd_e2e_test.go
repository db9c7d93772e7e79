//go:build e2e

package e2e

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/kube/pki"
)

func freeLoopbackPort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// TestTLSEtcdRunsWithTheOperatorsFlags runs the real etcd (the control
// plane's binary) with the command objects.EtcdStatefulSet builds for a
// cluster with TLS, its certificate issued as the operator issues it, and
// only the addresses moved to loopback: etcd serves its client port over
// TLS only, requires a client certificate of the cluster's CA (a node's
// certificate, as GD2 presents it, is accepted; none is refused), and its
// plain metrics listener answers the readiness probe.
func TestTLSEtcdRunsWithTheOperatorsFlags(t *testing.T) {
	sideBySide(t)
	bin, err := framework.BinDir()
	if err != nil {
		t.Fatal(err)
	}
	ca := newTestCA(t, "etcd test CA", true)
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Name: "gc", Namespace: "ns"},
		Spec: operatorv1alpha1.GlusterClusterSpec{CASecretRef: &operatorv1alpha1.SecretReference{Name: "ca"}}}
	authority, err := pki.ParseCA(map[string][]byte{"tls.crt": ca.certPEM, "tls.key": ca.keyPEM}, "tls.crt", time.Now())
	if err != nil {
		t.Fatal(err)
	}
	etcdCert, err := authority.Issue(objects.EtcdCertRequest(c), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	node := &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Name: "gc-a", Namespace: "ns"}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"}}
	nodeCert, err := authority.Issue(objects.NodeCertRequest(c, node), time.Now())
	if err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	tlsDir := filepath.Join(dir, "tls")
	if err := os.MkdirAll(tlsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	for k, v := range objects.TLSSecret(c, "x", etcdCert, ca.certPEM).Data {
		if err := os.WriteFile(filepath.Join(tlsDir, k), v, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	client, peer, metrics := freeLoopbackPort(t), freeLoopbackPort(t), freeLoopbackPort(t)
	sts := objects.EtcdStatefulSet(c)
	var args []string
	for _, a := range sts.Spec.Template.Spec.Containers[0].Command[1:] {
		name, value, _ := strings.Cut(a, "=")
		switch name {
		case "--data-dir":
			value = filepath.Join(dir, "data")
		case "--listen-client-urls", "--advertise-client-urls":
			value = fmt.Sprintf("https://127.0.0.1:%d", client)
		case "--listen-peer-urls", "--initial-advertise-peer-urls":
			value = fmt.Sprintf("https://127.0.0.1:%d", peer)
		case "--listen-metrics-urls":
			value = fmt.Sprintf("http://127.0.0.1:%d", metrics)
		default:
			value = strings.Replace(value, "/etc/etcd/tls", tlsDir, 1)
		}
		args = append(args, name+"="+value)
	}
	if !strings.Contains(strings.Join(args, " "), "--listen-metrics-urls") {
		t.Fatalf("no metrics listener in %v", args)
	}
	framework.StartLogged(t, exec.Command(filepath.Join(bin, "etcd"), args...), filepath.Join(dir, "etcd.log"), "etcd")

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.certPEM)
	pair, err := tls.X509KeyPair(nodeCert.CertPEM, nodeCert.KeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	httpc := func(certs ...tls.Certificate) *http.Client {
		return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
			RootCAs: roots, Certificates: certs, ServerName: "gc-etcd.ns.svc", MinVersion: tls.VersionTLS12,
		}}}
	}
	health := fmt.Sprintf("https://127.0.0.1:%d/health", client)
	if err := framework.WaitFor(context.Background(), 30*time.Second, func(context.Context) (bool, error) {
		resp, err := httpc(pair).Get(health)
		if err != nil {
			return false, err
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, fmt.Errorf("status %d", resp.StatusCode)
	}); err != nil {
		t.Fatalf("etcd over TLS with a node's client certificate: %v", err)
	}
	if resp, err := httpc().Get(health); err == nil {
		_ = resp.Body.Close()
		t.Errorf("etcd answered %d to a client without a certificate", resp.StatusCode)
	}
	if resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", client)); err == nil {
		_ = resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Error("etcd's client port answered plain HTTP")
		}
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/health", metrics))
	if err != nil {
		t.Fatalf("the readiness probe's plain listener: %v", err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("metrics /health %d", resp.StatusCode)
	}
}
