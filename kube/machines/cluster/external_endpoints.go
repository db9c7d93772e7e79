package cluster

import (
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
)

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

// ReasonExternalNameUnresolved is the reason of the Warning Event that
// names the host names of spec.external.nodes that did not resolve.
const ReasonExternalNameUnresolved = "ExternalNameUnresolved"

// resolver is s.Resolver, or net.DefaultResolver.
func (s *Syncer) resolver() objects.HostResolver {
	if s.Resolver != nil {
		return s.Resolver
	}
	return net.DefaultResolver
}

// warnUnresolved records a Warning Event on c naming the external host
// names that did not resolve: the management Service (and so the CSI
// driver) does not reach those servers until they do.
func (s *Syncer) warnUnresolved(c *operatorv1alpha1.GlusterCluster, unresolved []string) {
	if len(unresolved) == 0 {
		return
	}
	s.Log.Warn(c, ReasonExternalNameUnresolved, fmt.Sprintf(
		"spec.external.nodes: %s did not resolve: the management Service, through which the CSI driver reaches GD2, lists only the addresses names resolve to (kube-proxy routes no host name), so it leaves these servers out until they resolve.",
		strings.Join(unresolved, ", ")))
}

// ObserveEndpoints compares c's management Service and EndpointSlices, as
// the listers see them, with what the spec asks for, its host names
// resolved as names says.
func ObserveEndpoints(c *operatorv1alpha1.GlusterCluster, names objects.ExternalNames, services corev1listers.ServiceLister, slicesL discoveryv1listers.EndpointSliceLister) (EndpointsView, error) {
	var v EndpointsView
	var diffs []string
	svc, err := services.Services(c.Namespace).Get(objects.ManagementServiceName(c.Name))
	switch {
	case apierrors.IsNotFound(err):
		diffs = append(diffs, "create the management Service")
	case err != nil:
		return v, err
	default:
		v.ServiceExists, v.AnyExists = true, true
		if !objects.ServiceMatches(svc, objects.ExternalManagementService(c)) {
			diffs = append(diffs, "correct the management Service")
		}
	}
	have, err := slicesL.EndpointSlices(c.Namespace).List(labels.SelectorFromSet(objects.EndpointSliceLabels(c.Name)))
	if err != nil {
		return v, err
	}
	if len(have) > 0 {
		v.AnyExists = true
	}
	diffs = append(diffs, diffEndpoints(have, objects.ExternalEndpointSlices(c, names))...)
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
		if hs, ok := byName[s.Name]; !ok || !objects.SliceMatches(hs, s) {
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
