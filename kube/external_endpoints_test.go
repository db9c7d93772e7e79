package kube

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

func fxExternal(name string, port int32, nodes ...operatorv1alpha1.ExternalNode) *operatorv1alpha1.GlusterCluster {
	c := fxCluster(name)
	c.Spec.Mode = operatorv1alpha1.ClusterModeExternal
	c.Spec.NodeTemplates, c.Spec.Gluster = nil, nil
	c.Spec.External = &operatorv1alpha1.ExternalSpec{Nodes: nodes, Port: port}
	return c
}

func xn(addr, zone string) operatorv1alpha1.ExternalNode {
	return operatorv1alpha1.ExternalNode{Address: addr, Zone: zone}
}

// sliceView is "name type addr@zone,addr@zone :port" for comparisons.
func sliceView(s *discoveryv1.EndpointSlice) string {
	var eps []string
	for _, e := range s.Endpoints {
		eps = append(eps, strings.Join(e.Addresses, "+")+"@"+ptr.Deref(e.Zone, ""))
	}
	var ports []string
	for _, p := range s.Ports {
		ports = append(ports, fmt.Sprintf("%s:%d", ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0)))
	}
	return s.Name + " " + string(s.AddressType) + " " + strings.Join(eps, ",") + " " + strings.Join(ports, ",")
}

func TestExternalEndpointSlicesOnePerAddressTypeWithZones(t *testing.T) {
	c := fxExternal("gc", 24010,
		xn("192.0.2.2", "rack-2"), xn("gluster-1.storage.example.com", "rack-1"),
		xn("2001:0db8:0:0::1", "rack-3"), xn("192.0.2.1", ""))
	var got []string
	for _, s := range ExternalEndpointSlices(c) {
		got = append(got, sliceView(s))
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
		"gc-mgmt-ipv4 IPv4 192.0.2.1@,192.0.2.2@rack-2 gd2:24010",
		"gc-mgmt-ipv6 IPv6 2001:db8::1@rack-3 gd2:24010",
		"gc-mgmt-fqdn FQDN gluster-1.storage.example.com@rack-1 gd2:24010",
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
	if got := ExternalPort(fxExternal("gc", 0, xn("192.0.2.1", ""))); got != GD2ClientPort {
		t.Errorf("ExternalPort = %d, want %d", got, GD2ClientPort)
	}
}

func TestGD2EndpointsOfEachMode(t *testing.T) {
	ext := fxExternal("gc", 24010, xn("192.0.2.2", "a"), xn("2001:db8::1", "b"), xn("gluster-1.example.com", "c"))
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
		{"a manual cluster's management Service", fxCluster("gc"), []string{"http://gc-mgmt.storage.svc:24007"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := GD2Endpoints(tt.c); !slices.Equal(got, tt.want) {
				t.Errorf("GD2Endpoints = %q, want %q", got, tt.want)
			}
		})
	}
}

// observe builds listers from the fake clientset's objects, as the
// informers would hold them, and compares with the spec.
func (f *fxKube) observe(t *testing.T, c *operatorv1alpha1.GlusterCluster) EndpointsView {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	svcs, eps := idx(), idx()
	sl, err := f.kube.CoreV1().Services(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list Services")
	for i := range sl.Items {
		fxMust(t, svcs.Add(&sl.Items[i]), "index Service")
	}
	el, err := f.kube.DiscoveryV1().EndpointSlices(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list EndpointSlices")
	for i := range el.Items {
		fxMust(t, eps.Add(&el.Items[i]), "index EndpointSlice")
	}
	v, err := ObserveEndpoints(c, corev1listers.NewServiceLister(svcs), discoveryv1listers.NewEndpointSliceLister(eps))
	fxMust(t, err, "observe")
	return v
}

func (f *fxKube) slices(t *testing.T) []string {
	t.Helper()
	l, err := f.kube.DiscoveryV1().EndpointSlices(fxNamespace).List(fxCtx, metav1.ListOptions{})
	fxMust(t, err, "list EndpointSlices")
	var out []string
	for i := range l.Items {
		out = append(out, sliceView(&l.Items[i]))
	}
	slices.Sort(out)
	return out
}

// writes are the create, update, patch and delete calls recorded since the
// last reset.
func (f *fxKube) writes() []string {
	var out []string
	for _, a := range f.kube.Actions() {
		switch a.GetVerb() {
		case "create", "update", "patch", "delete":
			out = append(out, a.GetVerb()+" "+a.GetResource().Resource)
		}
	}
	return out
}

// TestSyncEndpointsFollowsTheAddresses walks one external cluster through
// an address added, a zone changed, a host name added, an address removed
// and a port change, checking after every step that the slices match the
// spec, that the snapshot's view agrees, and that a second sync writes
// nothing.
func TestSyncEndpointsFollowsTheAddresses(t *testing.T) {
	c := fxExternal("gc", 0, xn("192.0.2.1", "a"), xn("192.0.2.2", "b"))
	f := newFxKube(t, nil, c)
	if v := f.observe(t, c); v.InSync || v.AnyExists || !strings.Contains(v.Diff, "create the management Service") || !strings.Contains(v.Diff, "add 192.0.2.1") {
		t.Fatalf("before provisioning: %+v, want out of sync, nothing there, naming the Service and the addresses", v)
	}
	fxMust(t, f.ops.EnsureClusterInfra(fxCtx, fxClusterTarget(c)), "provision")

	steps := []struct {
		name     string
		edit     func(c *operatorv1alpha1.GlusterCluster)
		wantDiff string
		want     []string
	}{
		{"provisioned", nil, "", []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b gd2:24007"}},
		{"an address is added", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes = append(c.Spec.External.Nodes, xn("192.0.2.3", "c"))
		}, "add 192.0.2.3", []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b,192.0.2.3@c gd2:24007"}},
		{"a zone changes", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes[1].Zone = "b2"
		}, `zone of 192.0.2.2 "b" -> "b2"`, []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b2,192.0.2.3@c gd2:24007"}},
		{"an address becomes a host name", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes[0] = xn("gluster-1.example.com", "a")
		}, "add gluster-1.example.com, remove 192.0.2.1", []string{
			"gc-mgmt-fqdn FQDN gluster-1.example.com@a gd2:24007",
			"gc-mgmt-ipv4 IPv4 192.0.2.2@b2,192.0.2.3@c gd2:24007",
		}},
		{"the last host name is removed", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes = c.Spec.External.Nodes[1:]
		}, "remove gluster-1.example.com", []string{"gc-mgmt-ipv4 IPv4 192.0.2.2@b2,192.0.2.3@c gd2:24007"}},
		{"the port changes", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Port = 24010
		}, "correct the management Service, rewrite EndpointSlice gc-mgmt-ipv4", []string{"gc-mgmt-ipv4 IPv4 192.0.2.2@b2,192.0.2.3@c gd2:24010"}},
	}
	for _, st := range steps {
		if st.edit != nil {
			st.edit(c)
			_, err := f.crs.OperatorV1alpha1().GlusterClusters(fxNamespace).Update(fxCtx, c, metav1.UpdateOptions{})
			fxMust(t, err, "update cluster")
			v := f.observe(t, c)
			if v.InSync || v.Diff != st.wantDiff {
				t.Fatalf("%s: view %+v, want out of sync with diff %q", st.name, v, st.wantDiff)
			}
			fxMust(t, f.ops.SyncEndpoints(fxCtx, fxClusterTarget(c)), st.name)
		}
		if got := f.slices(t); !slices.Equal(got, st.want) {
			t.Fatalf("%s: slices\n got %q\nwant %q", st.name, got, st.want)
		}
		if v := f.observe(t, c); !v.InSync || !v.ServiceExists || v.Diff != "" {
			t.Fatalf("%s: view %+v, want in sync", st.name, v)
		}
		f.kube.ClearActions()
		fxMust(t, f.ops.SyncEndpoints(fxCtx, fxClusterTarget(c)), st.name+" (again)")
		if w := f.writes(); len(w) != 0 {
			t.Fatalf("%s: a sync of an unchanged spec wrote %v", st.name, w)
		}
	}
}

func TestSyncEndpointsRepairsHandEdits(t *testing.T) {
	c := fxExternal("gc", 0, xn("192.0.2.1", "a"))
	f := newFxKube(t, nil, c)
	fxMust(t, f.ops.EnsureClusterInfra(fxCtx, fxClusterTarget(c)), "provision")

	// Someone adds a selector to the Service, rewrites the slice's port and
	// leaves a stray slice of ours behind.
	svc, err := f.kube.CoreV1().Services(fxNamespace).Get(fxCtx, "gc-mgmt", metav1.GetOptions{})
	fxMust(t, err, "get Service")
	svc.Spec.Selector = map[string]string{"app": "x"}
	_, err = f.kube.CoreV1().Services(fxNamespace).Update(fxCtx, svc, metav1.UpdateOptions{})
	fxMust(t, err, "edit Service")
	sl, err := f.kube.DiscoveryV1().EndpointSlices(fxNamespace).Get(fxCtx, "gc-mgmt-ipv4", metav1.GetOptions{})
	fxMust(t, err, "get slice")
	sl.Ports[0].Port = ptr.To[int32](1)
	_, err = f.kube.DiscoveryV1().EndpointSlices(fxNamespace).Update(fxCtx, sl, metav1.UpdateOptions{})
	fxMust(t, err, "edit slice")
	stray := ExternalEndpointSlices(c)[0]
	stray.Name, stray.AddressType = "gc-mgmt-ipv6", discoveryv1.AddressTypeIPv6
	stray.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"2001:db8::9"}}}
	_, err = f.kube.DiscoveryV1().EndpointSlices(fxNamespace).Create(fxCtx, stray, metav1.CreateOptions{})
	fxMust(t, err, "create stray slice")
	// A slice of someone else's for the same Service name stays.
	other := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "not-ours", Namespace: fxNamespace,
		Labels: map[string]string{discoveryv1.LabelServiceName: "gc-mgmt"}}, AddressType: discoveryv1.AddressTypeIPv4}
	_, err = f.kube.DiscoveryV1().EndpointSlices(fxNamespace).Create(fxCtx, other, metav1.CreateOptions{})
	fxMust(t, err, "create other slice")

	v := f.observe(t, c)
	if v.InSync || v.Diff != "correct the management Service, remove 2001:db8::9" {
		t.Fatalf("view %+v, want the Service and the stray address named", v)
	}
	fxMust(t, f.ops.SyncEndpoints(fxCtx, fxClusterTarget(c)), "repair")
	if v := f.observe(t, c); !v.InSync {
		t.Fatalf("after repair: %+v", v)
	}
	got := f.slices(t)
	want := []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a gd2:24007", "not-ours IPv4  "}
	if !slices.Equal(got, want) {
		t.Fatalf("slices\n got %q\nwant %q", got, want)
	}
	svc, err = f.kube.CoreV1().Services(fxNamespace).Get(fxCtx, "gc-mgmt", metav1.GetOptions{})
	fxMust(t, err, "get Service")
	if svc.Spec.Selector != nil {
		t.Errorf("selector %v left on the management Service", svc.Spec.Selector)
	}
}

// TestDeleteClusterInfraOfAnExternalClusterRemovesOnlyItsService checks
// that deleting an external cluster's infrastructure removes its Service
// and slices, and writes nothing but deletes of those.
func TestDeleteClusterInfraOfAnExternalClusterRemovesOnlyItsService(t *testing.T) {
	c := fxExternal("gc", 0, xn("192.0.2.1", "a"), xn("gluster-1.example.com", "b"))
	other := fxExternal("other", 0, xn("192.0.2.9", "a"))
	f := newFxKube(t, nil, c, other)
	fxMust(t, f.ops.EnsureClusterInfra(fxCtx, fxClusterTarget(c)), "provision")
	fxMust(t, f.ops.EnsureClusterInfra(fxCtx, fxClusterTarget(other)), "provision other")
	for i := range 2 {
		f.kube.ClearActions()
		fxMust(t, f.ops.DeleteClusterInfra(fxCtx, fxClusterTarget(c)), "delete")
		for _, a := range f.kube.Actions() {
			if v := a.GetVerb(); v == "create" || v == "update" || v == "patch" {
				t.Errorf("delete #%d wrote %s %s", i+1, v, a.GetResource().Resource)
			}
			if d, ok := a.(k8stesting.DeleteAction); ok && strings.HasPrefix(d.GetName(), "other") {
				t.Errorf("delete #%d deleted %s of another cluster", i+1, d.GetName())
			}
		}
	}
	if got := f.names(t, "services"); !slices.Equal(got, []string{"other-mgmt"}) {
		t.Errorf("services %v, want only the other cluster's", got)
	}
	if got := f.slices(t); len(got) != 1 || !strings.HasPrefix(got[0], "other-mgmt-ipv4 ") {
		t.Errorf("slices %v, want only the other cluster's", got)
	}
	if v := f.observe(t, c); v.AnyExists {
		t.Errorf("view after delete %+v, want nothing left", v)
	}
}
