package node

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/internal/machinetest"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// nodeFixture is a Syncer over fake clientsets whose listers are fed
// from indexers the test controls (as an informer would), a fake clock, and
// a real GD2 simulator over HTTP.
type nodeFixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	anthill  *anthillfake.Clientset
	nodes    cache.Indexer
	clusters cache.Indexer
	pods     cache.Indexer
	pvcs     cache.Indexer
	sim      *sim.Simulator
	gd2      *gd2.Client
	// calls counts the requests the simulator served.
	calls  *fixtures.RequestCounter
	clock  *clocktesting.FakeClock
	events *record.FakeRecorder
	syncer *Syncer
}

func newNodeFixture(t *testing.T) *nodeFixture {
	t.Helper()
	w := machinetest.NewNodeWorld(t)
	f := &nodeFixture{
		t: t, kube: w.Kube, anthill: w.Anthill, nodes: w.Nodes, clusters: w.Clusters, pods: w.Pods, pvcs: w.PVCs,
		sim: w.Sim, gd2: w.GD2, calls: w.Calls, clock: w.Clock, events: w.Events,
	}
	p := w.SyncerParts()
	f.syncer = &Syncer{
		Nodes: p.Nodes, Clusters: p.Clusters, Pods: p.Pods, PVCs: p.PVCs,
		Anthill: f.anthill, Kube: p.Kube, GD2: p.GD2, Clock: f.clock, Log: p.Log,
	}
	return f
}

// sync runs one sync, then copies the stored node into the indexer, as the
// informer would deliver it, and checks the invariants every sync keeps.
func (f *nodeFixture) sync() (engine.Result, error) {
	f.t.Helper()
	defer f.checkStatusWrites("gc-z1-a", len(f.anthill.Actions()), f.node())
	res, err := f.syncer.Sync(context.Background(), gather.NodeKey("ns", "gc-z1-a"))
	n, gerr := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), "gc-z1-a", metav1.GetOptions{})
	if gerr != nil {
		f.t.Fatal(gerr)
	}
	if err := f.nodes.Update(n); err != nil {
		f.t.Fatal(err)
	}
	f.checkInvariants(n)
	return res, err
}

// checkStatusWrites checks that a sync of node name, whose writes are the
// anthill clientset's actions from the from'th on, wrote its status at
// most once per round (syncRounds), and only its own: the ledger is part
// of that write, never a write of the cluster's. Every write but the last
// commits a transition or a record over the one before it (before, for
// the first): the runner's next round follows only those, so a wait's
// message is the last thing a sync writes.
func (f *nodeFixture) checkStatusWrites(name string, from int, before *operatorv1alpha1.GlusterNode) {
	f.t.Helper()
	var written []*operatorv1alpha1.GlusterNode
	for _, a := range f.anthill.Actions()[from:] {
		u, ok := a.(k8stesting.UpdateAction)
		if !ok || a.GetSubresource() != "status" {
			continue
		}
		n, ok := u.GetObject().(*operatorv1alpha1.GlusterNode)
		if !ok || a.GetResource().Resource != "glusternodes" || n.Name != name {
			m, _ := apimeta.Accessor(u.GetObject())
			f.t.Fatalf("a sync of node %s wrote the status of %s %s", name, a.GetResource().Resource, m.GetName())
		}
		written = append(written, n)
	}
	if len(written) > syncRounds {
		f.t.Fatalf("a sync of node %s wrote its status %d times, want at most %d (one per round)", name, len(written), syncRounds)
	}
	for i := 0; i+1 < len(written); i++ {
		prev, cur := before.Status, written[i].Status
		if i > 0 {
			prev = written[i-1].Status
		}
		if cur.State == prev.State && equality.Semantic.DeepEqual(cur.Ledger, prev.Ledger) && equality.Semantic.DeepEqual(cur.History, prev.History) {
			f.t.Fatalf("a sync of node %s went on after write %d, which committed no transition and recorded nothing", name, i+1)
		}
	}
}

func (f *nodeFixture) checkInvariants(n *operatorv1alpha1.GlusterNode) {
	f.t.Helper()
	if !states.NodeDefinition().HasState(fsm.State(n.Status.State)) {
		f.t.Fatalf("status holds unknown state %q", n.Status.State)
	}
	if len(n.Status.History) > operatorv1alpha1.MaxHistory {
		f.t.Fatalf("history has %d entries, more than %d", len(n.Status.History), operatorv1alpha1.MaxHistory)
	}
	for i, h := range n.Status.History {
		if i > 0 && h.From != n.Status.History[i-1].To {
			f.t.Fatalf("history is not a path: entry %d starts at %s after %s", i, h.From, n.Status.History[i-1].To)
		}
	}
	if v := f.sim.Violations(); len(v) > 0 {
		f.t.Fatalf("simulator violations: %+v", v)
	}
}

// syncWithFailedStatusWrite runs one sync whose status write fails, as a
// lost etcd write or an operator killed before it would.
func (f *nodeFixture) syncWithFailedStatusWrite() {
	f.t.Helper()
	f.syncFailingStatusWrite(1)
}

// syncFailingStatusWrite runs one sync whose k'th status write (counted
// from 1, one per round) fails, as a lost etcd write or an operator killed
// before it would. The writes before it land.
func (f *nodeFixture) syncFailingStatusWrite(k int) {
	f.t.Helper()
	writes, done := 0, false
	f.anthill.PrependReactor("update", "glusternodes", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() != "status" || done {
			return false, nil, nil
		}
		if writes++; writes == k {
			done = true
			return true, nil, errors.New("injected: etcd timeout")
		}
		return false, nil, nil
	})
	if _, err := f.sync(); err == nil {
		f.t.Fatalf("a sync whose status write %d failed did not fail", k)
	}
}

// pickForUpgrade gives the fixture's node a StatefulSet at 4.1.0 and puts
// it in the upgrade machine's batch to 4.1.1, as the upgrade machine's
// pick does; it returns the StatefulSet.
func (f *nodeFixture) pickForUpgrade() *appsv1.StatefulSet {
	f.t.Helper()
	sts := &appsv1.StatefulSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodeStatefulSetName("gc-z1-a")},
		Spec: appsv1.StatefulSetSpec{Template: corev1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{objects.AnnotationVersion: "4.1.0"}},
			Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: objects.ContainerGD2, Image: "gluster/gd2:4.1.0"}}},
		}},
	}
	if _, err := f.kube.AppsV1().StatefulSets("ns").Create(context.Background(), sts, metav1.CreateOptions{}); err != nil {
		f.t.Fatal(err)
	}
	obj, _, _ := f.clusters.GetByKey("ns/gc")
	cluster := obj.(*operatorv1alpha1.GlusterCluster).DeepCopy()
	cluster.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers),
		FromVersion: "4.1.0", ToVersion: "4.1.1", CurrentNodes: []string{"gc-z1-a"}}
	if err := f.clusters.Update(cluster); err != nil {
		f.t.Fatal(err)
	}
	return sts
}

func (f *nodeFixture) node() *operatorv1alpha1.GlusterNode {
	n, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").Get(context.Background(), "gc-z1-a", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func TestNodeSyncerJoinsAndActivatesOneTransitionPerSync(t *testing.T) {
	f := newNodeFixture(t)
	if _, err := f.sync(); err != nil {
		t.Fatalf("join: %v", err)
	}
	n := f.node()
	if n.Status.State != string(states.NodeJoining) || n.Status.PeerID == "" {
		t.Fatalf("after one sync: state %s, peer %q; want Joining with a peer id", n.Status.State, n.Status.PeerID)
	}
	if len(n.Status.History) != 1 {
		t.Fatalf("one sync must commit one transition, history has %d", len(n.Status.History))
	}
	if _, err := f.sync(); err != nil {
		t.Fatalf("activate: %v", err)
	}
	n = f.node()
	if n.Status.State != string(states.NodeOnline) {
		t.Fatalf("after two syncs: state %s, want Online", n.Status.State)
	}
	devs, err := f.gd2.ListDevices(context.Background(), n.Status.PeerID)
	if err != nil || len(devs) != 1 {
		t.Fatalf("devices of the peer: %v, %v; want the node's one device registered", devs, err)
	}
	// A steady node writes nothing: the first sync after the transition
	// records the steady message, later ones find nothing to change.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	before := len(f.anthill.Actions())
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	for _, a := range f.anthill.Actions()[before:] {
		if a.GetVerb() == "update" {
			t.Fatalf("a sync of a steady Online node wrote %s", a.GetSubresource())
		}
	}
	select {
	case e := <-f.events.Events:
		t.Logf("event: %s", e)
	default:
		t.Fatal("no Kubernetes Event was recorded for the transitions")
	}
}

func TestNodeSyncerRetriesAFailedStatusWriteWithoutRepeatingTheJoin(t *testing.T) {
	f := newNodeFixture(t)
	f.syncWithFailedStatusWrite()
	if n := f.node(); n.Status.State != string(states.NodeProvisioning) {
		t.Fatalf("state moved to %s although the write failed", n.Status.State)
	}
	if _, err := f.sync(); err != nil {
		t.Fatalf("retry: %v", err)
	}
	peers, err := f.gd2.ListPeers(context.Background(), gd2.Filter{Key: transitions.MetaNode, Value: "ns/gc-z1-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(peers) != 1 || f.node().Status.PeerID != peers[0].ID {
		t.Fatalf("after a retried join: %d peers tagged for the node, status peer %q", len(peers), f.node().Status.PeerID)
	}
}

func TestNodeSyncerSurfacesAnUnknownStateWithoutResettingIt(t *testing.T) {
	f := newNodeFixture(t)
	n := f.node()
	n.Status.State = "Levitating"
	if _, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	_, err := f.syncer.Sync(context.Background(), gather.NodeKey("ns", "gc-z1-a"))
	var perm *engine.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("want a permanent error, got %v", err)
	}
	got := f.node()
	if got.Status.State != "Levitating" {
		t.Fatalf("unknown state was reset to %q", got.Status.State)
	}
	found := false
	for _, c := range got.Status.Conditions {
		found = found || (c.Reason == states.ReasonUnknownState && c.Status == metav1.ConditionTrue)
	}
	if !found {
		t.Fatalf("no condition names the unknown state: %+v", got.Status.Conditions)
	}
}

func TestNodeSyncerWaitsForDowntimeOnTheInjectedClock(t *testing.T) {
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	peer := f.node().Status.PeerID
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	// The first report records the outage and keeps the node Online for
	// the offline grace.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	n := f.node()
	if n.Status.State != string(states.NodeOnline) || n.Status.DownSince == nil {
		t.Fatalf("peer just down: state %s, downSince %v; want Online with the outage recorded", n.Status.State, n.Status.DownSince)
	}
	res, err := f.sync()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > gather.DefaultOfflineGrace {
		t.Fatalf("an Online node whose peer is down must look again within the grace, got %v", res.RequeueAfter)
	}
	f.clock.Step(gather.DefaultOfflineGrace)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeOffline) {
		t.Fatalf("peer down past the grace: state %s, want Offline", s)
	}
	res, err = f.sync()
	if err != nil {
		t.Fatal(err)
	}
	if res.RequeueAfter <= 0 || res.RequeueAfter > gather.DefaultOfflineGrace {
		t.Fatalf("an Offline node must keep polling its peer's liveness, got %v", res.RequeueAfter)
	}
	f.clock.Step(gather.DefaultPermissibleDowntime + time.Second)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeFailed) {
		t.Fatalf("after the permissible downtime: state %s, want Failed", s)
	}
}

// TestNodeSyncerRecoversOnlyAfterTheRecoveryWindow: a peer back for a
// moment keeps its node Offline and restarts the outage clock when it drops
// again; a peer that stays back for the window returns the node to Online.
func TestNodeSyncerRecoversOnlyAfterTheRecoveryWindow(t *testing.T) {
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	peer := f.node().Status.PeerID
	setAlive := func(alive bool) {
		t.Helper()
		if err := f.sim.SetPeerAlive(peer, alive); err != nil {
			t.Fatal(err)
		}
	}
	syncN := func(n int) {
		t.Helper()
		for range n {
			if _, err := f.sync(); err != nil {
				t.Fatal(err)
			}
		}
	}
	setAlive(false)
	syncN(1)
	f.clock.Step(gather.DefaultOfflineGrace)
	syncN(1)
	first := f.node().Status.DownSince
	if f.node().Status.State != string(states.NodeOffline) || first == nil {
		t.Fatalf("want Offline with an outage clock, got %s %v", f.node().Status.State, first)
	}

	f.clock.Step(10 * time.Minute)
	setAlive(true)
	syncN(2)
	n := f.node()
	if n.Status.State != string(states.NodeOffline) || n.Status.AliveSince == nil {
		t.Fatalf("peer back for a moment: state %s aliveSince %v; want Offline in the recovery window", n.Status.State, n.Status.AliveSince)
	}

	f.clock.Step(time.Minute)
	setAlive(false)
	syncN(2)
	n = f.node()
	if n.Status.State != string(states.NodeOffline) || n.Status.AliveSince != nil || n.Status.DownSince == nil || !n.Status.DownSince.After(first.Time) {
		t.Fatalf("peer lost again: state %s downSince %v (first %v) aliveSince %v; want Offline with a new outage", n.Status.State, n.Status.DownSince, first, n.Status.AliveSince)
	}

	// 25 minutes after the second drop, 36 after the first: within the
	// deadline, because the outage started over.
	f.clock.Step(25 * time.Minute)
	syncN(1)
	if s := f.node().Status.State; s != string(states.NodeOffline) {
		t.Fatalf("36 minutes after the first drop but 25 into the second outage: state %s, want Offline", s)
	}

	// Records a drain would have left: on Online the peers a replace-brick
	// failed on are forgotten, the bricks that ever left the node are not
	// (their logical volumes stay on its devices).
	n = f.node()
	n.Status.RefusedPeers = []string{"refused-peer"}
	n.Status.LeftBricks = []operatorv1alpha1.BrickRef{{Volume: "vol", Path: "/bricks/vol"}}
	stored, err := f.anthill.OperatorV1alpha1().GlusterNodes("ns").UpdateStatus(context.Background(), n, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.nodes.Update(stored); err != nil {
		t.Fatal(err)
	}

	setAlive(true)
	syncN(2)
	f.clock.Step(gather.DefaultRecoveryWindow)
	syncN(1)
	n = f.node()
	if n.Status.State != string(states.NodeOnline) || n.Status.DownSince != nil || n.Status.AliveSince != nil {
		t.Fatalf("peer alive for the window: state %s downSince %v aliveSince %v; want Online with clear clocks", n.Status.State, n.Status.DownSince, n.Status.AliveSince)
	}
	if len(n.Status.RefusedPeers) != 0 || len(n.Status.LeftBricks) != 1 {
		t.Fatalf("Online with refusedPeers %v and leftBricks %v; want the first cleared and the second kept", n.Status.RefusedPeers, n.Status.LeftBricks)
	}
}

func TestOnlyLivePoolMemberIgnoresTombstonesOnly(t *testing.T) {
	abandoned := map[string]string{transitions.MetaState: string(states.NodeAbandoned)}
	online := map[string]string{transitions.MetaState: string(states.NodeOnline)}
	vol := gd2.Volume{Name: "v", Subvols: []gd2.Subvol{{Bricks: []gd2.BrickInfo{{PeerID: "held", Path: "/b"}}}}}
	tests := []struct {
		name  string
		peers []gd2.Peer
		want  bool
	}{
		{name: "alone in the pool", peers: []gd2.Peer{{ID: "self", Online: true}}, want: true},
		{name: "a dead abandoned peer without bricks is a tombstone", peers: []gd2.Peer{{ID: "self", Online: true}, {ID: "t", Metadata: abandoned}}, want: true},
		{name: "an abandoned peer that is alive again is a member", peers: []gd2.Peer{{ID: "self", Online: true}, {ID: "t", Online: true, Metadata: abandoned}}},
		{name: "an abandoned peer holding a brick is a member", peers: []gd2.Peer{{ID: "self", Online: true}, {ID: "held", Metadata: abandoned}}},
		{name: "a dead peer anthill did not abandon is a member", peers: []gd2.Peer{{ID: "self", Online: true}, {ID: "d", Metadata: online}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := onlyLivePoolMember("self", tc.peers, []gd2.Volume{vol}); got != tc.want {
				t.Errorf("onlyLivePoolMember() = %t, want %t", got, tc.want)
			}
		})
	}
}

// TestNodeSyncerPersistsRestartingBeforeStoppingThePod: an upgrade stops a
// node's pod only once Restarting is in status. One sync takes a picked
// node through Quiescing, the restart's record, the restart and the pod's
// deletion (a round each, syncRounds); a status write that fails at any
// of them (the operator could as well have been killed) stops the sync
// there, with nothing done that is not on record before it, so the node
// is never seen in Quiescing with a pod already at the target, which it
// would take for "nothing was stopped".
func TestNodeSyncerPersistsRestartingBeforeStoppingThePod(t *testing.T) {
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if s := f.node().Status.State; s != string(states.NodeOnline) {
		t.Fatalf("state %s, want Online", s)
	}
	sts := f.pickForUpgrade()
	podDeletes := func() int {
		n := 0
		for _, a := range f.kube.Actions() {
			if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
				n++
			}
		}
		return n
	}
	devicesEnabled := func() int {
		devs, err := f.gd2.ListDevices(context.Background(), f.node().Status.PeerID)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, d := range devs {
			if d.State == gd2.DeviceEnabled {
				n++
			}
		}
		return n
	}
	stsVersion := func() string {
		live, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), sts.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return live.Spec.Template.Annotations[objects.AnnotationVersion]
	}
	if devicesEnabled() == 0 {
		t.Fatal("the fixture's node has no enabled device to disable")
	}
	untouched := func(when string) {
		t.Helper()
		if n := podDeletes(); n != 0 {
			t.Fatalf("%s: the pod was deleted %d time(s) before Restarting was persisted", when, n)
		}
		if v := stsVersion(); v != "4.1.0" {
			t.Fatalf("%s: the StatefulSet moved to %s before Restarting was persisted", when, v)
		}
	}

	// The first write (upgrade, into Quiescing) fails: nothing happened.
	f.syncFailingStatusWrite(1)
	if s := f.node().Status.State; s != string(states.NodeOnline) || devicesEnabled() == 0 {
		t.Fatalf("state %s, %d device(s) enabled; want Online with nothing changed", s, devicesEnabled())
	}
	untouched("upgrade's write failed")

	// Quiescing is written; the record of restart's device change fails:
	// the devices stay enabled.
	f.syncFailingStatusWrite(2)
	if n := f.node(); n.Status.State != string(states.NodeQuiescing) || len(n.Status.Ledger) != 0 || devicesEnabled() == 0 {
		t.Fatalf("state %s, ledger %+v, %d device(s) enabled; want Quiescing with nothing on record or done", n.Status.State, n.Status.Ledger, devicesEnabled())
	}
	untouched("the restart's record failed")

	// The record lands and restart's action runs; the write committing
	// Restarting fails: the devices are disabled (on record first), the
	// pod still runs.
	f.syncFailingStatusWrite(2)
	if l := f.node().Status.Ledger; len(l) != 1 || l[0].Action != operatorv1alpha1.LedgerActionDisableDevices || l[0].State != string(states.NodeRestarting) ||
		f.node().Status.State != string(states.NodeQuiescing) {
		t.Fatalf("ledger %+v, state %s; want restart's disableDevices on record, in Quiescing", l, f.node().Status.State)
	}
	if n := devicesEnabled(); n != 0 {
		t.Fatalf("restart's action left %d device(s) enabled", n)
	}
	untouched("the write committing Restarting failed")

	// Then one sync restarts: Restarting with the roll on record in the
	// same write, and the roll in the next round.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeRestarting) {
		t.Fatalf("state %s, want Restarting", s)
	}
	if l := f.node().Status.Ledger; len(l) != 2 || l[1].Action != operatorv1alpha1.LedgerActionRollWorkload || l[1].Version != "4.1.1" {
		t.Fatalf("ledger %+v; want the restart's roll on record", l)
	}
	live, err := f.kube.AppsV1().StatefulSets("ns").Get(context.Background(), sts.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, img := live.Spec.Template.Annotations[objects.AnnotationVersion], live.Spec.Template.Spec.Containers[0].Image; v != "4.1.1" || img != "gluster/gd2:4.1.1" {
		t.Fatalf("StatefulSet at %s (%s), want 4.1.1", v, img)
	}
	if n := podDeletes(); n != 1 {
		t.Fatalf("pod deleted %d times in Restarting, want once", n)
	}
	// Repeating the step changes nothing once the pod is gone.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if l := f.node().Status.Ledger; len(l) != 2 {
		t.Fatalf("ledger %+v: rolling the workload recorded it again", l)
	}
	if n := podDeletes(); n != 1 {
		t.Fatalf("a repeated rollWorkload deleted the pod again (%d deletes)", n)
	}
}

// TestNodeSyncerStopsAPickedNodeInOneSync: with nothing failing, the sync
// that finds a node picked for an upgrade takes it from Online to its pod
// deleted, a round per decision, each write before the next round's
// action: Quiescing, the restart's record, Restarting with the roll's
// record, then the roll.
func TestNodeSyncerStopsAPickedNodeInOneSync(t *testing.T) {
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	f.pickForUpgrade()
	from := len(f.anthill.Actions())
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	var written []string
	for _, a := range f.anthill.Actions()[from:] {
		if u, ok := a.(k8stesting.UpdateAction); ok && a.GetSubresource() == "status" {
			n := u.GetObject().(*operatorv1alpha1.GlusterNode)
			written = append(written, fmt.Sprintf("%s/%d", n.Status.State, len(n.Status.Ledger)))
		}
	}
	// The last write is the roll's message, in its round.
	if want := []string{"Quiescing/0", "Quiescing/1", "Restarting/2", "Restarting/2"}; !slices.Equal(written, want) {
		t.Fatalf("status writes (state/ledger entries) %v, want %v", written, want)
	}
	deleted := 0
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			deleted++
		}
	}
	if deleted != 1 {
		t.Fatalf("the sync deleted the pod %d times, want once", deleted)
	}
}

func TestNodeSyncerRecordsThePeerAFailedBrickPreparationRanOn(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.State = string(states.NodeDraining)
	prepare := &gd2.APIError{Status: 500, Errors: []gd2.ErrorItem{{Code: gd2.CodeTxnStepFailed, Message: "a txn step failed",
		Fields: map[string]string{"peer-id": "target-peer", "step": gd2.StepReplaceBrickPrepareBricks, "error": "size 0 of data subvolume is too small"}}}}
	d := states.Decision{Step: states.NodeMoveBrick, Reason: states.ReasonMovingBrick}
	err := fmt.Errorf("replace brick: %w", prepare)
	for range 2 {
		// What the runner hands the spec after the action failed.
		outs := []engine.Outcome[*nodeFacts]{{
			Instance: engine.Instance[*nodeFacts]{State: states.NodeDraining, Facts: &nodeFacts{}},
			Kind:     engine.Failed, Decision: d, To: states.NodeDraining, Err: err,
			Reason: effects.RefusalReason(err), Message: "node: moveBrick failed: " + err.Error(),
		}}
		f.syncer.Record(node, outs, time.Now())
	}
	got := node
	if len(got.Status.RefusedPeers) != 1 || got.Status.RefusedPeers[0] != "target-peer" {
		t.Fatalf("refusedPeers = %v, want the peer the preparation ran on, once", got.Status.RefusedPeers)
	}
	if r := effects.ConditionReason(got.Status.Conditions); r != effects.ReasonBrickPrepareFailed {
		t.Errorf("condition reason %q, want %s", r, effects.ReasonBrickPrepareFailed)
	}
	if c := apimeta.FindStatusCondition(got.Status.Conditions, operatorv1alpha1.ConditionProgressing); c == nil || !strings.Contains(c.Message, gd2.StepReplaceBrickPrepareBricks) {
		t.Errorf("condition %+v does not name the GD2 step that failed", c)
	}
}

// TestNodeSyncerHoldsFailureHandlingWhilePaused checks that the gatherer
// reads spec.paused: an Offline node past its permissible downtime stays
// Offline with reason Paused, and is declared Failed once it is cleared.
func TestNodeSyncerHoldsFailureHandlingWhilePaused(t *testing.T) {
	f := offlineFixture(t)
	setPaused := func(paused bool) {
		t.Helper()
		obj, ok, err := f.clusters.GetByKey("ns/gc")
		if err != nil || !ok {
			t.Fatalf("cluster ns/gc in the lister: %t, %v", ok, err)
		}
		c := obj.(*operatorv1alpha1.GlusterCluster).DeepCopy()
		c.Spec.Paused = paused
		if err := f.clusters.Update(c); err != nil {
			t.Fatal(err)
		}
	}
	setPaused(true)
	f.clock.Step(gather.DefaultPermissibleDowntime + time.Second)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	n := f.node()
	if n.Status.State != string(states.NodeOffline) {
		t.Fatalf("paused, past the permissible downtime: state %s, want Offline", n.Status.State)
	}
	if c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionProgressing); c == nil || c.Reason != states.ReasonPaused {
		t.Fatalf("paused: Progressing condition %+v, want reason %s", c, states.ReasonPaused)
	}
	setPaused(false)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeFailed) {
		t.Fatalf("unpaused: state %s, want Failed", s)
	}
}

// TestNodeSyncerQuiescingWaitsForAnEarlierBatchMember: two members of one
// upgrade batch share a replica set. GD2 shows both online while both are
// in Quiescing (a member that has just committed to Restarting still shows
// its bricks online until its pod is gone), so the later one in the batch
// waits for the earlier one to be back Online at the target, and stops
// only then.
func TestNodeSyncerQuiescingWaitsForAnEarlierBatchMember(t *testing.T) {
	f := newNodeFixture(t)
	ctx := context.Background()
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if s := f.node().Status.State; s != string(states.NodeOnline) {
		t.Fatalf("state %s, want Online", s)
	}
	if err := f.sim.UpsertHost(sim.HostSpec{Name: "gd2-3", Address: "gd2-3:24008", Alive: true}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.gd2.AddPeer(ctx, gd2.PeerAddRequest{Addresses: []string{"gd2-3:24008"}}); err != nil {
		t.Fatal(err)
	}
	all, err := f.gd2.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	devices, err := f.gd2.ListAllDevices(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range all {
		if !slices.ContainsFunc(devices, func(d gd2.Device) bool { return d.PeerID == p.ID }) {
			if err := (&effects.GD2{Client: f.gd2}).RegisterDevice(ctx, p.ID, "/dev/sdb", ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := f.gd2.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: "shared", Size: 1 << 30, Replica: 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.gd2.StartVolume(ctx, "shared", false); err != nil {
		t.Fatal(err)
	}
	// The earlier member holds the founder's brick of the same replica set.
	peers, err := f.gd2.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	var founder string
	for _, p := range peers {
		if p.Name == "founder-0" {
			founder = p.ID
		}
	}
	if founder == "" {
		t.Fatalf("no founder peer in %+v", peers)
	}
	// setOther puts the earlier member in state at version, at the pod
	// template the cluster gives it now or, with stale, at an older one.
	setOther := func(state fsm.State, version string, stale bool) {
		t.Helper()
		other := &operatorv1alpha1.GlusterNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc-z0-a"},
			Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: "zone-0"},
			Status:     operatorv1alpha1.GlusterNodeStatus{State: string(state), PeerID: founder, Version: version},
		}
		obj, _, _ := f.clusters.GetByKey("ns/gc")
		if other.Status.Revision = objects.NodeTemplateRevision(obj.(*operatorv1alpha1.GlusterCluster), other); stale {
			other.Status.Revision = "older"
		}
		if err := f.nodes.Update(other); err != nil {
			t.Fatal(err)
		}
	}
	setOther(states.NodeQuiescing, "4.1.0", false)
	obj, _, _ := f.clusters.GetByKey("ns/gc")
	cluster := obj.(*operatorv1alpha1.GlusterCluster).DeepCopy()
	cluster.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers),
		FromVersion: "4.1.0", ToVersion: "4.1.1", CurrentNodes: []string{"gc-z0-a", "gc-z1-a"}}
	if err := f.clusters.Update(cluster); err != nil {
		t.Fatal(err)
	}

	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeQuiescing) {
		t.Fatalf("selected: state %s, want Quiescing", s)
	}
	for _, other := range []struct {
		state   fsm.State
		version string
		stale   bool
	}{
		{states.NodeQuiescing, "4.1.0", false},
		{states.NodeRestarting, "4.1.0", false},
		{states.NodeHealWait, "4.1.0", false},
		// Online at the version but not at the template: a template
		// rollout of the same batch has not reached it yet.
		{states.NodeOnline, "4.1.1", true},
	} {
		setOther(other.state, other.version, other.stale)
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
		n := f.node()
		c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionProgressing)
		if n.Status.State != string(states.NodeQuiescing) || c == nil || c.Reason != states.ReasonBatchMemberFirst || !strings.Contains(c.Message, "gc-z0-a") {
			t.Fatalf("earlier member %+v: state %s, Progressing %+v; want Quiescing, reason %s naming gc-z0-a", other, n.Status.State, c, states.ReasonBatchMemberFirst)
		}
	}
	setOther(states.NodeOnline, "4.1.1", false)
	// One sync puts restart's device change on record and restarts, a
	// round each; the roll of the workload, the round after, fails here
	// (the fixture has no StatefulSet), which the sync reports.
	if _, err := f.sync(); err == nil || !strings.Contains(err.Error(), "roll node") {
		t.Fatalf("earlier member done: sync error %v, want the roll's", err)
	}
	if s := f.node().Status.State; s != string(states.NodeRestarting) {
		t.Fatalf("earlier member done: state %s, want Restarting", s)
	}
}
