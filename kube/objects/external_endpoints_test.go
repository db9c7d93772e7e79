package objects

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/internal/fixtures"
)

// hosts is a HostResolver of fixed answers; a name it lacks does not
// resolve.
type hosts map[string][]string

func (h hosts) LookupHost(_ context.Context, name string) ([]string, error) {
	if a, ok := h[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", name)
}

// A host name is published as the addresses it resolves to, in its
// node's zone: kube-proxy programs IPv4 and IPv6 slices only, so an FQDN
// slice would leave the CSI driver's Service routing nowhere.
func TestExternalEndpointSlicesOnePerAddressFamilyWithZones(t *testing.T) {
	c := fixtures.External("gc", 24010,
		fixtures.ExternalNode("192.0.2.2", "rack-2"), fixtures.ExternalNode("gluster-1.storage.example.com", "rack-1"),
		fixtures.ExternalNode("2001:0db8:0:0::1", "rack-3"), fixtures.ExternalNode("192.0.2.1", ""),
		fixtures.ExternalNode("gluster-9.storage.example.com", "rack-9"))
	names := ResolveExternalNames(context.Background(), hosts{"gluster-1.storage.example.com": {"192.0.2.11", "2001:db8::11"}}, c)
	if len(names.Unresolved) != 1 || !strings.HasPrefix(names.Unresolved[0], "gluster-9.storage.example.com (") {
		t.Errorf("unresolved %q, want gluster-9.storage.example.com with why", names.Unresolved)
	}
	var got []string
	for _, s := range ExternalEndpointSlices(c, names) {
		got = append(got, fixtures.SliceView(s))
		l := s.Labels
		if l[discoveryv1.LabelServiceName] != "gc-mgmt" || l[discoveryv1.LabelManagedBy] != EndpointSliceManagedBy ||
			l[LabelManagedBy] != ManagedByAnthill || l[LabelCluster] != "gc" {
			t.Errorf("slice %s labels %v: want the Service name, anthill as manager and the cluster", s.Name, l)
		}
		if len(s.OwnerReferences) != 1 || s.OwnerReferences[0].UID != c.UID {
			t.Errorf("slice %s owner %v, want the GlusterCluster", s.Name, s.OwnerReferences)
		}
		for _, e := range s.Endpoints {
			if !ptr.Deref(e.Conditions.Ready, false) {
				t.Errorf("slice %s endpoint %v is not ready", s.Name, e.Addresses)
			}
		}
	}
	want := []string{
		"gc-mgmt-ipv4 IPv4 192.0.2.1@,192.0.2.11@rack-1,192.0.2.2@rack-2 gd2:24010",
		"gc-mgmt-ipv6 IPv6 2001:db8::1@rack-3,2001:db8::11@rack-1 gd2:24010",
	}
	if !slices.Equal(got, want) {
		t.Errorf("slices\n got %q\nwant %q", got, want)
	}

	svc := ExternalManagementService(c)
	if svc.Name != ManagementServiceName("gc") || svc.Spec.Selector != nil {
		t.Errorf("Service %s selector %v: want the management Service without a selector", svc.Name, svc.Spec.Selector)
	}
	if p := svc.Spec.Ports; len(p) != 1 || p[0].Name != "gd2" || p[0].Port != GD2ClientPort || p[0].TargetPort != intstr.FromInt32(24010) {
		t.Errorf("Service ports %+v: want gd2 24007 -> 24010", p)
	}
}

func TestExternalPortDefaultsToGD2Port(t *testing.T) {
	if got := ExternalPort(fixtures.External("gc", 0, fixtures.ExternalNode("192.0.2.1", ""))); got != GD2ClientPort {
		t.Errorf("ExternalPort = %d, want %d", got, GD2ClientPort)
	}
}

func TestGD2EndpointsOfEachMode(t *testing.T) {
	ext := fixtures.External("gc", 24010, fixtures.ExternalNode("192.0.2.2", "a"), fixtures.ExternalNode("2001:db8::1", "b"), fixtures.ExternalNode("gluster-1.example.com", "c"))
	overridden := ext.DeepCopy()
	overridden.Spec.Management = &operatorv1alpha1.ManagementSpec{Endpoint: "http://127.0.0.1:9999"}
	tests := []struct {
		name string
		c    *operatorv1alpha1.GlusterCluster
		want []string
	}{
		{"an external cluster's addresses, in spec order, at its port", ext,
			[]string{"http://192.0.2.2:24010", "http://[2001:db8::1]:24010", "http://gluster-1.example.com:24010"}},
		{"spec.management.endpoint overrides the addresses", overridden, []string{"http://127.0.0.1:9999"}},
		{"a manual cluster's management Service", fixtures.Cluster("gc"), []string{"http://gc-mgmt.storage.svc:24007"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GD2Endpoints(tt.c); !slices.Equal(got, tt.want) {
				t.Errorf("GD2Endpoints = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestExternalEndpointsDialHTTPSWithACA(t *testing.T) {
	c := fixtures.External("gc", 0, fixtures.ExternalNode("10.0.0.1", ""), fixtures.ExternalNode("gd2.example.com", ""))
	c.Spec.CASecretRef = &operatorv1alpha1.SecretReference{Name: "ca"}
	want := []string{"https://10.0.0.1:24007", "https://gd2.example.com:24007"}
	if got := GD2Endpoints(c); !slices.Equal(got, want) {
		t.Errorf("GD2Endpoints = %v, want %v", got, want)
	}
}
