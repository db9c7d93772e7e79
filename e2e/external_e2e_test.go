//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/util/retry"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// poolServer stands for one server of an external pool: a TCP forwarder on
// its own loopback address to the one simulated GD2 pool, which every
// server of a real pool serves alike. Closing it is the server going away.
type poolServer struct {
	ln       net.Listener
	accepted atomic.Int64
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closed   bool
	wg       sync.WaitGroup
}

func startPoolServer(t *testing.T, addr, target string) (*poolServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	p := &poolServer{ln: ln, conns: map[net.Conn]bool{}}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.accepted.Add(1)
			up, err := net.Dial("tcp", target)
			if err != nil {
				_ = c.Close()
				continue
			}
			if !p.track(c, up) {
				return
			}
			p.wg.Go(func() { _, _ = io.Copy(up, c); _ = up.Close() })
			p.wg.Go(func() { _, _ = io.Copy(c, up); _ = c.Close() })
		}
	})
	t.Cleanup(p.Close)
	return p, nil
}

func (p *poolServer) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range cs {
			_ = c.Close()
		}
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// Close stops accepting and drops every open connection.
func (p *poolServer) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	_ = p.ln.Close()
	for c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}

// startPool starts one server of the pool on a free loopback port.
func startPool(t *testing.T, g *framework.GD2Sim) (int32, *poolServer) {
	t.Helper()
	u, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := startPoolServer(t, "127.0.0.1:0", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(srv.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	return int32(p), srv
}

// buildPool makes the simulator an existing three-server pool in three
// zones with devices and one started replica-3 volume, as an admin would
// have built it before anthill came along.
func buildPool(t *testing.T, s *framework.GD2Sim, g *gd2.Client) {
	t.Helper()
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		name := fmt.Sprintf("pool-%d", i)
		if err := s.UpsertHost(sim.HostSpec{Name: name, Address: name + ".storage.example.com:24008", Alive: true}); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			// The first server is the pool it founds.
			if err := framework.WaitFor(ctx, 10*time.Second, func(ctx context.Context) (bool, error) {
				_, err := g.ListPeers(ctx, gd2FilterAll)
				return err == nil, err
			}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := g.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{name + ".storage.example.com:24008"}, Zone: fmt.Sprintf("rack-%d", i)}); err != nil {
			t.Fatalf("add %s: %v", name, err)
		}
	}
	peers, err := g.ListPeers(ctx, gd2FilterAll)
	if err != nil || len(peers) != 3 {
		t.Fatalf("pool peers %v, %v; want 3", peers, err)
	}
	for _, p := range peers {
		if _, err := g.AddDevice(ctx, p.ID, gd2.DeviceAddRequest{Device: "/dev/sdb"}); err != nil {
			t.Fatalf("add device on %s: %v", p.Name, err)
		}
	}
	createReplicatedVolume(t, g, "archive")
}

// forbiddenWatch records every GlusterNode, StatefulSet and Pod that
// appears in ns: an external cluster must never get any.
// serverPods selects the pods a Gluster server needs: GD2 nodes and etcd.
// The CSI drivers run in external mode too; their pods are not servers.
var serverPods = metav1.ListOptions{LabelSelector: "app.kubernetes.io/component in (gluster-node,etcd)"}

type forbiddenWatch struct {
	mu   sync.Mutex
	seen []string
	stop []func()
}

func watchForbidden(t *testing.T, ns string) *forbiddenWatch {
	t.Helper()
	ctx := context.Background()
	f := &forbiddenWatch{}
	starts := map[string]func() (watch.Interface, error){
		"GlusterNode": func() (watch.Interface, error) {
			return anthill.OperatorV1alpha1().GlusterNodes(ns).Watch(ctx, metav1.ListOptions{})
		},
		"StatefulSet": func() (watch.Interface, error) {
			return env.Client.AppsV1().StatefulSets(ns).Watch(ctx, metav1.ListOptions{})
		},
		"Pod": func() (watch.Interface, error) { return env.Client.CoreV1().Pods(ns).Watch(ctx, serverPods) },
	}
	for kind, start := range starts {
		w, err := start()
		if err != nil {
			t.Fatal(err)
		}
		f.stop = append(f.stop, w.Stop)
		go func() {
			for ev := range w.ResultChan() {
				if m, ok := ev.Object.(metav1.Object); ok && ev.Type == watch.Added {
					f.mu.Lock()
					f.seen = append(f.seen, kind+" "+m.GetName())
					f.mu.Unlock()
				}
			}
		}()
	}
	t.Cleanup(func() {
		for _, s := range f.stop {
			s()
		}
	})
	return f
}

// check fails if anything forbidden was seen, or exists now.
func (f *forbiddenWatch) check(t *testing.T, ns string) {
	t.Helper()
	ctx := context.Background()
	f.mu.Lock()
	seen := slices.Clone(f.seen)
	f.mu.Unlock()
	if n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{}); err != nil || len(n.Items) > 0 {
		seen = append(seen, fmt.Sprintf("GlusterNodes listed: %d (%v)", len(n.Items), err))
	}
	if s, err := env.Client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err != nil || len(s.Items) > 0 {
		seen = append(seen, fmt.Sprintf("StatefulSets listed: %d (%v)", len(s.Items), err))
	}
	if p, err := env.Client.CoreV1().Pods(ns).List(ctx, serverPods); err != nil || len(p.Items) > 0 {
		seen = append(seen, fmt.Sprintf("Pods listed: %d (%v)", len(p.Items), err))
	}
	if len(seen) > 0 {
		t.Fatalf("an external cluster must get no GlusterNode, StatefulSet or server Pod; saw %v", seen)
	}
}

// endpointsOf is the management Service's slices anthill wrote, as
// "type addr@zone,... :port" sorted, and whether the Service is as the CSI
// driver expects it.
func endpointsOf(ctx context.Context, ns, cluster string, port int32) ([]string, error) {
	svcName := cluster + "-mgmt"
	svc, err := env.Client.CoreV1().Services(ns).Get(ctx, svcName, metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	if svc.Spec.Selector != nil || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Name != "gd2" ||
		svc.Spec.Ports[0].Port != 24007 || svc.Spec.Ports[0].TargetPort.IntVal != port {
		return nil, fmt.Errorf("management Service %+v: want no selector and gd2 24007 -> %d", svc.Spec, port)
	}
	list, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{LabelSelector: discoveryv1.LabelServiceName + "=" + svcName})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range list.Items {
		if s.Labels[discoveryv1.LabelManagedBy] == "" || s.Labels[discoveryv1.LabelManagedBy] == "endpointslice-controller.k8s.io" {
			return nil, fmt.Errorf("slice %s is managed by %q, want anthill", s.Name, s.Labels[discoveryv1.LabelManagedBy])
		}
		var eps []string
		for _, e := range s.Endpoints {
			eps = append(eps, strings.Join(e.Addresses, "+")+"@"+ptr.Deref(e.Zone, ""))
		}
		for _, p := range s.Ports {
			if ptr.Deref(p.Port, 0) != port || ptr.Deref(p.Name, "") != "gd2" {
				return nil, fmt.Errorf("slice %s port %s:%d, want gd2:%d", s.Name, ptr.Deref(p.Name, ""), ptr.Deref(p.Port, 0), port)
			}
		}
		out = append(out, string(s.AddressType)+" "+strings.Join(eps, ","))
	}
	slices.Sort(out)
	return out, nil
}

func waitEndpoints(t *testing.T, ns, cluster string, port int32, want []string) {
	t.Helper()
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		got, err := endpointsOf(ctx, ns, cluster, port)
		if err != nil {
			return false, err
		}
		if !slices.Equal(got, want) {
			return false, fmt.Errorf("slices %q, want %q", got, want)
		}
		return true, nil
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the pool's addresses in the EndpointSlices: %v", err)
	}
}

// editExternal changes spec.external.nodes as an admin would.
func editExternal(t *testing.T, ns, cluster string, edit func(nodes []operatorv1alpha1.ExternalNode) []operatorv1alpha1.ExternalNode) {
	t.Helper()
	editCluster(t, ns, cluster, func(c *operatorv1alpha1.GlusterCluster) { c.Spec.External.Nodes = edit(c.Spec.External.Nodes) })
}

// reconfigured counts the cluster's reconfigure transitions in its
// history.
func reconfigured(c *operatorv1alpha1.GlusterCluster) int {
	n := 0
	for _, h := range c.Status.History {
		if h.Event == "reconfigure" {
			n++
		}
	}
	return n
}

// TestExternalCluster runs an external-mode cluster against an existing
// three-server pool (the simulator): anthill publishes the addresses as
// the management Service's EndpointSlices, follows additions, changes and
// removals (one of them across a SIGKILL of the operator), writes back a
// management Service edited by hand, shows the pool's volume and its heal state, never creates a GlusterNode,
// StatefulSet or Pod, and on deletion removes only its Service and slices,
// leaving every peer and volume in place.
//
// EndpointSlices refuse loopback IPs and single-label names such as
// localhost (so does the CRD), and nothing but loopback may be dialled on
// this machine; so the published addresses are documentation ones (RFC
// 5737, RFC 3849, example.com) and spec.management.endpoint points the
// operator at the simulator, overriding the addresses for GD2 calls only.
// Talking to GD2 at the addresses themselves, in order and failing over,
// is covered by the kube unit tests on real loopback sockets.
func TestExternalCluster(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "outside"
	ctx := context.Background()
	s := startSim(t, ns, defaultSimOptions)
	g := gd2Client(t)
	buildPool(t, s, g)
	port, pool := startPool(t, s)
	peersBefore, err := g.ListPeers(ctx, gd2FilterAll)
	if err != nil {
		t.Fatal(err)
	}
	forbidden := watchForbidden(t, ns)
	if err := env.CreateSimAuthSecret(ctx, ns, name, s); err != nil {
		t.Fatal(err)
	}
	c := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Mode: operatorv1alpha1.ClusterModeExternal,
			External: &operatorv1alpha1.ExternalSpec{Port: port, Nodes: []operatorv1alpha1.ExternalNode{
				{Address: "gluster-1.storage.example.com", Zone: "rack-1"}, {Address: "198.51.100.2", Zone: "rack-2"},
			}},
			Management: &operatorv1alpha1.ManagementSpec{
				Endpoint:      fmt.Sprintf("http://127.0.0.1:%d", port),
				AuthSecretRef: &operatorv1alpha1.SecretReference{Name: framework.SimSecretName(name), Key: "secret"},
			},
		},
	}
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	if !t.Run("the addresses become the management Service's EndpointSlices and the cluster is Ready with the pool's volume", func(t *testing.T) {
		// A host name is published as the addresses it resolves to
		// (kube-proxy programs no FQDN slice); this one resolves nowhere,
		// so it is left out and the admin is told.
		waitEndpoints(t, ns, name, port, []string{"IPv4 198.51.100.2@rack-2"})
		waitEvent(t, ns, name, "ExternalNameUnresolved", "gluster-1.storage.example.com")
		c := waitExternalReady(t, ns, name, "archive")
		var path []string
		for _, h := range c.Status.History {
			if h.Machine == "" || h.Machine == "cluster" {
				path = append(path, h.From+">"+h.To)
			}
		}
		if !slices.Equal(path, []string{"Pending>Provisioning", "Provisioning>Ready"}) {
			t.Errorf("cluster history %v, want Pending>Provisioning>Ready", path)
		}
		if pool.accepted.Load() == 0 {
			t.Error("the operator never talked to the pool")
		}
		forbidden.check(t, ns)
		noViolations(t)
	}) {
		return
	}

	if !t.Run("an added address is published through a reconfigure transition", func(t *testing.T) {
		editExternal(t, ns, name, func(n []operatorv1alpha1.ExternalNode) []operatorv1alpha1.ExternalNode {
			return append(n, operatorv1alpha1.ExternalNode{Address: "2001:db8::3", Zone: "rack-3"})
		})
		waitEndpoints(t, ns, name, port, []string{"IPv4 198.51.100.2@rack-2", "IPv6 2001:db8::3@rack-3"})
		// The EndpointSlices change in the reconfigure action, before the
		// status write that records the transition: wait for the record.
		var c *operatorv1alpha1.GlusterCluster
		err := framework.WaitFor(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
			c = waitExternalReady(t, ns, name, "archive")
			return reconfigured(c) > 0, fmt.Errorf("history %+v, no reconfigure yet", c.Status.History)
		})
		if err != nil || reconfigured(c) != 1 {
			t.Errorf("history %+v, want one reconfigure (%v)", c.Status.History, err)
		}
		waitEvent(t, ns, name, "EndpointsChanged", "add 2001:db8::3")
		forbidden.check(t, ns)
	}) {
		return
	}

	if !t.Run("a changed address and zone land although the operator is SIGKILLed right after the edit", func(t *testing.T) {
		editExternal(t, ns, name, func(n []operatorv1alpha1.ExternalNode) []operatorv1alpha1.ExternalNode {
			n[0].Zone = "rack-1b"
			n[1].Address = "198.51.100.20"
			return n
		})
		restartOperator(t)
		waitEndpoints(t, ns, name, port, []string{"IPv4 198.51.100.20@rack-2", "IPv6 2001:db8::3@rack-3"})
		waitExternalReady(t, ns, name, "archive")
		forbidden.check(t, ns)
		noViolations(t)
	}) {
		return
	}

	if !t.Run("a removed address leaves the EndpointSlices", func(t *testing.T) {
		editExternal(t, ns, name, func(n []operatorv1alpha1.ExternalNode) []operatorv1alpha1.ExternalNode {
			return slices.DeleteFunc(n, func(x operatorv1alpha1.ExternalNode) bool { return x.Address == "2001:db8::3" })
		})
		waitEndpoints(t, ns, name, port, []string{"IPv4 198.51.100.20@rack-2"})
		waitExternalReady(t, ns, name, "archive")
		forbidden.check(t, ns)
		noViolations(t)
	}) {
		return
	}

	if !t.Run("a management Service edited by hand is written back from the spec", func(t *testing.T) {
		// A changed port: the operator restores it. (Not a selector: the
		// EndpointSlice controller would publish slices of its own, and
		// keeps them after the selector is gone.)
		svcs := env.Client.CoreV1().Services(ns)
		var was int32
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			svc, err := svcs.Get(ctx, name+"-mgmt", metav1.GetOptions{})
			if err != nil {
				return err
			}
			was = svc.Spec.Ports[0].Port
			svc.Spec.Ports[0].Port++
			_, err = svcs.Update(ctx, svc, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		err = framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			svc, err := svcs.Get(ctx, name+"-mgmt", metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			if len(svc.Spec.Selector) > 0 || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].Port != was {
				return false, fmt.Errorf("selector %v, ports %+v", svc.Spec.Selector, svc.Spec.Ports)
			}
			return true, nil
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatalf("waiting for the management Service to be written back: %v", err)
		}
		waitEndpoints(t, ns, name, port, []string{"IPv4 198.51.100.20@rack-2"})
		waitExternalReady(t, ns, name, "archive")
		forbidden.check(t, ns)
		noViolations(t)
	}) {
		return
	}

	t.Run("deleting the cluster removes the Service and slices and leaves the pool intact", func(t *testing.T) {
		if err := anthill.OperatorV1alpha1().GlusterClusters(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
			if apierrors.IsNotFound(err) {
				return true, nil
			}
			if err != nil {
				return false, err
			}
			return false, fmt.Errorf("phase %s: %+v", c.Status.Phase, c.Status.Conditions)
		})
		if err != nil {
			dumpNamespace(t, ns)
			t.Fatal(err)
		}
		if _, err := env.Client.CoreV1().Services(ns).Get(ctx, name+"-mgmt", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
			t.Errorf("management Service still there: %v", err)
		}
		sl, err := env.Client.DiscoveryV1().EndpointSlices(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(sl.Items) != 0 {
			t.Errorf("EndpointSlices left: %d (%v)", len(sl.Items), err)
		}
		secrets, err := env.Client.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range secrets.Items {
			if s.Type != corev1.SecretTypeServiceAccountToken && s.Name != framework.SimSecretName(name) {
				t.Errorf("secret %s was created for an external cluster", s.Name)
			}
		}
		peers, err := g.ListPeers(ctx, gd2FilterAll)
		if err != nil {
			t.Fatal(err)
		}
		ids := func(ps []gd2.Peer) []string {
			var out []string
			for _, p := range ps {
				out = append(out, p.ID)
			}
			slices.Sort(out)
			return out
		}
		if !slices.Equal(ids(peers), ids(peersBefore)) {
			t.Errorf("pool peers %v after deletion, want %v untouched", ids(peers), ids(peersBefore))
		}
		if v, err := g.GetVolume(ctx, "archive"); err != nil || v.State != gd2.VolumeStarted {
			t.Errorf("volume archive after deletion: %+v, %v; want it started as before", v, err)
		}
		forbidden.check(t, ns)
		noViolations(t)
	})
}

// waitEvent waits for an Event on the GlusterCluster with reason whose
// message contains text.
func waitEvent(t *testing.T, ns, cluster, reason, text string) {
	t.Helper()
	err := framework.WaitFor(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		evs, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=GlusterCluster,involvedObject.name=" + cluster,
		})
		if err != nil {
			return false, err
		}
		var seen []string
		for _, e := range evs.Items {
			if e.Reason == reason && strings.Contains(e.Message, text) {
				return true, nil
			}
			seen = append(seen, e.Reason+": "+e.Message)
		}
		return false, fmt.Errorf("events %q", seen)
	})
	if err != nil {
		t.Fatalf("waiting for a %s Event naming %s: %v", reason, text, err)
	}
}
