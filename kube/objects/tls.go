package objects

import (
	"cmp"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/pki"
)

// TLS: with spec.caSecretRef set the operator issues, from that CA key
// pair, a certificate per Gluster node (GD2's REST server, and its client
// certificate toward etcd), one for the etcd member (client and peer
// port), each in its own Secret owned by the cluster (none for the CSI
// drivers: the 2019 driver cannot present a client certificate, and GD2
// asks for none); TLSTrustSecretName holds the CA bundle every
// client trusts. docs/security.md tells the whole story.

// Data keys of an issued TLS Secret (type kubernetes.io/tls) and of the
// trust Secret.
const (
	TLSCertKey = corev1.TLSCertKey       // "tls.crt"
	TLSKeyKey  = corev1.TLSPrivateKeyKey // "tls.key"
	TLSCAKey   = "ca.crt"
)

// ComponentTLS labels the Secrets holding issued certificates and the
// trust bundle.
const ComponentTLS = "tls"

// AnnotationCertificate on a GlusterNode (and its pod template) is a short
// hash of the certificate issued for it: a renewed or re-issued
// certificate changes the node's template revision, so the node rolls
// through the upgrade machine, heal-gated, like any template change.
const AnnotationCertificate = "operator.gluster.org/certificate"

// Where the GD2 and etcd containers read their certificates.
const (
	gd2TLSDir  = "/etc/glusterd2/tls"
	etcdTLSDir = "/etc/etcd/tls"
	volumeTLS  = "tls"
	// etcdMetricsPort serves etcd's /health and /metrics in plain HTTP
	// when its client port requires client certificates.
	etcdMetricsPort = 2381
)

// TLSEnabled says whether c sets spec.caSecretRef.
func TLSEnabled(c *operatorv1alpha1.GlusterCluster) bool {
	return c.Spec.CASecretRef != nil && c.Spec.CASecretRef.Name != ""
}

// CASecret is the Secret spec.caSecretRef names and the data key of the CA
// certificate in it (key, default tls.crt); its private key is always
// tls.key, as cert-manager's CA issuer reads a CA.
func CASecret(c *operatorv1alpha1.GlusterCluster) (name, certKey string) {
	if !TLSEnabled(c) {
		return "", ""
	}
	return c.Spec.CASecretRef.Name, cmp.Or(c.Spec.CASecretRef.Key, pki.CertKey)
}

// NodeTLSSecretName is the Secret with node's serving certificate.
func NodeTLSSecretName(node string) string { return node + "-tls" }

// EtcdTLSSecretName is the Secret with the certificate of cluster's etcd.
func EtcdTLSSecretName(cluster string) string { return EtcdName(cluster) + "-tls" }

// TLSTrustSecretName is the Secret with the CA bundle (key ca.crt) that
// clients of cluster trust: the current CA and, during a rotation, the
// previous one.
func TLSTrustSecretName(cluster string) string { return cluster + "-tls-trust" }

// managementHosts are the names the management Service is reached by.
func managementHosts(c *operatorv1alpha1.GlusterCluster) []string {
	svc := ManagementServiceName(c.Name)
	return []string{svc, svc + "." + c.Namespace, ManagementHost(c), ManagementHost(c) + ".cluster.local"}
}

// ManagementHost is the management Service's DNS name in the cluster
// (namespace-qualified, without the cluster domain).
func ManagementHost(c *operatorv1alpha1.GlusterCluster) string {
	return fmt.Sprintf("%s.%s.svc", ManagementServiceName(c.Name), c.Namespace)
}

// NodeCertRequest is what node's certificate says: its pod's stable DNS
// name (with and without the cluster domain) and the management Service's
// names, since a request through the Service may reach any node. Pod IP
// addresses are left out: they change with every pod, and a certificate
// that followed them would restart the pod it was issued for. Its usage is
// both server (GD2's REST API) and client (GD2 toward etcd).
func NodeCertRequest(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) pki.Request {
	host := NodePodHost(n.Namespace, c.Name, n.Name)
	return pki.Request{
		CommonName: NodePodName(n.Name),
		DNSNames:   append([]string{host, host + ".cluster.local"}, managementHosts(c)...),
		Usage:      pki.Peer,
	}
}

// EtcdCertRequest is the certificate of c's etcd member: its Service and
// pod names, server and peer (client) usage.
func EtcdCertRequest(c *operatorv1alpha1.GlusterCluster) pki.Request {
	name := EtcdName(c.Name)
	pod := fmt.Sprintf("%s.%s.%s.svc", NodePodName(name), name, c.Namespace)
	svc := fmt.Sprintf("%s.%s.svc", name, c.Namespace)
	return pki.Request{CommonName: name, DNSNames: []string{name, svc, svc + ".cluster.local", pod, pod + ".cluster.local"}, Usage: pki.Peer}
}

// TLSSecret is an issued certificate of c as a Secret owned by c.
func TLSSecret(c *operatorv1alpha1.GlusterCluster, name string, is pki.Issued, bundle []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: clusterObjectMeta(c, name, ComponentTLS),
		Type:       corev1.SecretTypeTLS,
		Data:       map[string][]byte{TLSCertKey: is.CertPEM, TLSKeyKey: is.KeyPEM, TLSCAKey: bundle},
	}
}

// TLSTrustSecret is c's trust bundle Secret.
func TLSTrustSecret(c *operatorv1alpha1.GlusterCluster, bundle []byte) *corev1.Secret {
	return &corev1.Secret{
		ObjectMeta: clusterObjectMeta(c, TLSTrustSecretName(c.Name), ComponentTLS),
		Data:       map[string][]byte{TLSCAKey: bundle},
	}
}

// tlsVolume mounts a TLS secret read-only at dir.
func tlsVolume(secret, dir string) (corev1.Volume, corev1.VolumeMount) {
	return corev1.Volume{Name: volumeTLS, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, DefaultMode: ptr.To[int32](0o400),
		}}},
		corev1.VolumeMount{Name: volumeTLS, MountPath: dir, ReadOnly: true}
}

// gd2TLSEnv configures GD2 for TLS (GD2 reads every option from GD2_<NAME>,
// "-" as "_"): cert-file and key-file make its REST server serve TLS only
// (min 1.2); usetls with the etcd-client-* files make its store connect to
// etcd over TLS, presenting the node's certificate and trusting the
// bundle.
func gd2TLSEnv() []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "GD2_CERT_FILE", Value: gd2TLSDir + "/" + TLSCertKey},
		{Name: "GD2_KEY_FILE", Value: gd2TLSDir + "/" + TLSKeyKey},
		{Name: "GD2_USETLS", Value: "true"},
		{Name: "GD2_ETCD_CLIENT_CERT_FILE", Value: gd2TLSDir + "/" + TLSCertKey},
		{Name: "GD2_ETCD_CLIENT_KEY_FILE", Value: gd2TLSDir + "/" + TLSKeyKey},
		{Name: "GD2_ETCD_CLIENT_CA_FILE", Value: gd2TLSDir + "/" + TLSCAKey},
	}
}

// etcdTLSArgs make etcd serve clients and peers over TLS only, requiring a
// client certificate of the cluster's CA on both.
func etcdTLSArgs() []string {
	return []string{
		"--cert-file=" + etcdTLSDir + "/" + TLSCertKey,
		"--key-file=" + etcdTLSDir + "/" + TLSKeyKey,
		"--trusted-ca-file=" + etcdTLSDir + "/" + TLSCAKey,
		"--client-cert-auth=true",
		"--peer-cert-file=" + etcdTLSDir + "/" + TLSCertKey,
		"--peer-key-file=" + etcdTLSDir + "/" + TLSKeyKey,
		"--peer-trusted-ca-file=" + etcdTLSDir + "/" + TLSCAKey,
		"--peer-client-cert-auth=true",
	}
}

func scheme(tls bool) string {
	if tls {
		return "https"
	}
	return "http"
}
