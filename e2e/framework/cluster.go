package framework

import (
	"context"
	"fmt"
	"io/fs"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/manifests"
)

// SampleCluster decodes manifests/samples/glustercluster.yaml, names it and
// points its management endpoint at the simulator, with authSecretRef
// naming a Secret CreateSimAuthSecret creates. perTemplate sets every
// template's node count.
func SampleCluster(namespace, name string, g *GD2Sim, perTemplate int32) (*operatorv1alpha1.GlusterCluster, error) {
	raw, err := fs.ReadFile(manifests.Samples, "samples/glustercluster.yaml")
	if err != nil {
		return nil, err
	}
	c := &operatorv1alpha1.GlusterCluster{}
	if err := yaml.UnmarshalStrict(raw, c); err != nil {
		return nil, fmt.Errorf("decode sample cluster: %w", err)
	}
	c.Namespace, c.Name = namespace, name
	for i := range c.Spec.NodeTemplates {
		c.Spec.NodeTemplates[i].Nodes = ptr.To(perTemplate)
	}
	c.Spec.Management = &operatorv1alpha1.ManagementSpec{
		Endpoint:      g.URL,
		AuthSecretRef: &operatorv1alpha1.SecretReference{Name: SimSecretName(name), Key: "secret"},
	}
	return c, nil
}

// SimSecretName is the Secret holding the simulator's auth secret for a
// cluster.
func SimSecretName(cluster string) string { return cluster + "-gd2-sim" }

// CreateSimAuthSecret stores the simulator's secret for cluster.
func (cp *ControlPlane) CreateSimAuthSecret(ctx context.Context, namespace, cluster string, g *GD2Sim) error {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: SimSecretName(cluster)},
		StringData: map[string]string{"secret": g.Secret},
	}
	_, err := cp.Client.CoreV1().Secrets(namespace).Create(ctx, s, metav1.CreateOptions{})
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// ClusterNodes lists the GlusterNodes of cluster.
func ClusterNodes(ctx context.Context, ac versioned.Interface, namespace, cluster string) ([]operatorv1alpha1.GlusterNode, error) {
	l, err := ac.OperatorV1alpha1().GlusterNodes(namespace).List(ctx, metav1.ListOptions{LabelSelector: labels.Everything().String()})
	if err != nil {
		return nil, err
	}
	var out []operatorv1alpha1.GlusterNode
	for _, n := range l.Items {
		if n.Spec.Cluster == cluster {
			out = append(out, n)
		}
	}
	return out, nil
}

// WaitFor polls cond every 250ms until it reports done, fails, or timeout
// passes; the last non-nil progress error is included on timeout.
func WaitFor(ctx context.Context, timeout time.Duration, cond func(ctx context.Context) (bool, error)) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return poll(ctx, 250*time.Millisecond, cond)
}
