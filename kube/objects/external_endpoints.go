package objects

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// External mode: the pool runs outside Kubernetes. anthill publishes its
// addresses as the cluster's management Service — the same name and port
// 24007 as in the other modes, so the CSI driver finds GD2 the same way —
// without a selector, backed by EndpointSlices that anthill writes from
// spec.external.nodes: one slice per address family (IPv4, IPv6), each
// endpoint carrying its zone. A host name goes in as the addresses it
// resolves to: kube-proxy programs no FQDN slice, so a Service backed by
// one would route nowhere (ResolveExternalNames).

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
		// With a CA the pool serves TLS only, as the management Service
		// does: dial it over https (docs/security.md).
		out = append(out, scheme(TLSEnabled(c))+"://"+net.JoinHostPort(n.Address, port))
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
			Type:  corev1.ServiceTypeClusterIP,
			Ports: []corev1.ServicePort{servicePort(portNameGD2, GD2ClientPort, ExternalPort(c))},
		},
	}
}

// endpointSliceName is the slice of c's management Service for one
// address type.
func endpointSliceName(cluster string, t discoveryv1.AddressType) string {
	return ManagementServiceName(cluster) + "-" + strings.ToLower(string(t))
}

// EndpointSliceLabels select the slices anthill writes for c.
func EndpointSliceLabels(cluster string) map[string]string {
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

// HostResolver looks host names up (net.DefaultResolver is one).
type HostResolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// ExternalNames are the host names of spec.external.nodes as resolved
// once: the addresses of each name that resolved, and the names that did
// not, with why.
type ExternalNames struct {
	Addresses  map[string][]string
	Unresolved []string
}

// externalLookupTimeout bounds one host name's lookup: a DNS server that
// does not answer must not hold the cluster's sync.
const externalLookupTimeout = 2 * time.Second

// ResolveExternalNames looks up every host name of c's external nodes
// (IP addresses need no lookup) with r.
func ResolveExternalNames(ctx context.Context, r HostResolver, c *operatorv1alpha1.GlusterCluster) ExternalNames {
	out := ExternalNames{Addresses: map[string][]string{}}
	if c.Spec.External == nil {
		return out
	}
	for _, n := range c.Spec.External.Nodes {
		if t, _ := addressType(n.Address); t != discoveryv1.AddressTypeFQDN {
			continue
		}
		if _, done := out.Addresses[n.Address]; done {
			continue
		}
		lctx, cancel := context.WithTimeout(ctx, externalLookupTimeout)
		addrs, err := r.LookupHost(lctx, n.Address)
		cancel()
		if err == nil && len(addrs) == 0 {
			err = fmt.Errorf("no address")
		}
		if err != nil {
			out.Unresolved = append(out.Unresolved, fmt.Sprintf("%s (%v)", n.Address, err))
			continue
		}
		out.Addresses[n.Address] = addrs
	}
	return out
}

// ExternalEndpointSlices are the EndpointSlices of c's management Service:
// one per address family present in spec.external.nodes, a host name's
// endpoints being the addresses names resolved it to (none while it does
// not resolve), endpoints sorted by address, an address listed once, each
// Ready (GD2 reachability is the cluster machine's concern, not the
// Service's) and in its node's zone.
func ExternalEndpointSlices(c *operatorv1alpha1.GlusterCluster, names ExternalNames) []*discoveryv1.EndpointSlice {
	byType := map[discoveryv1.AddressType][]discoveryv1.Endpoint{}
	seen := map[string]bool{}
	add := func(address, zone string) {
		t, addr := addressType(address)
		if t == discoveryv1.AddressTypeFQDN || seen[addr] {
			return
		}
		seen[addr] = true
		ep := discoveryv1.Endpoint{
			Addresses:  []string{addr},
			Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		}
		if zone != "" {
			ep.Zone = ptr.To(zone)
		}
		byType[t] = append(byType[t], ep)
	}
	if c.Spec.External != nil {
		for _, n := range c.Spec.External.Nodes {
			if t, _ := addressType(n.Address); t != discoveryv1.AddressTypeFQDN {
				add(n.Address, n.Zone)
				continue
			}
			for _, a := range names.Addresses[n.Address] {
				add(a, n.Zone)
			}
		}
	}
	var out []*discoveryv1.EndpointSlice
	for _, t := range []discoveryv1.AddressType{discoveryv1.AddressTypeIPv4, discoveryv1.AddressTypeIPv6} {
		eps := byType[t]
		if len(eps) == 0 {
			continue
		}
		slices.SortFunc(eps, func(a, b discoveryv1.Endpoint) int { return cmp.Compare(a.Addresses[0], b.Addresses[0]) })
		meta := clusterObjectMeta(c, endpointSliceName(c.Name, t), ComponentManagement)
		for k, v := range EndpointSliceLabels(c.Name) {
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

// ServiceMatches reports whether a live management Service has what
// ExternalManagementService sets (the API server fills in the rest).
func ServiceMatches(have, want *corev1.Service) bool {
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

// SliceMatches reports whether a live slice has what want sets.
func SliceMatches(have, want *discoveryv1.EndpointSlice) bool {
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
