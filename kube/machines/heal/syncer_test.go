package heal

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/cache"
	record "k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
	"github.com/gluster/anthill/transitions"
)

// healFixture is a Syncer over fake clientsets, a cluster lister fed
// from an indexer, a fake clock shared with a real GD2 simulator (so heal
// progresses only when the test steps the clock), and a replica-3 volume
// "data" over three peers in three zones.
type healFixture struct {
	t        *testing.T
	kube     *kubefake.Clientset
	anthill  *anthillfake.Clientset
	clusters cache.Indexer
	sim      *sim.Simulator
	gd2      *gd2.Client
	peers    []gd2.Peer
	clock    *clocktesting.FakeClock
	events   *record.FakeRecorder
	syncer   *Syncer
	// volumeEdits counts the volume edit requests GD2 received.
	volumeEdits atomic.Int32
}

func newHealFixture(t *testing.T) *healFixture {
	t.Helper()
	return newHealFixtureWith(t, sim.Config{})
}

// newHealFixtureWith is newHealFixture on a simulator with cfg's timing
// and faults (its size, secret and clock are the fixture's).
func newHealFixtureWith(t *testing.T, cfg sim.Config) *healFixture {
	t.Helper()
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	cfg.Clock = clk
	f := &healFixture{}
	pool := fixtures.NewGD2Pool(t, cfg, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost && strings.HasPrefix(r.URL.Path, "/v1/volumes/") && strings.HasSuffix(r.URL.Path, "/edit") {
				f.volumeEdits.Add(1)
			}
			h.ServeHTTP(w, r)
		})
	})
	cluster := pool.Cluster()
	cluster.Finalizers = []string{objects.FinalizerCluster}
	f.t, f.kube, f.anthill = t, kubefake.NewClientset(pool.AuthSecret()), anthillfake.NewSimpleClientset(cluster)
	f.clusters, f.sim, f.gd2, f.peers, f.clock, f.events = fixtures.NewIndexer(), pool.Sim, pool.Client, pool.Peers, clk, record.NewFakeRecorder(100)
	if err := f.clusters.Add(cluster); err != nil {
		t.Fatal(err)
	}
	pool.CreateVolume(t, "data", 3)
	f.syncer = &Syncer{
		Clusters: listers.NewGlusterClusterLister(f.clusters), Anthill: f.anthill,
		GD2: &effects.GD2Clients{Secrets: f.kube.CoreV1()}, Clock: clk,
		Log:    &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics(), Recorder: f.events},
		Jitter: func() float64 { return 0.5 },
	}
	return f
}

// createVolume creates and starts a volume with self-heal on (replica 0 is
// plain distribute).
func (f *healFixture) createVolume(name string, replica int) {
	f.t.Helper()
	(&fixtures.GD2Pool{Client: f.gd2}).CreateVolume(f.t, name, replica)
}

// deleteVolume stops and deletes a volume through GD2, around the
// syncer (as an admin or a CSI provisioner does).
func (f *healFixture) deleteVolume(name string) {
	f.t.Helper()
	ctx := context.Background()
	if _, err := f.gd2.StopVolume(ctx, name); err != nil {
		f.t.Fatalf("stop volume %s: %v", name, err)
	}
	if err := f.gd2.DeleteVolume(ctx, name); err != nil {
		f.t.Fatalf("delete volume %s: %v", name, err)
	}
}

// sync runs one sync, feeds the stored cluster back into the lister as the
// informer would, and checks the invariants every sync keeps. It returns
// the result and the transitions the sync committed.
func (f *healFixture) sync() (engine.Result, []operatorv1alpha1.TransitionRecord, error) {
	f.t.Helper()
	before := f.cluster().Status.History
	res, err := f.syncer.Sync(context.Background(), gather.HealKey("ns", "gc"))
	c := f.cluster()
	if uerr := f.clusters.Update(c); uerr != nil {
		f.t.Fatal(uerr)
	}
	added := newRecords(before, c.Status.History)
	f.checkInvariants(c, added)
	return res, added, err
}

func (f *healFixture) mustSync() (engine.Result, []operatorv1alpha1.TransitionRecord) {
	f.t.Helper()
	res, added, err := f.sync()
	if err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	return res, added
}

// newRecords returns the records after appends to before (the history is
// a bounded window, so the tail after the old last record is what is new).
func newRecords(before, after []operatorv1alpha1.TransitionRecord) []operatorv1alpha1.TransitionRecord {
	if len(before) == 0 {
		return after
	}
	last := before[len(before)-1]
	for i := len(after) - 1; i >= 0; i-- {
		if after[i] == last {
			return after[i+1:]
		}
	}
	return after
}

// checkInvariants: every volume holds a known heal state; at most one
// transition per volume per sync, each allowed by the definition and
// starting where the volume's previous heal record ended; the history is
// bounded; the simulator recorded no data-safety violation.
func (f *healFixture) checkInvariants(c *operatorv1alpha1.GlusterCluster, added []operatorv1alpha1.TransitionRecord) {
	f.t.Helper()
	def := states.HealDefinition()
	for _, v := range c.Status.Volumes {
		if !def.HasState(fsm.State(v.State)) {
			f.t.Fatalf("volume %s holds unknown state %q", v.Name, v.State)
		}
	}
	if len(c.Status.History) > operatorv1alpha1.MaxHistory {
		f.t.Fatalf("history has %d entries, more than %d", len(c.Status.History), operatorv1alpha1.MaxHistory)
	}
	perVolume := map[string]int{}
	for _, r := range added {
		perVolume[r.Subject]++
		if perVolume[r.Subject] > 1 {
			f.t.Fatalf("one sync committed %d transitions of volume %s", perVolume[r.Subject], r.Subject)
		}
		if r.Machine != states.HealMachine || r.Subject == "" {
			f.t.Fatalf("heal record without machine or subject: %+v", r)
		}
	}
	last := map[string]string{}
	for _, r := range c.Status.History {
		if r.Machine != states.HealMachine {
			continue
		}
		if prev, ok := last[r.Subject]; ok && prev != r.From {
			f.t.Fatalf("history of volume %s is not a path: %s after %s", r.Subject, r.From, prev)
		}
		if !allowed(def, fsm.Event(r.Event), fsm.State(r.From), fsm.State(r.To)) {
			f.t.Fatalf("history holds a transition the definition forbids: %+v", r)
		}
		last[r.Subject] = r.To
	}
	for _, v := range c.Status.Volumes {
		if to, ok := last[v.Name]; ok && to != v.State {
			f.t.Fatalf("volume %s is %s but its last heal record ends at %s", v.Name, v.State, to)
		}
	}
	if v := f.sim.Violations(); len(v) > 0 {
		f.t.Fatalf("simulator violations: %+v", v)
	}
}

// allowed: e is a transition of def from from to to, or a step of def
// that runs in from, recorded like a transition to itself.
func allowed(def *fsm.Definition, e fsm.Event, from, to fsm.State) bool {
	if from == to && def.StepAllowed(fsm.Step(e), from) {
		return true
	}
	for _, t := range def.Transitions {
		if t.Event == e && t.To == to {
			for _, s := range t.From {
				if s == from {
					return true
				}
			}
		}
	}
	return false
}

func (f *healFixture) cluster() *operatorv1alpha1.GlusterCluster {
	f.t.Helper()
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func (f *healFixture) volume(name string) operatorv1alpha1.VolumeStatus {
	f.t.Helper()
	for _, v := range f.cluster().Status.Volumes {
		if v.Name == name {
			return v
		}
	}
	f.t.Fatalf("volume %s is not in status: %+v", name, f.cluster().Status.Volumes)
	return operatorv1alpha1.VolumeStatus{}
}

func (f *healFixture) statusWrites(since int) int {
	n := 0
	for _, a := range f.anthill.Actions()[since:] {
		if a.GetVerb() == "update" && a.GetSubresource() == "status" {
			n++
		}
	}
	return n
}

// peerOfVolume returns the peer holding the volume's first brick.
func (f *healFixture) peerOfVolume(name string) string {
	f.t.Helper()
	v, err := f.gd2.GetVolume(context.Background(), name)
	if err != nil {
		f.t.Fatal(err)
	}
	return v.Bricks()[0].PeerID
}

func wantTransition(t *testing.T, added []operatorv1alpha1.TransitionRecord, vol string, from, to fsm.State) {
	t.Helper()
	if len(added) != 1 || added[0].Subject != vol || added[0].From != string(from) || added[0].To != string(to) {
		t.Fatalf("transitions %+v; want exactly %s: %s -> %s", added, vol, from, to)
	}
}

func TestHealSyncerHealthyReplicaGoesUnknownToHealthy(t *testing.T) {
	f := newHealFixture(t)
	res, added := f.mustSync()
	wantTransition(t, added, "data", states.HealUnknown, states.HealHealthy)
	v := f.volume("data")
	if v.State != string(states.HealHealthy) || v.PendingEntries != 0 || v.SplitBrainEntries != 0 || v.LastTransitionTime == nil {
		t.Fatalf("volume status %+v; want Healthy with nothing pending and a transition time", v)
	}
	if added[0].Machine != states.HealMachine || added[0].Event != string(states.HealHealed) {
		t.Fatalf("record %+v; want machine heal, event healed", added[0])
	}
	// Jitter 0.5 is the midpoint: exactly the base interval.
	if res.RequeueAfter != DefaultHealInterval || res.Requeue {
		t.Fatalf("result %+v; want RequeueAfter %s", res, DefaultHealInterval)
	}
	select {
	case e := <-f.events.Events:
		t.Logf("event: %s", e)
	default:
		t.Fatal("no Kubernetes Event was recorded for the transition")
	}
}

func TestHealSyncerSkipsTheStatusWriteWhenNothingChanged(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync() // Unknown -> Healthy
	f.mustSync() // records the steady message
	before := len(f.anthill.Actions())
	for range 3 {
		f.clock.Step(time.Minute)
		if _, added := f.mustSync(); len(added) != 0 {
			t.Fatalf("a steady volume committed %+v", added)
		}
	}
	if n := f.statusWrites(before); n != 0 {
		t.Fatalf("%d status writes for a steady cluster; want none", n)
	}
}

// brickDownWithWrites stops the peer of a brick of vol, writes to vol so
// that its other bricks record entries to heal, syncs once and checks the
// volume went HealPending. It returns the stopped peer.
func (f *healFixture) brickDownWithWrites(vol string) string {
	f.t.Helper()
	peer := f.peerOfVolume(vol)
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		f.t.Fatal(err)
	}
	if err := f.sim.Write(vol, 40); err != nil {
		f.t.Fatal(err)
	}
	_, added := f.mustSync()
	wantTransition(f.t, added, vol, states.HealHealthy, states.HealHealPending)
	return peer
}

func TestHealSyncerBrickDownWithWritesIsHealPendingThenHeals(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	peer := f.brickDownWithWrites("data")
	if v := f.volume("data"); v.PendingEntries <= 0 {
		t.Fatalf("volume status %+v; want pending entries", v)
	}
	// While the brick is down the machine waits: no heal is triggered.
	for range 2 {
		if _, added := f.mustSync(); len(added) != 0 {
			t.Fatalf("transition %+v while a brick is down", added)
		}
	}
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	_, added := f.mustSync()
	wantTransition(t, added, "data", states.HealHealPending, states.HealHealing)
	// The self-heal daemon drains the backlog as time passes.
	f.clock.Step(time.Minute)
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealing, states.HealHealthy)
	if v := f.volume("data"); v.PendingEntries != 0 {
		t.Fatalf("volume status %+v; want nothing pending after heal", v)
	}
}

func TestHealSyncerWaitsWithAWarningWhileTheSelfHealDaemonIsOff(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	if _, err := f.gd2.SetVolumeOptions(context.Background(), "data", gd2.VolumeOptionRequest{
		Options: map[string]string{gd2.OptionSelfHealDaemon: "off"}, AllowAdvanced: true,
	}); err != nil {
		t.Fatal(err)
	}
	peer := f.brickDownWithWrites("data")
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	// GD2 would refuse the trigger (400 self heal option is disabled): no
	// heal is asked for, the volume says why, and one Warning is recorded.
	for range 3 {
		if _, added := f.mustSync(); len(added) != 0 {
			t.Fatalf("transition %+v while the self-heal daemon is off", added)
		}
	}
	if v := f.volume("data"); !strings.Contains(v.Message, "self-heal daemon is off") {
		t.Fatalf("volume message %q does not say the self-heal daemon is off", v.Message)
	}
	warnings := 0
	for len(f.events.Events) > 0 {
		if e := <-f.events.Events; strings.Contains(e, states.ReasonSelfHealDisabled) {
			warnings++
		}
	}
	if warnings != 1 {
		t.Fatalf("%d %s Warnings, want one", warnings, states.ReasonSelfHealDisabled)
	}
}

func TestHealSyncerSplitBrainIsReportedAndCleared(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	if err := f.sim.InjectSplitBrain("data", 0, []string{"a.txt", "b.txt"}); err != nil {
		t.Fatal(err)
	}
	_, added := f.mustSync()
	wantTransition(t, added, "data", states.HealHealthy, states.HealSplitBrain)
	if v := f.volume("data"); v.SplitBrainEntries <= 0 {
		t.Fatalf("volume status %+v; want split-brain entries", v)
	}
	if _, added := f.mustSync(); len(added) != 0 {
		t.Fatalf("split-brain is not left while it lasts: %+v", added)
	}
	if err := f.sim.ClearSplitBrain("data"); err != nil {
		t.Fatal(err)
	}
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealSplitBrain, states.HealHealthy)
}

func TestHealSyncerOneTransitionPerVolumePerSync(t *testing.T) {
	f := newHealFixture(t)
	f.createVolume("logs", 3)
	// Before the first sync, data lost a brick, took writes and got the
	// brick back: it could go Unknown -> HealPending -> Healing, but one
	// sync takes one step per volume.
	peer := f.peerOfVolume("data")
	if err := f.sim.SetPeerAlive(peer, false); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.Write("data", 40); err != nil {
		t.Fatal(err)
	}
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	_, added := f.mustSync()
	if len(added) != 2 {
		t.Fatalf("transitions %+v; want one for each of two volumes", added)
	}
	for _, r := range added {
		want := map[string]string{"data": string(states.HealHealPending), "logs": string(states.HealHealthy)}[r.Subject]
		if r.From != string(states.HealUnknown) || r.To != want {
			t.Fatalf("transition %+v; want %s: Unknown -> %s", r, r.Subject, want)
		}
	}
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealPending, states.HealHealing)
}

func TestHealSyncerDropsVolumesGoneFromGD2AndSortsEntries(t *testing.T) {
	f := newHealFixture(t)
	f.createVolume("aaa", 0)
	f.mustSync()
	if got := f.cluster().Status.Volumes; len(got) != 2 || got[0].Name != "aaa" || got[1].Name != "data" {
		t.Fatalf("volumes %+v; want aaa and data, sorted", got)
	}
	// A volume without redundancy has nothing to heal.
	if v := f.volume("aaa"); v.State != string(states.HealHealthy) {
		t.Fatalf("distribute volume %+v; want Healthy", v)
	}
	f.deleteVolume("aaa")
	f.mustSync()
	if got := f.cluster().Status.Volumes; len(got) != 1 || got[0].Name != "data" {
		t.Fatalf("volumes %+v; want only data", got)
	}
}

// With the cluster's shared view, a replica volume deleted around
// anthill (an admin, a CSI provisioner) is still on the list the view
// holds; GD2 answers its bricks status "not found", and the sync drops the
// volume as gone (never "lost contact") and the view with it.
func TestHealSyncerDropsAVolumeDeletedSinceTheSharedList(t *testing.T) {
	f := newHealFixture(t)
	f.syncer.GD2.Views = &effects.PoolViews{TTL: time.Hour, Clock: f.clock}
	f.createVolume("extra", 3)
	f.mustSync()
	f.mustSync()
	if v := f.volume("extra"); v.State != string(states.HealHealthy) {
		t.Fatalf("extra %+v; want Healthy", v)
	}
	// The view still lists it as started: the bricks status is what
	// finds it gone.
	f.deleteVolume("extra")
	_, added := f.mustSync()
	for _, r := range added {
		if r.Event == string(states.HealLostContact) {
			t.Errorf("a deleted volume lost contact: %+v", r)
		}
	}
	if got := f.cluster().Status.Volumes; len(got) != 1 || got[0].Name != "data" {
		t.Fatalf("volumes %+v; want only data", got)
	}
}

func TestHealSyncerStoppedVolumeLosesContact(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	if _, err := f.gd2.StopVolume(context.Background(), "data"); err != nil {
		t.Fatal(err)
	}
	_, added := f.mustSync()
	wantTransition(t, added, "data", states.HealHealthy, states.HealUnknown)
	if added[0].Reason != states.ReasonVolumeNotStarted {
		t.Fatalf("reason %s; want %s", added[0].Reason, states.ReasonVolumeNotStarted)
	}
}

func TestHealSyncerBacksOffWhileGD2FailsAndResetsOnSuccess(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	ctx := context.Background()
	if err := f.kube.CoreV1().Secrets("ns").Delete(ctx, "auth", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The first failed sync marks the volume Unknown and keeps it in status.
	res, added := f.mustSync()
	wantTransition(t, added, "data", states.HealHealthy, states.HealUnknown)
	var got []time.Duration
	got = append(got, res.RequeueAfter)
	for range 4 {
		res, _ = f.mustSync()
		got = append(got, res.RequeueAfter)
	}
	want := []time.Duration{time.Minute, 2 * time.Minute, 4 * time.Minute, 5 * time.Minute, 5 * time.Minute}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("back-off %v; want %v", got, want)
		}
	}
	if v := f.volume("data"); v.State != string(states.HealUnknown) {
		t.Fatalf("volume %+v; want kept as Unknown while GD2 is unreachable", v)
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "auth"}, Data: map[string][]byte{"secret": []byte(fixtures.GD2Secret)}}
	if _, err := f.kube.CoreV1().Secrets("ns").Create(ctx, secret, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	res, added = f.mustSync()
	wantTransition(t, added, "data", states.HealUnknown, states.HealHealthy)
	if res.RequeueAfter != DefaultHealInterval {
		t.Fatalf("after recovery RequeueAfter %s; want the base interval %s", res.RequeueAfter, DefaultHealInterval)
	}
}

// A sync that cannot list the volumes of a cluster whose status names none
// has no instance to carry the failure: Finish still learns it (through the
// sync's scope) and backs off.
func TestHealSyncerWithNoVolumeBacksOffWhileGD2Fails(t *testing.T) {
	f := newHealFixture(t)
	if err := f.kube.CoreV1().Secrets("ns").Delete(context.Background(), "auth", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var got []time.Duration
	for range 2 {
		res, added := f.mustSync()
		if len(added) != 0 || len(f.cluster().Status.Volumes) != 0 {
			t.Fatalf("transitions %+v, volumes %+v; want none while no volume was ever listed", added, f.cluster().Status.Volumes)
		}
		got = append(got, res.RequeueAfter)
	}
	if want := []time.Duration{time.Minute, 2 * time.Minute}; !slices.Equal(got, want) {
		t.Fatalf("back-off %v; want %v", got, want)
	}
}

func TestHealSyncerJitterStaysWithinTwentyPercent(t *testing.T) {
	s := &Syncer{}
	for range 1000 {
		d := s.jitter(DefaultHealInterval)
		if d < 24*time.Second || d > 36*time.Second {
			t.Fatalf("jittered interval %s outside 30s ±20%%", d)
		}
	}
	s.Jitter = func() float64 { return 0 }
	if d := s.jitter(DefaultHealInterval); d != 24*time.Second {
		t.Fatalf("lowest jitter %s; want 24s", d)
	}
}

func TestHealSyncerFailedStatusWriteAnnouncesNothing(t *testing.T) {
	f := newHealFixture(t)
	f.anthill.PrependReactor("update", "glusterclusters", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetSubresource() == "status" {
			return true, nil, errors.New("injected: etcd timeout")
		}
		return false, nil, nil
	})
	if _, _, err := f.sync(); err == nil {
		t.Fatal("a failed status write was not reported")
	}
	select {
	case e := <-f.events.Events:
		t.Fatalf("an unpersisted transition was announced: %s", e)
	default:
	}
	if len(f.cluster().Status.Volumes) != 0 {
		t.Fatal("status changed despite the failed write")
	}
}

func TestHealSyncerHistoryKeepsTheClusterMachinesLatestRecord(t *testing.T) {
	h := []operatorv1alpha1.TransitionRecord{{Machine: states.ClusterMachine, From: "Provisioning", To: "Ready", Event: "converged"}}
	for range 3 * operatorv1alpha1.MaxHistory {
		h = machinestatus.AppendHealHistory(h, operatorv1alpha1.TransitionRecord{Machine: states.HealMachine, Subject: "v", From: "Healthy", To: "HealPending"})
	}
	if len(h) != operatorv1alpha1.MaxHistory {
		t.Fatalf("history length %d; want %d", len(h), operatorv1alpha1.MaxHistory)
	}
	if h[0].Machine != states.ClusterMachine {
		t.Fatalf("heal churn pushed the cluster machine's latest record out: %+v", h[0])
	}
}

func TestHealSyncerForgetsADeletedCluster(t *testing.T) {
	f := newHealFixture(t)
	if err := f.clusters.Delete(f.cluster()); err != nil {
		t.Fatal(err)
	}
	res, err := f.syncer.Sync(context.Background(), gather.HealKey("ns", "gc"))
	if err != nil || res != (engine.Result{}) {
		t.Fatalf("sync of a deleted cluster: %+v, %v; want nothing", res, err)
	}
}

// tagPeersForAnotherCluster marks every peer of the pool as a node of
// another cluster, as in a pool shared by two GlusterClusters.
func (f *healFixture) tagPeersForAnotherCluster() {
	f.t.Helper()
	for _, p := range f.peers {
		md := map[string]string{transitions.MetaCluster: "other", transitions.MetaNode: "elsewhere/" + p.Name}
		if _, err := f.gd2.EditPeer(context.Background(), p.ID, gd2.PeerEditRequest{Metadata: md}); err != nil {
			f.t.Fatal(err)
		}
	}
}

func TestHealSyncerIgnoresVolumesOfAnotherClusterInASharedPool(t *testing.T) {
	f := newHealFixture(t)
	f.tagPeersForAnotherCluster()
	f.mustSync()
	if got := f.cluster().Status.Volumes; len(got) != 0 {
		t.Fatalf("volumes %+v; want none: every brick is on another cluster's peers", got)
	}
	for _, p := range f.peers {
		md := map[string]string{transitions.MetaCluster: "gc", transitions.MetaNode: "ns/" + p.Name}
		if _, err := f.gd2.EditPeer(context.Background(), p.ID, gd2.PeerEditRequest{Metadata: md}); err != nil {
			t.Fatal(err)
		}
	}
	f.mustSync()
	if v := f.volume("data"); v.State != string(states.HealHealthy) {
		t.Fatalf("own volume %+v; want Healthy", v)
	}
}

func TestHealSyncerWatchesTheCrawlWhenGD2CannotDeliverTheHealTrigger(t *testing.T) {
	f := newHealFixture(t)
	f.mustSync()
	peer := f.brickDownWithWrites("data")
	if err := f.sim.SetPeerAlive(peer, true); err != nil {
		t.Fatal(err)
	}
	// Every heal trigger fails at selfheal.Heal on every brick node, while
	// the self-heal daemons keep crawling.
	if err := f.sim.SetFaults(sim.Faults{HealTriggerFailRate: 1}); err != nil {
		t.Fatal(err)
	}
	for len(f.events.Events) > 0 {
		<-f.events.Events
	}
	res, added, err := f.sync()
	if err != nil {
		t.Fatalf("a heal trigger the self-heal daemon did not receive failed the sync: %v", err)
	}
	wantTransition(t, added, "data", states.HealHealPending, states.HealHealing)
	if added[0].Reason != states.ReasonHealTriggerFailed || !strings.Contains(added[0].Message, "self-heal daemon") {
		t.Fatalf("record %+v; want reason %s saying the daemon did not get the trigger", added[0], states.ReasonHealTriggerFailed)
	}
	if res.RequeueAfter > DefaultHealInterval {
		t.Fatalf("result %+v; a trigger the daemon did not receive is not a GD2 failure to back off from", res)
	}
	warned := false
	for len(f.events.Events) > 0 {
		if e := <-f.events.Events; strings.HasPrefix(e, "Warning "+states.ReasonHealTriggerFailed) {
			warned = true
		}
	}
	if !warned {
		t.Fatalf("no Warning Event with reason %s", states.ReasonHealTriggerFailed)
	}
	cond := func() *metav1.Condition {
		for _, c := range f.cluster().Status.Conditions {
			if c.Type == ConditionHealTrigger {
				return &c
			}
		}
		return nil
	}
	if c := cond(); c == nil || c.Status != metav1.ConditionTrue || c.Reason != states.ReasonHealTriggerFailed || !strings.Contains(c.Message, "data") {
		t.Fatalf("condition %+v; want %s True naming volume data", c, ConditionHealTrigger)
	}
	// The next sync keeps watching, and still says why.
	if _, added := f.mustSync(); len(added) != 0 {
		t.Fatalf("transition %+v while the crawl goes on", added)
	}
	if v := f.volume("data"); v.State != string(states.HealHealing) && v.State != string(states.HealHealthy) {
		t.Fatalf("volume %+v; want it still watched in Healing", v)
	}
	// The daemons' crawl drains the backlog: the volume is healthy without
	// any trigger having worked, and the condition goes.
	f.clock.Step(time.Minute)
	_, added = f.mustSync()
	wantTransition(t, added, "data", states.HealHealing, states.HealHealthy)
	if c := cond(); c != nil {
		t.Fatalf("condition %+v left after the volume healed", c)
	}
}

// bricksOffline counts the bricks of vol GD2's bricks status reports not
// online.
func (f *healFixture) bricksOffline(vol string) int {
	f.t.Helper()
	bs, err := f.gd2.BricksStatus(context.Background(), vol)
	if err != nil {
		f.t.Fatal(err)
	}
	n := 0
	for _, b := range bs {
		if !b.Online {
			n++
		}
	}
	return n
}

func TestHealSyncerStartsBricksGD2LeftOfflineOnALivePeerAfterTheGrace(t *testing.T) {
	f := newHealFixtureWith(t, sim.Config{UnmountedBrickStarts: 1})
	f.mustSync()
	peer := f.peerOfVolume("data")
	if err := f.sim.RestartPeer(peer); err != nil {
		t.Fatal(err)
	}
	if f.bricksOffline("data") != 1 {
		t.Fatal("the restarted peer's brick is not offline: the test proves nothing")
	}
	_, added := f.mustSync()
	wantTransition(t, added, "data", states.HealHealthy, states.HealHealPending)
	// Within the grace the machine waits, saying what it will do.
	f.clock.Step(gather.DefaultOfflineGrace / 2)
	if _, added := f.mustSync(); len(added) != 0 {
		t.Fatalf("records %+v within the grace", added)
	}
	if v := f.volume("data"); !strings.Contains(v.Message, "force-start-bricks") {
		t.Fatalf("volume %+v; want its message to say the bricks will be started", v)
	}
	if len(f.cluster().Status.Ledger) != 0 {
		t.Fatalf("ledger %+v before the grace ended", f.cluster().Status.Ledger)
	}
	f.clock.Step(gather.DefaultOfflineGrace / 2)
	// The step goes on record first; the bricks start in the next sync.
	if _, added := f.mustSync(); len(added) != 0 || len(f.cluster().Status.Ledger) != 1 || f.bricksOffline("data") != 1 {
		t.Fatalf("records %+v, ledger %+v, %d bricks offline; want the step on record and nothing started", added, f.cluster().Status.Ledger, f.bricksOffline("data"))
	}
	_, added = f.mustSync()
	if len(added) != 1 || added[0].Event != string(states.HealForceStartBricks) || added[0].Reason != states.ReasonBricksNotStarted ||
		added[0].From != string(states.HealHealPending) || added[0].To != string(states.HealHealPending) {
		t.Fatalf("records %+v; want the forceStartBricks step recorded with reason %s", added, states.ReasonBricksNotStarted)
	}
	if n := f.bricksOffline("data"); n != 0 {
		t.Fatalf("%d bricks still offline after the step", n)
	}
	ledger := f.cluster().Status.Ledger
	if len(ledger) != 1 || ledger[0].Action != operatorv1alpha1.LedgerActionForceStartBricks || ledger[0].Volume != "data" ||
		ledger[0].Peer != peer || ledger[0].Reason != states.ReasonBricksNotStarted || ledger[0].State != string(states.HealHealPending) {
		t.Fatalf("ledger %+v; want one forceStartBricks entry for volume data on peer %s with its reason", ledger, peer)
	}
	// The bricks run: nothing more is started, and the volume heals.
	for range 3 {
		f.clock.Step(time.Minute)
		f.mustSync()
	}
	if v := f.volume("data"); v.State == string(states.HealHealPending) || len(f.cluster().Status.Ledger) != 1 {
		t.Fatalf("volume %+v, ledger %+v; want it past HealPending with the one start recorded", v, f.cluster().Status.Ledger)
	}
}

func TestHealSyncerNeverStartsBricksOnAVolumeAnthillIsChanging(t *testing.T) {
	f := newHealFixtureWith(t, sim.Config{UnmountedBrickStarts: 1})
	f.mustSync()
	peer := f.peerOfVolume("data")
	nodes := fixtures.NewIndexer()
	var other string
	for _, p := range f.peers {
		if p.ID != peer {
			other = p.ID
		}
	}
	// Another node of the volume is being drained.
	n := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc-b"},
		Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "gc"},
		Status:     operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeDraining), PeerID: other},
	}
	if err := nodes.Add(n); err != nil {
		t.Fatal(err)
	}
	f.syncer.Nodes = listers.NewGlusterNodeLister(nodes)
	if err := f.sim.RestartPeer(peer); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		f.mustSync()
		f.clock.Step(gather.DefaultOfflineGrace)
	}
	if f.bricksOffline("data") != 1 || len(f.cluster().Status.Ledger) != 0 {
		t.Fatalf("bricks started (ledger %+v) while node gc-b was Draining", f.cluster().Status.Ledger)
	}
	if v := f.volume("data"); !strings.Contains(v.Message, "gc-b is Draining") {
		t.Fatalf("volume %+v; want its message to say why the bricks wait", v)
	}
	// The drain is over: the window starts then, and the bricks are started
	// after it.
	n = n.DeepCopy()
	n.Status.State = string(states.NodeOnline)
	if err := nodes.Update(n); err != nil {
		t.Fatal(err)
	}
	f.mustSync()
	if f.bricksOffline("data") != 1 {
		t.Fatal("bricks started at once when the change ended, without the grace")
	}
	f.clock.Step(gather.DefaultOfflineGrace)
	f.mustSync() // the step goes on record
	f.mustSync()
	if f.bricksOffline("data") != 0 {
		t.Fatal("bricks not started after the grace once nothing changed the volume")
	}
}
