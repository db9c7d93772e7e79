package cluster

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	corev1listers "k8s.io/client-go/listers/core/v1"
	discoveryv1listers "k8s.io/client-go/listers/discovery/v1"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/objects"
)

// endpointsFixture is a fake API server holding external clusters, with
// the effects that write their management Services and EndpointSlices.
type endpointsFixture struct {
	ops  *effects.Kube
	kube *k8sfake.Clientset
	crs  *anthillfake.Clientset
	// hosts is the DNS both the effects and the view resolve host names
	// with: gluster-1.example.com is 192.0.2.11 until a test changes it.
	hosts hosts
}

// hosts is a HostResolver of fixed answers; a name it lacks does not
// resolve.
type hosts map[string][]string

func (h hosts) LookupHost(_ context.Context, name string) ([]string, error) {
	if a, ok := h[name]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", name)
}

func newEndpointsFixture(crObjs ...runtime.Object) *endpointsFixture {
	f := &endpointsFixture{kube: k8sfake.NewClientset(), crs: anthillfake.NewSimpleClientset(crObjs...),
		hosts: hosts{"gluster-1.example.com": {"192.0.2.11"}}}
	f.ops = &effects.Kube{Client: f.kube, Anthill: f.crs, Resolver: f.hosts}
	return f
}

// observe builds listers from the fake clientset's objects, as the
// informers would hold them, and compares with the spec.
func (f *endpointsFixture) observe(t *testing.T, c *operatorv1alpha1.GlusterCluster) EndpointsView {
	t.Helper()
	idx := func() cache.Indexer {
		return cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	}
	svcs, eps := idx(), idx()
	sl, err := f.kube.CoreV1().Services(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list Services")
	for i := range sl.Items {
		fixtures.Must(t, svcs.Add(&sl.Items[i]), "index Service")
	}
	el, err := f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list EndpointSlices")
	for i := range el.Items {
		fixtures.Must(t, eps.Add(&el.Items[i]), "index EndpointSlice")
	}
	names := objects.ResolveExternalNames(fixtures.Ctx, f.hosts, c)
	v, err := ObserveEndpoints(c, names, corev1listers.NewServiceLister(svcs), discoveryv1listers.NewEndpointSliceLister(eps))
	fixtures.Must(t, err, "observe")
	return v
}

func (f *endpointsFixture) slices(t *testing.T) []string {
	t.Helper()
	l, err := f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list EndpointSlices")
	var out []string
	for i := range l.Items {
		out = append(out, fixtures.SliceView(&l.Items[i]))
	}
	slices.Sort(out)
	return out
}

// writes are the create, update, patch and delete calls recorded since the
// last reset.
func (f *endpointsFixture) writes() []string {
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
	c := fixtures.External("gc", 0, fixtures.ExternalNode("192.0.2.1", "a"), fixtures.ExternalNode("192.0.2.2", "b"))
	f := newEndpointsFixture(c)
	if v := f.observe(t, c); v.InSync || v.AnyExists || !strings.Contains(v.Diff, "create the management Service") || !strings.Contains(v.Diff, "add 192.0.2.1") {
		t.Fatalf("before provisioning: %+v, want out of sync, nothing there, naming the Service and the addresses", v)
	}
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "provision")

	steps := []struct {
		name     string
		edit     func(c *operatorv1alpha1.GlusterCluster)
		wantDiff string
		want     []string
	}{
		{"provisioned", nil, "", []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b gd2:24007"}},
		{"an address is added", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes = append(c.Spec.External.Nodes, fixtures.ExternalNode("192.0.2.3", "c"))
		}, "add 192.0.2.3", []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b,192.0.2.3@c gd2:24007"}},
		{"a zone changes", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes[1].Zone = "b2"
		}, `zone of 192.0.2.2 "b" -> "b2"`, []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a,192.0.2.2@b2,192.0.2.3@c gd2:24007"}},
		// kube-proxy programs no FQDN slice: a host name is published as
		// what it resolves to, and followed when that changes.
		{"an address becomes a host name", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes[0] = fixtures.ExternalNode("gluster-1.example.com", "a")
		}, "add 192.0.2.11, remove 192.0.2.1", []string{
			"gc-mgmt-ipv4 IPv4 192.0.2.11@a,192.0.2.2@b2,192.0.2.3@c gd2:24007",
		}},
		{"the host name resolves elsewhere", func(*operatorv1alpha1.GlusterCluster) {
			f.hosts["gluster-1.example.com"] = []string{"192.0.2.12", "2001:db8::12"}
		}, "add 192.0.2.12, add 2001:db8::12, remove 192.0.2.11", []string{
			"gc-mgmt-ipv4 IPv4 192.0.2.12@a,192.0.2.2@b2,192.0.2.3@c gd2:24007",
			"gc-mgmt-ipv6 IPv6 2001:db8::12@a gd2:24007",
		}},
		{"the last host name is removed", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Nodes = c.Spec.External.Nodes[1:]
		}, "remove 192.0.2.12, remove 2001:db8::12", []string{"gc-mgmt-ipv4 IPv4 192.0.2.2@b2,192.0.2.3@c gd2:24007"}},
		{"the port changes", func(c *operatorv1alpha1.GlusterCluster) {
			c.Spec.External.Port = 24010
		}, "correct the management Service, rewrite EndpointSlice gc-mgmt-ipv4", []string{"gc-mgmt-ipv4 IPv4 192.0.2.2@b2,192.0.2.3@c gd2:24010"}},
	}
	for _, st := range steps {
		if st.edit != nil {
			st.edit(c)
			_, err := f.crs.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Update(fixtures.Ctx, c, metav1.UpdateOptions{})
			fixtures.Must(t, err, "update cluster")
			v := f.observe(t, c)
			if v.InSync || v.Diff != st.wantDiff {
				t.Fatalf("%s: view %+v, want out of sync with diff %q", st.name, v, st.wantDiff)
			}
			fixtures.Must(t, f.ops.SyncEndpoints(fixtures.Ctx, fixtures.ClusterTarget(c)), st.name)
		}
		if got := f.slices(t); !slices.Equal(got, st.want) {
			t.Fatalf("%s: slices\n got %q\nwant %q", st.name, got, st.want)
		}
		if v := f.observe(t, c); !v.InSync || !v.ServiceExists || v.Diff != "" {
			t.Fatalf("%s: view %+v, want in sync", st.name, v)
		}
		f.kube.ClearActions()
		fixtures.Must(t, f.ops.SyncEndpoints(fixtures.Ctx, fixtures.ClusterTarget(c)), st.name+" (again)")
		if w := f.writes(); len(w) != 0 {
			t.Fatalf("%s: a sync of an unchanged spec wrote %v", st.name, w)
		}
	}
}

func TestSyncEndpointsRepairsHandEdits(t *testing.T) {
	c := fixtures.External("gc", 0, fixtures.ExternalNode("192.0.2.1", "a"))
	f := newEndpointsFixture(c)
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "provision")

	// Someone adds a selector to the Service, rewrites the slice's port and
	// leaves a stray slice of ours behind.
	svc, err := f.kube.CoreV1().Services(fixtures.Namespace).Get(fixtures.Ctx, "gc-mgmt", metav1.GetOptions{})
	fixtures.Must(t, err, "get Service")
	svc.Spec.Selector = map[string]string{"app": "x"}
	_, err = f.kube.CoreV1().Services(fixtures.Namespace).Update(fixtures.Ctx, svc, metav1.UpdateOptions{})
	fixtures.Must(t, err, "edit Service")
	sl, err := f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).Get(fixtures.Ctx, "gc-mgmt-ipv4", metav1.GetOptions{})
	fixtures.Must(t, err, "get slice")
	sl.Ports[0].Port = ptr.To[int32](1)
	_, err = f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).Update(fixtures.Ctx, sl, metav1.UpdateOptions{})
	fixtures.Must(t, err, "edit slice")
	stray := objects.ExternalEndpointSlices(c, objects.ExternalNames{})[0]
	stray.Name, stray.AddressType = "gc-mgmt-ipv6", discoveryv1.AddressTypeIPv6
	stray.Endpoints = []discoveryv1.Endpoint{{Addresses: []string{"2001:db8::9"}}}
	_, err = f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).Create(fixtures.Ctx, stray, metav1.CreateOptions{})
	fixtures.Must(t, err, "create stray slice")
	// A slice of someone else's for the same Service name stays.
	other := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "not-ours", Namespace: fixtures.Namespace,
		Labels: map[string]string{discoveryv1.LabelServiceName: "gc-mgmt"}}, AddressType: discoveryv1.AddressTypeIPv4}
	_, err = f.kube.DiscoveryV1().EndpointSlices(fixtures.Namespace).Create(fixtures.Ctx, other, metav1.CreateOptions{})
	fixtures.Must(t, err, "create other slice")

	v := f.observe(t, c)
	if v.InSync || v.Diff != "correct the management Service, remove 2001:db8::9" {
		t.Fatalf("view %+v, want the Service and the stray address named", v)
	}
	fixtures.Must(t, f.ops.SyncEndpoints(fixtures.Ctx, fixtures.ClusterTarget(c)), "repair")
	if v := f.observe(t, c); !v.InSync {
		t.Fatalf("after repair: %+v", v)
	}
	got := f.slices(t)
	want := []string{"gc-mgmt-ipv4 IPv4 192.0.2.1@a gd2:24007", "not-ours IPv4  "}
	if !slices.Equal(got, want) {
		t.Fatalf("slices\n got %q\nwant %q", got, want)
	}
	svc, err = f.kube.CoreV1().Services(fixtures.Namespace).Get(fixtures.Ctx, "gc-mgmt", metav1.GetOptions{})
	fixtures.Must(t, err, "get Service")
	if svc.Spec.Selector != nil {
		t.Errorf("selector %v left on the management Service", svc.Spec.Selector)
	}
}

// TestDeleteClusterInfraOfAnExternalClusterRemovesOnlyItsService checks
// that deleting an external cluster's infrastructure removes its Service
// and slices, and writes nothing but deletes of those.
func TestDeleteClusterInfraOfAnExternalClusterRemovesOnlyItsService(t *testing.T) {
	c := fixtures.External("gc", 0, fixtures.ExternalNode("192.0.2.1", "a"), fixtures.ExternalNode("gluster-1.example.com", "b"))
	other := fixtures.External("other", 0, fixtures.ExternalNode("192.0.2.9", "a"))
	f := newEndpointsFixture(c, other)
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "provision")
	fixtures.Must(t, f.ops.EnsureClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(other)), "provision other")
	for i := range 2 {
		f.kube.ClearActions()
		fixtures.Must(t, f.ops.DeleteClusterInfra(fixtures.Ctx, fixtures.ClusterTarget(c)), "delete")
		for _, a := range f.kube.Actions() {
			if v := a.GetVerb(); v == "create" || v == "update" || v == "patch" {
				t.Errorf("delete #%d wrote %s %s", i+1, v, a.GetResource().Resource)
			}
			if d, ok := a.(k8stesting.DeleteAction); ok && strings.HasPrefix(d.GetName(), "other") {
				t.Errorf("delete #%d deleted %s of another cluster", i+1, d.GetName())
			}
		}
	}
	svcs, err := f.kube.CoreV1().Services(fixtures.Namespace).List(fixtures.Ctx, metav1.ListOptions{})
	fixtures.Must(t, err, "list Services")
	if len(svcs.Items) != 1 || svcs.Items[0].Name != "other-mgmt" {
		t.Errorf("services %v, want only the other cluster's", svcs.Items)
	}
	if got := f.slices(t); len(got) != 1 || !strings.HasPrefix(got[0], "other-mgmt-ipv4 ") {
		t.Errorf("slices %v, want only the other cluster's", got)
	}
	if v := f.observe(t, c); v.AnyExists {
		t.Errorf("view after delete %+v, want nothing left", v)
	}
}
