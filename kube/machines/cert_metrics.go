package machines

import (
	"crypto/x509"
	"encoding/pem"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"

	"github.com/gluster/anthill/kube/objects"
)

// CertificateCollector exports when each certificate anthill issued (a
// GlusterNode's, a cluster's etcd and CSI certificates: docs/security.md)
// ends, read at scrape time from the Secrets informer, as the
// StateCollector reads its gauges: the Secret is the one source, so a
// renewed certificate's new end shows at the next scrape and a deleted
// Secret's series goes with it. Labels are bounded by the Secrets that
// exist. The trust bundle (no tls.crt) and a Secret whose certificate
// cannot be parsed have no series: anthill re-issues those itself, and
// the cluster's TLS condition names them.
type CertificateCollector struct {
	Secrets corev1listers.SecretLister

	expiry *prometheus.Desc
}

// NewCertificateCollector builds the collector over the lister of
// anthill's labelled Secrets.
func NewCertificateCollector(secrets corev1listers.SecretLister) *CertificateCollector {
	return &CertificateCollector{
		Secrets: secrets,
		expiry: prometheus.NewDesc("anthill_certificate_expiry_timestamp_seconds",
			"When the certificate anthill issued into the Secret ends (its NotAfter, Unix time); anthill renews it 30 days ahead.",
			[]string{"namespace", "cluster", "secret"}, nil),
	}
}

// tlsSecrets selects the Secrets of issued certificates and the trust
// bundle.
var tlsSecrets = labels.SelectorFromSet(labels.Set{objects.LabelComponent: objects.ComponentTLS, objects.LabelManagedBy: objects.ManagedByAnthill})

// Describe sends the metric's description.
func (c *CertificateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.expiry }

// Collect sends the end of every issued certificate.
func (c *CertificateCollector) Collect(ch chan<- prometheus.Metric) {
	secrets, err := c.Secrets.List(tlsSecrets)
	if err != nil {
		return
	}
	for _, s := range secrets {
		cluster := s.Labels[objects.LabelCluster]
		if cluster == "" {
			continue
		}
		block, _ := pem.Decode(s.Data[objects.TLSCertKey])
		if block == nil {
			continue
		}
		cert, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			continue
		}
		ch <- prometheus.MustNewConstMetric(c.expiry, prometheus.GaugeValue, float64(cert.NotAfter.Unix()), s.Namespace, cluster, s.Name)
	}
}
