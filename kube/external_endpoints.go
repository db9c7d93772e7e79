package kube

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/transitions"
)

// External mode: the pool runs outside Kubernetes. anthill publishes its
// addresses as the cluster's management Service — the same name and port
// 24007 as in the other modes, so the CSI driver finds GD2 the same way —
// without a selector, backed by EndpointSlices that anthill writes from
// spec.external.nodes: one slice per address type (IPv4, IPv6, FQDN for
// host names), each endpoint carrying its zone.

// EndpointSliceManagedBy is the value of endpointslice.kubernetes.io/managed-by
// on the slices anthill writes; the EndpointSlice controller leaves slices
// managed by others alone.
const EndpointSliceManagedBy = "anthill.operator.gluster.org"

// ExternalPort is the port GD2 listens on at every external address:
// spec.external.port, default GD2ClientPort.
func ExternalPort(c *operatorv1alpha1.GlusterCluster) int32 {
	if e := c.Spec.External; e != nil && e.Port > 0 {
		return e.Port
	}
	return GD2ClientPort
}

// IsExternal reports whether c's pool runs outside Kubernetes.
func IsExternal(c *operatorv1alpha1.GlusterCluster) bool {
	return c.Spec.Mode == operatorv1alpha1.ClusterModeExternal
}

// GD2Endpoints are the GD2 REST base URLs the operator talks to for c, in
// order of preference: spec.management.endpoint when set; in external mode
// every address of spec.external.nodes at spec.external.port, in spec
// order; otherwise the management Service.
func GD2Endpoints(c *operatorv1alpha1.GlusterCluster) []string {
	if m := c.Spec.Management; m != nil && m.Endpoint != "" {
		return []string{m.Endpoint}
	}
	if !IsExternal(c) || c.Spec.External == nil || len(c.Spec.External.Nodes) == 0 {
		return []string{ManagementEndpoint(c)}
	}
	port := fmt.Sprint(ExternalPort(c))
	out := make([]string, 0, len(c.Spec.External.Nodes))
	for _, n := range c.Spec.External.Nodes {
		out = append(out, "http://"+net.JoinHostPort(n.Address, port))
	}
	return out
}

// ExternalManagementService is the management Service of an external
// cluster: no selector (anthill writes its EndpointSlices), port 24007
// named gd2 forwarding to spec.external.port.
func ExternalManagementService(c *operatorv1alpha1.GlusterCluster) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: clusterObjectMeta(c, ManagementServiceName(c.Name), ComponentManagement),
		Spec: corev1.ServiceSpec{
			Type: corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{{
				Name: portNameGD2, Port: GD2ClientPort, TargetPort: intstr.FromInt32(ExternalPort(c)), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// endpointSliceName is the slice of c's management Service for one
// address type.
func endpointSliceName(cluster string, t discoveryv1.AddressType) string {
	return ManagementServiceName(cluster) + "-" + strings.ToLower(string(t))
}

// endpointSliceLabels select the slices anthill writes for c.
func endpointSliceLabels(cluster string) map[string]string {
	return map[string]string{
		discoveryv1.LabelServiceName: ManagementServiceName(cluster),
		discoveryv1.LabelManagedBy:   EndpointSliceManagedBy,
		LabelCluster:                 cluster,
	}
}

// addressType classifies an external address and returns it in the form
// an EndpointSlice stores (canonical IP text, or the host name).
func addressType(addr string) (discoveryv1.AddressType, string) {
	ip := net.ParseIP(addr)
	switch {
	case ip == nil:
		return discoveryv1.AddressTypeFQDN, addr
	case ip.To4() != nil:
		return discoveryv1.AddressTypeIPv4, ip.To4().String()
	default:
		return discoveryv1.AddressTypeIPv6, ip.String()
	}
}

// ExternalEndpointSlices are the EndpointSlices of c's management Service:
// one per address type present in spec.external.nodes, endpoints sorted by
// address, each Ready (GD2 reachability is the cluster machine's concern,
// not the Service's) and in its zone.
func ExternalEndpointSlices(c *operatorv1alpha1.GlusterCluster) []*discoveryv1.EndpointSlice {
	byType := map[discoveryv1.AddressType][]discoveryv1.Endpoint{}
	if c.Spec.External != nil {
		for _, n := range c.Spec.External.Nodes {
			t, addr := addressType(n.Address)
			ep := discoveryv1.Endpoint{
				Addresses:  []string{addr},
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
			}
			if n.Zone != "" {
				ep.Zone = ptr.To(n.Zone)
			}
			byType[t] = append(byType[t], ep)
		}
	}
	var out []*discoveryv1.EndpointSlice
	for _, t := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6, discoveryv1.AddressTypeFQDN} {
		eps := byType[t]
		if len(eps) == 0 {
			continue
		}
		slices.SortFunc(eps, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(a.Addresses[0], b.Addresses[0]) })
		meta := clusterObjectMeta(c, endpointSliceName(c.Name, t), ComponentManagement)
		for k, v := range endpointSliceLabels(c.Name) {
			meta.Labels[k] = v
		}
		out = append(out, &discoveryv1.EndpointSlice{
			ObjectMeta:  meta,
			AddressType: t,
			Endpoints:   eps,
			Ports: []discoveryv1.EndpointPort{{
				Name: ptr.To(portNameGD2), Port: ptr.To(ExternalPort(c)), Protocol: ptr.To(corev1.ProtocolTCP),
			}},
		})
	}
	return out
}

// serviceMatches reports whether a live management Service has what
// ExternalManagementService sets (the API server fills in the rest).
func serviceMatches(have, want *corev1.Service) bool {
	if len(have.Spec.Selector) > 0 || len(have.Spec.Ports) != len(want.Spec.Ports) || !labelsInclude(have.Labels, want.Labels) {
		return false
	}
	for i, p := range want.Spec.Ports {
		h := have.Spec.Ports[i]
		if h.Name != p.Name || h.Port != p.Port || h.TargetPort != p.TargetPort || h.Protocol != p.Protocol {
			return false
		}
	}
	return true
}

// sliceMatches reports whether a live slice has what want sets.
func sliceMatches(have, want *discoveryv1.EndpointSlice) bool {
	if have.AddressType != want.AddressType || !labelsInclude(have.Labels, want.Labels) ||
		len(have.Endpoints) != len(want.Endpoints) || len(have.Ports) != len(want.Ports) {
		return false
	}
	for i, w := range want.Endpoints {
		h := have.Endpoints[i]
		if !slices.Equal(h.Addresses, w.Addresses) || ptr.Deref(h.Zone, "") != ptr.Deref(w.Zone, "") ||
			ptr.Deref(h.Conditions.Ready, false) != ptr.Deref(w.Conditions.Ready, false) {
			return false
		}
	}
	for i, w := range want.Ports {
		h := have.Ports[i]
		if ptr.Deref(h.Name, "") != ptr.Deref(w.Name, "") || ptr.Deref(h.Port, 0) != ptr.Deref(w.Port, 0) ||
			ptr.Deref(h.Protocol, "") != ptr.Deref(w.Protocol, "") {
			return false
		}
	}
	return true
}

func labelsInclude(have, want map[string]string) bool {
	for k, v := range want {
		if have[k] != v {
			return false
		}
	}
	return true
}

// EndpointsView is what the cluster machine learns about an external
// cluster's published addresses.
type EndpointsView struct {
	// ServiceExists: the management Service exists.
	ServiceExists bool
	// AnyExists: the Service or any slice anthill wrote exists.
	AnyExists bool
	// InSync: the Service and slices match the spec.
	InSync bool
	// Diff says how they differ, for the transition message.
	Diff string
}

// ObserveEndpoints compares c's management Service and EndpointSlices, as
// the listers see them, with what the spec asks for.
func ObserveEndpoints(c *operatorv1alpha1.GlusterCluster, services corev1listers.ServiceLister, slicesL discoveryv1listers.EndpointSliceLister) (EndpointsView, error) {
	var v EndpointsView
	var diffs []string
	svc, err := services.Services(c.Namespace).Get(ManagementServiceName(c.Name))
	switch {
	case apierrors.IsNotFound(err):
		diffs = append(diffs, "create the management Service")
	case err != nil:
		return v, err
	default:
		v.ServiceExists, v.AnyExists = true, true
		if !serviceMatches(svc, ExternalManagementService(c)) {
			diffs = append(diffs, "correct the management Service")
		}
	}
	have, err := slicesL.EndpointSlices(c.Namespace).List(labels.SelectorFromSet(endpointSliceLabels(c.Name)))
	if err != nil {
		return v, err
	}
	if len(have) > 0 {
		v.AnyExists = true
	}
	diffs = append(diffs, diffEndpoints(have, ExternalEndpointSlices(c))...)
	v.InSync = len(diffs) == 0
	v.Diff = summarize(diffs, 6)
	return v, nil
}

// diffEndpoints describes, address by address, how the live slices differ
// from want; objects that differ in another way are named as a whole.
func diffEndpoints(have, want []*discoveryv1.EndpointSlice) []string {
	type ep struct{ zone string }
	addrs := func(ss []*discoveryv1.EndpointSlice) map[string]ep {
		out := map[string]ep{}
		for _, s := range ss {
			for _, e := range s.Endpoints {
				for _, a := range e.Addresses {
					out[a] = ep{zone: ptr.Deref(e.Zone, "")}
				}
			}
		}
		return out
	}
	h, w := addrs(have), addrs(want)
	var out []string
	for _, a := range slices.Sorted(maps.Keys(w)) {
		old, ok := h[a]
		switch {
		case !ok:
			out = append(out, "add "+a)
		case old.zone != w[a].zone:
			out = append(out, fmt.Sprintf("zone of %s %q -> %q", a, old.zone, w[a].zone))
		}
	}
	for _, a := range slices.Sorted(maps.Keys(h)) {
		if _, ok := w[a]; !ok {
			out = append(out, "remove "+a)
		}
	}
	if len(out) > 0 {
		return out
	}
	byName := map[string]*discoveryv1.EndpointSlice{}
	for _, s := range have {
		byName[s.Name] = s
	}
	for _, s := range want {
		if hs, ok := byName[s.Name]; !ok || !sliceMatches(hs, s) {
			out = append(out, "rewrite EndpointSlice "+s.Name)
		}
		delete(byName, s.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(byName)) {
		out = append(out, "delete EndpointSlice "+name)
	}
	return out
}

// summarize joins at most n items and counts the rest.
func summarize(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
}

// SyncEndpoints makes an external cluster's management Service and
// EndpointSlices match spec.external.nodes of the live cluster. It reads
// the live objects (not the informer's) and writes only what differs:
// repeating it, or running it on an unchanged spec, writes nothing. A
// cluster that is not external has nothing to sync.
func (o *KubeOps) SyncEndpoints(ctx context.Context, ct transitions.ClusterTarget) error {
	c, err := o.getCluster(ctx, ct.Namespace, ct.Name)
	if err != nil {
		return err
	}
	if !IsExternal(c) {
		return nil
	}
	if err := o.syncManagementService(ctx, c); err != nil {
		return err
	}
	return o.syncEndpointSlices(ctx, c)
}

func (o *KubeOps) syncManagementService(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	want := ExternalManagementService(c)
	services := o.Client.CoreV1().Services(c.Namespace)
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		have, err := services.Get(ctx, want.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			_, err = services.Create(ctx, want, metav1.CreateOptions{})
			return ignoreExists(err)
		}
		if err != nil || serviceMatches(have, want) {
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

func (o *KubeOps) syncEndpointSlices(ctx context.Context, c *operatorv1alpha1.GlusterCluster) error {
	api := o.Client.DiscoveryV1().EndpointSlices(c.Namespace)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(endpointSliceLabels(c.Name)).String()})
	if err != nil {
		return fmt.Errorf("list EndpointSlices of %s/%s: %w", c.Namespace, c.Name, err)
	}
	have := map[string]*discoveryv1.EndpointSlice{}
	for i := range list.Items {
		have[list.Items[i].Name] = &list.Items[i]
	}
	for _, want := range ExternalEndpointSlices(c) {
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
		case !sliceMatches(h, want):
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
func (o *KubeOps) deleteEndpointSlices(ctx context.Context, ns, cluster string) error {
	api := o.Client.DiscoveryV1().EndpointSlices(ns)
	list, err := api.List(ctx, metav1.ListOptions{LabelSelector: labels.SelectorFromSet(endpointSliceLabels(cluster)).String()})
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
