package effects

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// EnsureClusterInfra creates, each only if absent, the GD2 auth secret (not
// when the admin supplies one through spec.management.authSecretRef), the
// etcd Service and StatefulSet, the headless Service and the management
// Service. An external cluster runs none of these: it gets only its
// management Service, without a selector, and the EndpointSlices of its
// addresses (SyncEndpoints).
func (o *Kube) EnsureClusterInfra(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if objects.IsExternal(c) {
		return o.SyncEndpoints(ctx, ct)
	}
	if err := o.ensureAuthSecret(ctx, c); err != nil {
		return err
	}
	core := o.Client.CoreV1().Services(c.Namespace)
	for _, svc := range []*corev1.Service{objects.EtcdService(c), objects.HeadlessService(c), objects.ManagementService(c)} {
		if _, err := core.Create(ctx, svc, metav1.CreateOptions{}); ignoreExists(err) != nil {
			return fmt.Errorf("create Service %s/%s: %w", c.Namespace, svc.Name, err)
		}
	}
	etcd := objects.EtcdStatefulSet(c)
	if _, err := o.Client.AppsV1().StatefulSets(c.Namespace).Create(ctx, etcd, metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create StatefulSet %s/%s: %w", c.Namespace, etcd.Name, err)
	}
	return nil
}

// ensureAuthSecret creates the cluster's GD2 auth secret once. An existing
// Secret is never read back, compared or rewritten: every node must keep
// the secret it started with, and a second writer that raced us to the
// create wins (AlreadyExists), which is just as good.
func (o *Kube) ensureAuthSecret(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	name, _ := objects.AuthSecretRef(c)
	if name != objects.AuthSecretName(c.Name) {
		return nil
	}
	secrets := o.Client.CoreV1().Secrets(c.Namespace)
	_, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case err == nil:
		return nil
	case !apierrors.IsNotFound(err):
		return fmt.Errorf("get Secret %s/%s: %w", c.Namespace, name, err)
	}
	value, err := objects.NewAuthSecretValue()
	if err != nil {
		return err
	}
	if _, err := secrets.Create(ctx, objects.AuthSecret(c, value), metav1.CreateOptions{}); ignoreExists(err) != nil {
		return fmt.Errorf("create Secret %s/%s: %w", c.Namespace, name, err)
	}
	return nil
}

// DeleteClusterInfra deletes what EnsureClusterInfra and EnsureCSIDrivers
// created, the disruption budgets, and etcd's PVC (for an external
// cluster: the CSI drivers, its management Service and EndpointSlices; the
// other names are simply not found). It works from names and labels alone,
// so it also completes after the GlusterCluster is gone. The auth secret
// is deleted only if anthill made it: an admin's Secret that happens to
// carry the same name is left alone.
func (o *Kube) DeleteClusterInfra(ctx context.Context, ct transitions.ClusterTarget) error {
	ns := ct.Namespace
	// An external cluster's EndpointSlices (none exist in other modes).
	if err := o.deleteEndpointSlices(ctx, ns, ct.Name); err != nil {
		return err
	}
	etcd := objects.EtcdName(ct.Name)
	err := o.Client.AppsV1().StatefulSets(ns).Delete(ctx, etcd, metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationBackground),
	})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete StatefulSet %s/%s: %w", ns, etcd, err)
	}
	for _, name := range []string{etcd, objects.HeadlessServiceName(ct.Name), objects.ManagementServiceName(ct.Name)} {
		if err := ignoreNotFound(o.Client.CoreV1().Services(ns).Delete(ctx, name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete Service %s/%s: %w", ns, name, err)
		}
	}
	if err := o.deleteCSI(ctx, ns, ct.Name); err != nil {
		return fmt.Errorf("delete CSI drivers of cluster %s/%s: %w", ns, ct.Name, err)
	}
	if err := o.deleteOwnAuthSecret(ctx, ns, ct.Name); err != nil {
		return err
	}
	if err := o.deleteBudgets(ctx, ns, ct.Name, nil); err != nil {
		return err
	}
	sel := labels.SelectorFromSet(labels.Set{objects.LabelCluster: ct.Name, objects.LabelComponent: objects.ComponentEtcd})
	if err := o.deleteClaims(ctx, ns, sel, []string{objects.EtcdDataClaimName(ct.Name)}); err != nil {
		return fmt.Errorf("delete etcd PVCs of cluster %s/%s: %w", ns, ct.Name, err)
	}
	return nil
}

func (o *Kube) deleteOwnAuthSecret(ctx context.Context, ns, cluster string) error {
	name := objects.AuthSecretName(cluster)
	secrets := o.Client.CoreV1().Secrets(ns)
	s, err := secrets.Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil
	case err != nil:
		return fmt.Errorf("get Secret %s/%s: %w", ns, name, err)
	}
	if s.Labels[objects.LabelManagedBy] != objects.ManagedByAnthill || s.Labels[objects.LabelCluster] != cluster {
		return nil
	}
	err = secrets.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &s.UID}})
	if err := ignoreNotFound(err); err != nil {
		return fmt.Errorf("delete Secret %s/%s: %w", ns, name, err)
	}
	return nil
}
