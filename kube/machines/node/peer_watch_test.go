package node

import (
	"context"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// watchFixture is a PeerWatch over an onlineCluster fixture, whose rounds
// the test runs one at a time, recording what they enqueue.
type watchFixture struct {
	*nodeFixture
	names  []string
	watch  *PeerWatch
	queued []engine.Key
}

func newWatchFixture(t *testing.T) *watchFixture {
	t.Helper()
	f, names := onlineCluster(t)
	f.syncer.PeerWatched = true
	w := &watchFixture{nodeFixture: f, names: names}
	w.watch = &PeerWatch{
		Clusters: listers.NewGlusterClusterLister(f.clusters), Nodes: listers.NewGlusterNodeLister(f.nodes),
		GD2: f.syncer.GD2, Interval: f.syncer.GD2.Views.TTL, Clock: f.clock,
		Enqueue: func(k engine.Key) { w.queued = append(w.queued, k) },
	}
	return w
}

// round runs one round of the watch and returns the names it enqueued.
func (w *watchFixture) round() []string {
	w.t.Helper()
	w.queued = nil
	for _, read := range w.watch.Round(context.Background()) {
		read()
	}
	var out []string
	for _, k := range w.queued {
		if k.Machine != states.NodeMachine {
			w.t.Fatalf("the watch enqueued %v, not a node", k)
		}
		out = append(out, k.Name)
	}
	slices.Sort(out)
	return out
}

// A node at rest, watched, sets no liveness timer; the watch reads the
// cluster's peers once per interval (LivenessListAge: 15 s at the default
// windows) and enqueues exactly the node whose peer died, which then
// starts its outage clock on its next sync; and, later, the node whose
// peer came back.
func TestThePeerWatchEnqueuesTheNodeWhosePeerChanged(t *testing.T) {
	w := newWatchFixture(t)
	w.clock.Step(time.Minute)
	res, err := w.syncer.Sync(context.Background(), gather.NodeKey("ns", w.names[0]))
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter < 5*time.Minute {
		t.Errorf("a watched Online node at rest requeues after %s, want no liveness timer (minutes)", res.RequeueAfter)
	}
	if got := w.round(); !slices.Equal(got, w.names) {
		t.Errorf("the first round enqueued %v, want every node (%v)", got, w.names)
	}
	peers := w.calls.Count(fixtures.PeersList)
	if got := w.round(); len(got) != 0 {
		t.Errorf("a round within the interval enqueued %v", got)
	}
	w.clock.Step(16 * time.Second)
	if got := w.round(); len(got) != 0 {
		t.Errorf("a round with nothing changed enqueued %v", got)
	}
	if n := w.calls.Count(fixtures.PeersList) - peers; n != 1 {
		t.Errorf("two rounds of one interval apart made %d peers.list, want 1", n)
	}
	dead := w.nodeNamed(w.names[1])
	if err := w.sim.SetPeerAlive(dead.Status.PeerID, false); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(16 * time.Second)
	if got := w.round(); !slices.Equal(got, []string{dead.Name}) {
		t.Fatalf("after a peer died the round enqueued %v, want [%s]", got, dead.Name)
	}
	w.syncNode(dead.Name)
	if n := w.nodeNamed(dead.Name); n.Status.DownSince == nil {
		t.Errorf("the enqueued node did not start its outage clock: state %s", n.Status.State)
	}
	if err := w.sim.SetPeerAlive(dead.Status.PeerID, true); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(16 * time.Second)
	if got := w.round(); !slices.Equal(got, []string{dead.Name}) {
		t.Errorf("after the peer came back the round enqueued %v, want [%s]", got, dead.Name)
	}
}

// A device disabled around anthill, and GD2 going silent, are changes of
// what a node at rest decides from: the watch enqueues the nodes.
func TestThePeerWatchEnqueuesOnDevicesAndOnGD2Silence(t *testing.T) {
	w := newWatchFixture(t)
	w.round()
	node := w.nodeNamed(w.names[2])
	devs, err := w.gd2.ListDevices(context.Background(), node.Status.PeerID)
	if err != nil || len(devs) == 0 {
		t.Fatalf("devices of %s: %v, %v", node.Name, devs, err)
	}
	if err := w.gd2.EditDevice(context.Background(), node.Status.PeerID, devs[0].Device, gd2.DeviceDisabled); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(time.Minute) // past the device list's longer interval too
	if got := w.round(); !slices.Equal(got, []string{node.Name}) {
		t.Errorf("after a device was disabled the round enqueued %v, want [%s]", got, node.Name)
	}
	w.syncNode(node.Name) // enables the device again (spec.desiredState)
	w.clock.Step(time.Minute)
	w.round()
	// A peer that does not show its node's state (a mirror GD2 failed)
	// is enqueued every round until a sync writes it.
	other := w.nodeNamed(w.names[0])
	if _, err := w.gd2.EditPeer(context.Background(), other.Status.PeerID, gd2.PeerEditRequest{Metadata: map[string]string{transitions.MetaState: string(states.NodeJoining)}}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		w.clock.Step(16 * time.Second)
		if got := w.round(); !slices.Equal(got, []string{other.Name}) {
			t.Errorf("with its peer showing Joining the round enqueued %v, want [%s]", got, other.Name)
		}
	}
	w.syncNode(other.Name)
	w.clock.Step(16 * time.Second)
	if got := w.round(); len(got) != 0 {
		t.Errorf("after the sync mirrored the state the round enqueued %v", got)
	}
	c := w.clusterObj()
	c.Spec.Management.Endpoint = "http://127.0.0.1:1"
	c, err = w.anthill.OperatorV1alpha1().GlusterClusters("ns").Update(context.Background(), c, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(time.Minute)
	if got := w.round(); !slices.Equal(got, w.names) {
		t.Errorf("with GD2 silent the round enqueued %v, want every node (%v)", got, w.names)
	}
}

// A read in flight is not started again, a cluster with short windows is
// read as often as they need, an external cluster is not read, and a
// cluster that is gone is forgotten.
func TestThePeerWatchRounds(t *testing.T) {
	w := newWatchFixture(t)
	reads := w.watch.Round(context.Background())
	if len(reads) != 1 {
		t.Fatalf("the first round started %d reads, want 1", len(reads))
	}
	w.clock.Step(time.Minute)
	if again := w.watch.Round(context.Background()); len(again) != 0 {
		t.Errorf("a cluster with a read in flight was read again")
	}
	reads[0]()
	c := w.clusterObj()
	c.Spec.FailurePolicy = &operatorv1alpha1.FailurePolicy{
		OfflineGrace: &metav1.Duration{Duration: 2 * time.Second}, RecoveryWindow: &metav1.Duration{Duration: 4 * time.Second},
	}
	if err := w.clusters.Update(c); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(time.Minute)
	w.round()
	w.clock.Step(1100 * time.Millisecond)
	peers := w.calls.Count(fixtures.PeersList)
	w.round()
	if w.calls.Count(fixtures.PeersList) != peers+1 {
		t.Errorf("a cluster with a 2 s offline grace was not read again after 1.1 s")
	}
	ext := c.DeepCopy()
	ext.Spec.Mode = operatorv1alpha1.ClusterModeExternal
	if err := w.clusters.Update(ext); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(time.Minute)
	if got := w.round(); len(got) != 0 {
		t.Errorf("an external cluster's nodes were enqueued: %v", got)
	}
	if len(w.watch.clusters) != 0 {
		t.Errorf("the watch keeps %d clusters, want none (the only one is external)", len(w.watch.clusters))
	}
}

// While a node waits for its restarted peer (states.WakePeerBack), the
// watch reads its cluster every states.PeerWatchFast, not at its usual
// interval; once no node waits so, it goes back to that interval.
func TestThePeerWatchReadsFastWhileANodeAwaitsItsPeer(t *testing.T) {
	w := newWatchFixture(t)
	w.round()
	peers := func() int { return w.calls.Count(fixtures.PeersList) }
	w.clock.Step(states.PeerWatchFast)
	before := peers()
	w.round()
	if peers() != before {
		t.Fatalf("a cluster at rest was read again after %s", states.PeerWatchFast)
	}
	obj, _, _ := w.nodes.GetByKey("ns/" + w.names[0])
	n := obj.(*operatorv1alpha1.GlusterNode).DeepCopy()
	n.Status.State = string(states.NodeRejoining)
	n.Status.Conditions = []metav1.Condition{{Type: operatorv1alpha1.ConditionReady, Status: metav1.ConditionFalse, Reason: states.ReasonBricksOffline}}
	if err := w.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	w.round()
	if peers() != before+1 {
		t.Fatalf("a cluster with a node awaiting its peer was not read after %s", states.PeerWatchFast)
	}
	w.clock.Step(states.PeerWatchFast / 2)
	w.round()
	if peers() != before+1 {
		t.Fatalf("the cluster was read again sooner than %s", states.PeerWatchFast)
	}
	n.Status.State, n.Status.Conditions = string(states.NodeOnline), nil
	if err := w.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	w.clock.Step(states.PeerWatchFast)
	w.round()
	if peers() != before+1 {
		t.Fatalf("the cluster was read fast with no node awaiting its peer")
	}
}
