package effects

import (
	"context"
	"fmt"
	"maps"
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/util/retry"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// SyncEndpoints makes an external cluster's management Service and
// EndpointSlices match spec.external.nodes of the live cluster. It reads
// the live objects (not the informer's) and writes only what differs:
// repeating it, or running it on an unchanged spec, writes nothing. A
// cluster that is not external has nothing to sync.
func (o *Kube) SyncEndpoints(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if !objects.IsExternal(c) {
		return nil
	}
	if err := o.syncManagementService(ctx, c); err != nil {
		return err
	}
	return o.syncEndpointSlices(ctx, c)
}

func (o *Kube) syncManagementService(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	want := objects.ExternalManagementService(c)
	services := o.Client.CoreV1().Services(c.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		have, err := services.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = services.Create(ctx, want, metav1.CreateOptions{})
			return ignoreExists(err)
		}
		if err != nil || objects.ServiceMatches(have, want) {
			return err
		}
		have = have.DeepCopy()
		for k, v := range want.Labels {
			if have.Labels == nil {
				have.Labels = map[string]string{}
			}
			have.Labels[k] = v
		}
		have.Spec.Selector = nil
		have.Spec.Ports = want.Spec.Ports
		_, err = services.Update(ctx, have, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		return fmt.Errorf("sync Service %s/%s: %w", c.Namespace, want.Name, err)
	}
	return nil
}

func (o *Kube) syncEndpointSlices(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	api := o.Client.DiscoveryV1().EndpointSlices(c.Namespace)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(objects.EndpointSliceLabels(c.Name)).String()})
	if err != nil {
		return fmt.Errorf("list EndpointSlices of %s/%s: %w", c.Namespace, c.Name, err)
	}
	have := map[string]*discoveryv1.EndpointSlice{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	names := objects.ResolveExternalNames(ctx, o.resolver(), c)
	for _, want := range objects.ExternalEndpointSlices(c, names) {
		h, ok := have[want.Name]
		delete(have, want.Name)
		switch {
		case !ok:
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
				// AlreadyExists: an unlabelled slice of that name is in the
				// way; the update below on the next run needs it listed, so
				// report it rather than pretend success.
				return fmt.Errorf("create EndpointSlice %s/%s: %w", c.Namespace, want.Name, err)
			}
		case h.AddressType != want.AddressType:
			// The address type is immutable: replace the slice.
			if err := ignoreNotFound(api.Delete(ctx, h.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &h.UID}})); err != nil {
				return fmt.Errorf("delete EndpointSlice %s/%s: %w", c.Namespace, h.Name, err)
			}
			if _, err := api.Create(ctx, want, metav1.CreateOptions{}); err != nil {
				return fmt.Errorf("create EndpointSlice %s/%s: %w", c.Namespace, want.Name, err)
			}
		case !objects.SliceMatches(h, want):
			upd := h.DeepCopy()
			for k, v := range want.Labels {
				if upd.Labels == nil {
					upd.Labels = map[string]string{}
				}
				upd.Labels[k] = v
			}
			upd.Endpoints, upd.Ports = want.Endpoints, want.Ports
			// A conflict fails the action; the retry re-reads everything.
			if _, err := api.Update(ctx, upd, metav1.UpdateOptions{}); err != nil {
				return fmt.Errorf("update EndpointSlice %s/%s: %w", c.Namespace, want.Name, err)
			}
		}
	}
	// Slices of an address type the spec no longer uses.
	for _, name := range slices.Sorted(maps.Keys(have)) {
		h := have[name]
		if err := ignoreNotFound(api.Delete(ctx, name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &h.UID}})); err != nil {
			return fmt.Errorf("delete EndpointSlice %s/%s: %w", c.Namespace, name, err)
		}
	}
	return nil
}

// deleteEndpointSlices deletes every EndpointSlice anthill wrote for
// cluster's management Service. NotFound is success.
func (o *Kube) deleteEndpointSlices(ctx context.Context, ns, cluster string) error {
	api := o.Client.DiscoveryV1().EndpointSlices(ns)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(objects.EndpointSliceLabels(cluster)).String()})
	if err != nil {
		return fmt.Errorf("list EndpointSlices of %s/%s: %w", ns, cluster, err)
	}
	for _, s := range list.Items {
		if err := ignoreNotFound(api.Delete(ctx, s.Name, metav1.DeleteOptions{})); err != nil {
			return fmt.Errorf("delete EndpointSlice %s/%s: %w", ns, s.Name, err)
		}
	}
	return nil
}
