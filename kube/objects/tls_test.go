package objects

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

func tlsFixture() (*operatorv1alpha1.GlusterCluster, *operatorv1alpha1.GlusterNode) {
	c := fixtures.Cluster("gc")
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "gluster-ca"}
	return c, fixtures.Node("gc", "gc-a", fixtures.PVCStorage(1))
}

func envOf(ctr corev1.Container) map[string]string {
	out := map[string]string{}
	for _, e := range ctr.Env {
		out[e.Name] = e.Value
	}
	return out
}

func TestTLSNodePodServesTLSFromItsOwnSecret(t *testing.T) {
	c, n := tlsFixture()
	sts := NodeStatefulSet(c, n, "4.1.0")
	spec := sts.Spec.Template.Spec
	env := envOf(spec.Containers[0])
	if env["GD2_CERT_FILE"] != "/etc/glusterd2/tls/tls.crt" || env["GD2_KEY_FILE"] != "/etc/glusterd2/tls/tls.key" || env["GD2_USETLS"] != "true" {
		t.Errorf("GD2 TLS env %v", env)
	}
	if env["GD2_ETCD_CLIENT_CA_FILE"] != "/etc/glusterd2/tls/ca.crt" || env["GD2_ETCDENDPOINTS"] != "https://gc-etcd.storage.svc:2379" {
		t.Errorf("GD2 etcd env %v", env)
	}
	i := slices.IndexFunc(spec.Volumes, func(v corev1.Volume) bool { return v.Secret != nil && v.Secret.SecretName == "gc-a-tls" })
	if i < 0 {
		t.Fatalf("the pod does not mount its certificate Secret: %+v", spec.Volumes)
	}
	if spec.Containers[0].ReadinessProbe.HTTPGet.Scheme != corev1.URISchemeHTTPS {
		t.Error("GD2 serves only TLS: the probe must use https")
	}

	plain := fixtures.Cluster("gc")
	if NodeTemplateRevision(plain, n) == NodeTemplateRevision(c, n) {
		t.Error("switching TLS on must change the template revision")
	}
	before := NodeTemplateRevision(c, n)
	n.Annotations = map[string]string{AnnotationCertificate: "abc"}
	if NodeTemplateRevision(c, n) == before {
		t.Error("a new certificate must change the template revision (a heal-gated roll)")
	}
	if NodeStatefulSet(c, n, "4.1.0").Spec.Template.Annotations[AnnotationCertificate] != "abc" {
		t.Error("the pod template carries the certificate hash")
	}
}

func TestTLSCertificateNamesAndEndpoints(t *testing.T) {
	c, n := tlsFixture()
	r := NodeCertRequest(c, n)
	for _, want := range []string{"gc-a-0.gc-nodes.storage.svc", "gc-a-0.gc-nodes.storage.svc.cluster.local", "gc-mgmt", "gc-mgmt.storage", "gc-mgmt.storage.svc", "gc-mgmt.storage.svc.cluster.local"} {
		if !slices.Contains(r.DNSNames, want) {
			t.Errorf("node certificate lacks %s: %v", want, r.DNSNames)
		}
	}
	if len(r.IPs) != 0 {
		t.Error("pod IPs change with every pod and are not certified")
	}
	e := EtcdCertRequest(c)
	if !slices.Contains(e.DNSNames, "gc-etcd.storage.svc") || !slices.Contains(e.DNSNames, "gc-etcd-0.gc-etcd.storage.svc") {
		t.Errorf("etcd names %v", e.DNSNames)
	}
	if got := ManagementEndpoint(c); got != "https://gc-mgmt.storage.svc:24007" {
		t.Errorf("management endpoint %s", got)
	}
	if got := NodeEndpoint(c, n); !strings.HasPrefix(got, "https://gc-a-0.") {
		t.Errorf("node endpoint %s", got)
	}
	etcd := EtcdStatefulSet(c).Spec.Template.Spec
	cmd := strings.Join(etcd.Containers[0].Command, " ")
	for _, arg := range []string{"--listen-client-urls=https://0.0.0.0:2379", "--advertise-client-urls=https://", "--client-cert-auth=true", "--peer-client-cert-auth=true", "--listen-peer-urls=https://"} {
		if !strings.Contains(cmd, arg) {
			t.Errorf("etcd command lacks %s: %s", arg, cmd)
		}
	}
	if etcd.Containers[0].ReadinessProbe.HTTPGet.Port.IntValue() != etcdMetricsPort {
		t.Error("the kubelet has no client certificate: etcd's probe uses the plain metrics listener")
	}
	if etcd.Volumes[0].Secret.SecretName != "gc-etcd-tls" {
		t.Errorf("etcd volumes %+v", etcd.Volumes)
	}
}

func TestTLSOffChangesNothing(t *testing.T) {
	c := fixtures.Cluster("gc")
	n := fixtures.Node("gc", "gc-a", fixtures.PVCStorage(1))
	n.Annotations = map[string]string{AnnotationCertificate: "stale"}
	env := envOf(NodeStatefulSet(c, n, "4.1.0").Spec.Template.Spec.Containers[0])
	if _, ok := env["GD2_CERT_FILE"]; ok || env["GD2_ETCDENDPOINTS"] != "http://gc-etcd.storage.svc:2379" {
		t.Errorf("without caSecretRef GD2 runs plain: %v", env)
	}
	if _, ok := NodeStatefulSet(c, n, "4.1.0").Spec.Template.Annotations[AnnotationCertificate]; ok {
		t.Error("without TLS the certificate annotation is not in the template")
	}
	if strings.Contains(strings.Join(EtcdStatefulSet(c).Spec.Template.Spec.Containers[0].Command, " "), "https") {
		t.Error("without TLS etcd runs plain")
	}
}
