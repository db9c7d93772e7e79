package effects

import (
	"context"
	"fmt"
	"net"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// Kube implements transitions.KubeOps against the Kubernetes API. It
// reads live objects from the API server, not from listers: an action must
// act on the state as it is now, not as an informer last saw it.
type Kube struct {
	Client  kubernetes.Interface
	Anthill versioned.Interface
	// NameSuffix returns the random suffix of a new GlusterNode name; nil
	// means 5 random lowercase alphanumerics.
	NameSuffix func() string
	// TLS issues certificates for clusters with spec.caSecretRef; nil
	// builds one from Client and Anthill.
	TLS *TLS
	// Resolver looks up an external cluster's host names; nil is
	// net.DefaultResolver.
	Resolver objects.HostResolver
	// Snapshots reads and writes the snapshot API for clusters with
	// spec.csi.snapshots; nil leaves their VolumeSnapshotClasses alone.
	Snapshots *SnapshotAPI
}

// resolver is o.Resolver, or net.DefaultResolver.
func (o *Kube) resolver() objects.HostResolver {
	if o.Resolver != nil {
		return o.Resolver
	}
	return net.DefaultResolver
}

func (o *Kube) tls() *TLS {
	if o.TLS != nil {
		return o.TLS
	}
	return &TLS{Client: o.Client, Anthill: o.Anthill}
}

// IssueCertificates writes c's trust bundle and every due certificate
// (TLS.IssueCertificates).
func (o *Kube) IssueCertificates(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	nodes, err := o.clusterNodes(ctx, c.Namespace, c.Name)
	if err != nil {
		return err
	}
	return o.tls().IssueCertificates(ctx, c, nodes)
}

var _ transitions.KubeOps = (*Kube)(nil)

// ignoreExists makes AlreadyExists success: every create here is
// create-if-absent and never replaces what is there.
func ignoreExists(err error) error {
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ignoreNotFound makes NotFound success: every delete here is idempotent.
func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

func (o *Kube) getCluster(ctx context.Context, namespace, name string) (*operatorv1alpha1.GlusterCluster, error) {
	c, err := o.Anthill.OperatorV1alpha1().GlusterClusters(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("get GlusterCluster %s/%s: %w", namespace, name, err)
	}
	return c, nil
}
