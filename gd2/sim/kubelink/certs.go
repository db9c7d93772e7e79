package kubelink

import (
	"context"
	"crypto/tls"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/gluster/anthill/gd2/sim"
)

// GD2's configuration variables for its REST certificate (cert-file and
// key-file, read from GD2_<NAME>).
const (
	envCertFile = "GD2_CERT_FILE"
	envKeyFile  = "GD2_KEY_FILE"
)

// Certificates serves, for the simulator's TLS listener, the certificate
// each GD2 pod would present: the files its glusterd2 container names in
// GD2_CERT_FILE and GD2_KEY_FILE, read from the Secret volume mounted
// there. A name that addresses no pod (the management Service, an IP
// address) gets the certificate of a Ready pod, as the Service would
// reach one. As GD2 reads its certificate when it starts, a pod keeps the
// certificate first read for it until the pod is replaced: a renewed
// Secret reaches the simulated GD2 only with its next pod.
type Certificates struct {
	Client    kubernetes.Interface
	Namespace string
	Selector  string

	mu     sync.Mutex
	pinned map[types.UID]*tls.Certificate
}

// Source is the sim.CertSource of c.
func (c *Certificates) Source() sim.CertSource {
	return func(serverName string) (*tls.Certificate, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return c.certificate(ctx, serverName)
	}
}

func (c *Certificates) certificate(ctx context.Context, serverName string) (*tls.Certificate, error) {
	list, err := c.Client.CoreV1().Pods(c.Namespace).List(ctx, metav1.ListOptions{LabelSelector: c.Selector})
	if err != nil {
		return nil, fmt.Errorf("list GD2 pods: %w", err)
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	host := serverName
	if i := strings.IndexByte(host, '.'); i >= 0 {
		host = host[:i]
	}
	if host != "" {
		for i := range pods {
			if HostFromPod(&pods[i]).Name == host {
				return c.podCertificate(ctx, &pods[i])
			}
		}
	}
	for i := range pods {
		if podReady(&pods[i]) {
			if cert, err := c.podCertificate(ctx, &pods[i]); err == nil {
				return cert, nil
			}
		}
	}
	return nil, fmt.Errorf("no GD2 pod serves TLS for %q", serverName)
}

// podCertificate reads p's certificate from the Secret mounted where its
// GD2 reads it.
func (c *Certificates) podCertificate(ctx context.Context, p *corev1.Pod) (*tls.Certificate, error) {
	c.mu.Lock()
	if cert, ok := c.pinned[p.UID]; ok {
		c.mu.Unlock()
		return cert, nil
	}
	c.mu.Unlock()
	var certFile, keyFile string
	var ctr *corev1.Container
	for i := range p.Spec.Containers {
		for _, e := range p.Spec.Containers[i].Env {
			switch e.Name {
			case envCertFile:
				certFile, ctr = e.Value, &p.Spec.Containers[i]
			case envKeyFile:
				keyFile = e.Value
			}
		}
	}
	if ctr == nil || certFile == "" || keyFile == "" {
		return nil, fmt.Errorf("pod %s/%s runs GD2 without TLS", p.Namespace, p.Name)
	}
	certPEM, err := c.mountedFile(ctx, p, ctr, certFile)
	if err != nil {
		return nil, err
	}
	keyPEM, err := c.mountedFile(ctx, p, ctr, keyFile)
	if err != nil {
		return nil, err
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("pod %s/%s: unusable key pair", p.Namespace, p.Name)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pinned == nil {
		c.pinned = map[types.UID]*tls.Certificate{}
	}
	c.pinned[p.UID] = &pair
	return &pair, nil
}

// mountedFile reads file from the Secret volume ctr mounts over it.
func (c *Certificates) mountedFile(ctx context.Context, p *corev1.Pod, ctr *corev1.Container, file string) ([]byte, error) {
	for _, m := range ctr.VolumeMounts {
		dir := strings.TrimSuffix(m.MountPath, "/")
		if path.Dir(file) != dir {
			continue
		}
		for _, v := range p.Spec.Volumes {
			if v.Name != m.Name || v.Secret == nil {
				continue
			}
			key := path.Base(file)
			for _, it := range v.Secret.Items {
				if it.Path == key {
					key = it.Key
				}
			}
			sec, err := c.Client.CoreV1().Secrets(p.Namespace).Get(ctx, v.Secret.SecretName, metav1.GetOptions{})
			if err != nil {
				return nil, fmt.Errorf("pod %s/%s: read Secret %s: %w", p.Namespace, p.Name, v.Secret.SecretName, err)
			}
			if len(sec.Data[key]) == 0 {
				return nil, fmt.Errorf("pod %s/%s: Secret %s has no key %q", p.Namespace, p.Name, v.Secret.SecretName, key)
			}
			return sec.Data[key], nil
		}
	}
	return nil, fmt.Errorf("pod %s/%s mounts no Secret at %s", p.Namespace, p.Name, path.Dir(file))
}
