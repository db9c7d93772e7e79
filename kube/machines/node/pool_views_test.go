package node

import (
	"context"
	"net"
	"net/url"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// addNode adds another node of the fixture's cluster, with its pod, claim
// and GD2 host, in state.
func (f *nodeFixture) addNode(name string) {
	f.t.Helper()
	node := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, Finalizers: []string{objects.FinalizerNode}, UID: types.UID("uid-" + name)},
		Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: "zone-1",
			Storage: &operatorv1alpha1.NodeStorage{DeviceCount: ptr.To[int32](1)}},
		Status: operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeProvisioning)},
	}
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodePodName(name), Annotations: map[string]string{objects.AnnotationVersion: "4.1.0"}},
		Status:     corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}},
	}
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.BrickClaimName(name, 0)},
		Status:     corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound},
	}
	if _, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Create(context.Background(), node, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	for _, err := range []error{f.nodes.Add(node), f.pods.Add(pod), f.pvcs.Add(pvc),
		f.sim.UpsertHost(sim.HostSpec{Name: objects.NodePodName(name), Address: objects.NodeAddress(node), Alive: true})} {
		if err != nil {
			f.t.Fatal(err)
		}
	}
}

// syncNode runs one sync of the named node and delivers the stored node
// to the indexer, as the informer would.
func (f *nodeFixture) syncNode(name string) {
	f.t.Helper()
	before, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	defer f.checkStatusWrites(name, len(f.anthill.Actions()), before)
	if _, err := f.syncer.Sync(context.Background(), gather.NodeKey("ns", name)); err != nil {
		f.t.Fatalf("sync %s: %v", name, err)
	}
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	if err := f.nodes.Update(n); err != nil {
		f.t.Fatal(err)
	}
	f.checkInvariants(n)
}

func (f *nodeFixture) nodeNamed(name string) *operatorv1alpha1.GlusterNode {
	f.t.Helper()
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

// onlineCluster is a fixture whose node syncer shares GD2 lists, with
// three Online nodes of one cluster.
func onlineCluster(t *testing.T) (*nodeFixture, []string) {
	t.Helper()
	f := newNodeFixture(t)
	f.syncer.GD2.Views = &effects.PoolViews{TTL: 5 * time.Second, Clock: f.clock}
	names := []string{"gc-z1-a", "gc-z1-b", "gc-z1-c"}
	for _, name := range names[1:] {
		f.addNode(name)
	}
	for _, name := range names {
		for range 3 {
			f.syncNode(name)
		}
		if st := f.nodeNamed(name).Status.State; st != string(states.NodeOnline) {
			t.Fatalf("%s is %s, want Online", name, st)
		}
	}
	return f, names
}

// The node syncs of one cluster within the view's interval make one
// peers.list and one devices.list_all between them; the next interval
// reads the peers again, and the devices only once their longer interval
// (ConfigListFactor times as long) has passed.
func TestNodeSyncsOfOneClusterShareOnePeerListPerInterval(t *testing.T) {
	f, names := onlineCluster(t)
	ttl := f.syncer.GD2.Views.TTL
	f.clock.Step(effects.ConfigListFactor*ttl + time.Second) // whatever the bring-up read is stale now
	peers, devices := f.calls.Count(fixtures.PeersList), f.calls.Count(fixtures.DevicesList)
	syncAll := func() {
		for range 4 {
			for _, name := range names {
				f.syncNode(name)
			}
		}
	}
	syncAll()
	if n := f.calls.Count(fixtures.PeersList) - peers; n != 1 {
		t.Errorf("12 steady node syncs of one cluster made %d peers.list, want 1", n)
	}
	if n := f.calls.Count(fixtures.DevicesList) - devices; n != 1 {
		t.Errorf("12 steady node syncs of one cluster made %d devices.list_all, want 1", n)
	}
	f.clock.Step(ttl + time.Second)
	syncAll()
	if n := f.calls.Count(fixtures.PeersList) - peers; n != 2 {
		t.Errorf("after the peer list's interval: %d peers.list in all, want 2", n)
	}
	if n := f.calls.Count(fixtures.DevicesList) - devices; n != 1 {
		t.Errorf("within the device list's interval: %d devices.list_all in all, want 1", n)
	}
	f.clock.Step(effects.ConfigListFactor * ttl)
	f.syncNode(names[0])
	if n := f.calls.Count(fixtures.DevicesList) - devices; n != 2 {
		t.Errorf("after the device list's interval: %d devices.list_all in all, want 2", n)
	}
}

// A configuration change anthill makes through GD2 drops the cluster's
// view: the next sync reads GD2 again instead of its own stale list.
func TestAConfigurationChangeDropsTheClusterView(t *testing.T) {
	f, names := onlineCluster(t)
	f.clock.Step(10 * time.Second)
	f.syncNode(names[0])
	peers := f.calls.Count(fixtures.PeersList)
	f.syncNode(names[1])
	if f.calls.Count(fixtures.PeersList) != peers {
		t.Fatal("the second sync of the interval read GD2 again")
	}
	gc, err := f.syncer.GD2.For(context.Background(), f.clusterObj())
	if err != nil {
		t.Fatal(err)
	}
	ops := &effects.GD2{Client: gc}
	if err := ops.SetPeerMetadata(context.Background(), f.nodeNamed(names[0]).Status.PeerID, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	f.syncNode(names[2])
	if n := f.calls.Count(fixtures.PeersList) - peers; n != 1 {
		t.Fatalf("after a peer edit the next sync made %d peers.list, want 1 (a fresh read)", n)
	}
}

func (f *nodeFixture) clusterObj() *operatorv1alpha1.GlusterCluster {
	f.t.Helper()
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

// A decision that acts is never taken on the shared view: an Online node
// asked to decommission gathers from the view, decides to drain, and
// takes that decision again from a live read before it disables a device.
func TestAnActingDecisionIsConfirmedOnALiveRead(t *testing.T) {
	f, names := onlineCluster(t)
	f.clock.Step(10 * time.Second)
	f.syncNode(names[1]) // fills the view
	n := f.nodeNamed(names[0])
	n.Annotations = map[string]string{objects.AnnotationRequest: objects.RequestDecommission}
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Update(context.Background(), n, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	peers := f.calls.Count(fixtures.PeersList)
	f.syncNode(names[0])
	if got := f.calls.Count(fixtures.PeersList) - peers; got != 1 {
		t.Errorf("the drain decision made %d peers.list, want 1 (the live confirmation; the first read is the view's)", got)
	}
	// That sync put the devices' closing on record; the next, deciding
	// again from a live read, drains.
	if n := f.nodeNamed(names[0]); n.Status.State != string(states.NodeOnline) || len(n.Status.Ledger) != 1 {
		t.Fatalf("state %s, ledger %+v; want Online with the drain's device change on record", n.Status.State, n.Status.Ledger)
	}
	peers = f.calls.Count(fixtures.PeersList)
	f.syncNode(names[0])
	if got := f.calls.Count(fixtures.PeersList) - peers; got != 1 {
		t.Errorf("the drain made %d peers.list, want 1 (the live confirmation)", got)
	}
	if st := f.nodeNamed(names[0]).Status.State; st != string(states.NodeDraining) {
		t.Fatalf("state %s, want Draining", st)
	}
}

// A node on its way out never gathers from the shared view. Here the
// view, read a moment ago, still lists a detaching node's peer; an admin
// has since deleted that peer in GD2. On the shared list the decision
// would be to delete the peer; the sync reads live, finds the peer gone
// and removes the node's workload instead, without asking GD2 to delete
// anything.
func TestADestructiveStepIsDecidedOnALiveRead(t *testing.T) {
	f, names := onlineCluster(t)
	f.clock.Step(10 * time.Second)
	f.syncNode(names[1]) // fills the view
	n := f.nodeNamed(names[0])
	// It drained (no volumes: nothing to move) and entered Detaching.
	now := metav1.Time{Time: f.clock.Now()}
	n.Status.State = string(states.NodeDetaching)
	n.Status.History = append(n.Status.History,
		operatorv1alpha1.TransitionRecord{Time: now, From: string(states.NodeOnline), To: string(states.NodeDraining), Event: string(states.NodeDrain)},
		operatorv1alpha1.TransitionRecord{Time: now, From: string(states.NodeDraining), To: string(states.NodeDetaching), Event: string(states.NodeDetach)})
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	// The admin's delete goes around the operator: the view is not told.
	// It is sent to another node's GD2 (one refuses to remove itself).
	if err := f.gd2Via(f.nodeNamed(names[1])).DeletePeer(context.Background(), n.Status.PeerID); err != nil {
		t.Fatal(err)
	}
	peers, deletes := f.calls.Count(fixtures.PeersList), f.calls.Count("DELETE /v1/peers/"+n.Status.PeerID)
	f.syncNode(names[0])
	if got := f.calls.Count(fixtures.PeersList) - peers; got != 1 {
		t.Errorf("the detaching sync made %d peers.list, want 1 (live)", got)
	}
	if f.calls.Count("DELETE /v1/peers/"+n.Status.PeerID) != deletes {
		t.Error("the sync asked GD2 to delete a peer on the shared view")
	}
	if st := f.nodeNamed(names[0]).Status.State; st != string(states.NodeDeleting) {
		t.Fatalf("state %s, want Deleting (the live read found the peer gone)", st)
	}
}

// Exactly the states nodes rest in gather from the shared view.
func TestOnlyRestingStatesGatherFromTheSharedView(t *testing.T) {
	resting := map[fsm.State]bool{states.NodeOnline: true, states.NodeMaintenance: true, states.NodeOffline: true, states.NodeFailed: true}
	for _, sd := range states.NodeDefinition().States {
		if got := restsOnSharedView(sd.Name); got != resting[sd.Name] {
			t.Errorf("%s: gathers from the shared view = %t, want %t", sd.Name, got, resting[sd.Name])
		}
	}
}

// gd2Via is a GD2 client served by node's own GD2, as an admin addressing
// its pod rather than the cluster's Service.
func (f *nodeFixture) gd2Via(node *operatorv1alpha1.GlusterNode) *gd2.Client {
	f.t.Helper()
	p, err := f.gd2.GetPeer(context.Background(), node.Status.PeerID)
	if err != nil {
		f.t.Fatal(err)
	}
	u, err := url.Parse(f.clusterObj().Spec.Management.Endpoint)
	if err != nil {
		f.t.Fatal(err)
	}
	g, err := gd2.New(gd2.Options{Endpoint: "http://" + net.JoinHostPort(p.Name, u.Port()), DialAddress: u.Host, Secret: fixtures.GD2Secret})
	if err != nil {
		f.t.Fatal(err)
	}
	return g
}

// A cluster whose liveness windows are shorter than the shared list's
// interval has its resting nodes read the peers at least every half the
// shorter window: a drop 1.5 s old is seen by a cluster with a 2 s
// offline grace, where the 5 s list would still show the peer alive.
func TestShortLivenessWindowsSeeADropWithinHalfAWindow(t *testing.T) {
	f, names := onlineCluster(t)
	c := f.clusterObj()
	c.Spec.FailurePolicy = &operatorv1alpha1.FailurePolicy{
		OfflineGrace:   &metav1.Duration{Duration: 2 * time.Second},
		RecoveryWindow: &metav1.Duration{Duration: 4 * time.Second},
	}
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(10 * time.Second)
	f.syncNode(names[1]) // fills the view
	peers := f.calls.Count(fixtures.PeersList)
	f.syncNode(names[2])
	if f.calls.Count(fixtures.PeersList) != peers {
		t.Fatal("a sync within half the grace read GD2 again instead of sharing the list")
	}
	if err := f.sim.SetPeerAlive(f.nodeNamed(names[0]).Status.PeerID, false); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(1500 * time.Millisecond)
	f.syncNode(names[0])
	if f.calls.Count(fixtures.PeersList) != peers+1 {
		t.Errorf("a sync 1.5 s after the list was read made %d peers.list, want 1", f.calls.Count(fixtures.PeersList)-peers)
	}
	if n := f.nodeNamed(names[0]); n.Status.DownSince == nil {
		t.Errorf("the drop went unseen: state %s, no downSince", n.Status.State)
	}
}

// Gathering only reads: a node's Gather and GatherLive, for a node on its
// way out (it reads live) and one at rest (from the shared view), make no
// write to Kubernetes and no GD2 call but reads.
func TestGatherWritesNothing(t *testing.T) {
	f, names := onlineCluster(t)
	n := f.nodeNamed(names[0])
	n.Annotations = map[string]string{objects.AnnotationRequest: objects.RequestDecommission}
	if err := f.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	for _, reactor := range []*k8stesting.Fake{&f.anthill.Fake, &f.kube.Fake} {
		reactor.PrependReactor("*", "*", func(a k8stesting.Action) (bool, runtime.Object, error) {
			switch a.GetVerb() {
			case "get", "list", "watch":
				return false, nil, nil
			}
			t.Errorf("gathering wrote: %s %s", a.GetVerb(), a.GetResource().Resource)
			return false, nil, nil
		})
	}
	calls := f.calls.Snapshot()
	for _, st := range []fsm.State{states.NodeOnline, states.NodeDetaching} {
		in := engine.Instance[*nodeFacts]{State: st, Facts: &nodeFacts{clusterName: "gc"}}
		if err := f.syncer.Gather(context.Background(), n, &in); err != nil {
			t.Fatal(err)
		}
		if err := f.syncer.GatherLive(context.Background(), n, &in, states.Decision{Event: states.NodeDrain}); err != nil {
			t.Fatal(err)
		}
	}
	for call, k := range f.calls.Snapshot() {
		if k > calls[call] && !strings.HasPrefix(call, "GET ") {
			t.Errorf("gathering called GD2: %s", call)
		}
	}
}
