package machines

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	kubefake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/fsm"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func move(node, brick string) operatorv1alpha1.LedgerEntry {
	return operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionReplaceBrick, Node: node, Volume: "v", Brick: brick}
}

func TestLedgerKeepsEachMoveOnceAndTheNewestHundred(t *testing.T) {
	var ledger []operatorv1alpha1.LedgerEntry
	for i := range operatorv1alpha1.MaxLedger + 5 {
		var changed bool
		ledger, changed = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("n", fmt.Sprint(i))})
		if !changed {
			t.Fatalf("entry %d was not added", i)
		}
	}
	if len(ledger) != operatorv1alpha1.MaxLedger || ledger[0].Brick != "5" || ledger[len(ledger)-1].Brick != "104" {
		t.Fatalf("ledger holds %d entries, %s to %s; want the newest %d", len(ledger), ledger[0].Brick, ledger[len(ledger)-1].Brick, operatorv1alpha1.MaxLedger)
	}
	recovered := move("n", "104")
	recovered.Recovered = true
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{recovered}); changed {
		t.Error("a move already recorded was recorded again as recovered")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{move("other", "104")}); !changed {
		t.Error("the same brick path moved off another node is another move")
	}
}

func clusterLedger(t *testing.T, f *nodeFixture) []operatorv1alpha1.LedgerEntry {
	t.Helper()
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c.Status.Ledger
}

// TestNodeSyncerLedgersEveryMoveOnceAcrossACrash: a move persisted by the
// node's status write lands in the cluster's ledger with its targets and
// reason; a move whose ledger write was lost (the operator died between
// the two writes) is recorded as recovered before the node does anything
// else, and only once.
func TestNodeSyncerLedgersEveryMoveOnceAcrossACrash(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.State = string(states.NodeDraining)
	node.Status.PeerID = "peer-a"
	node.Status.MovedBricks = []operatorv1alpha1.BrickRef{{Volume: "v", Path: "/b/1"}}
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	out := engine.Outcome[*nodeSync]{
		Instance: engine.Instance[*nodeSync]{State: states.NodeDraining, Facts: &nodeSync{
			snap: states.NodeSnapshot{NextBrickVolume: "v", NextBrickPath: "/b/1"},
			view: nodeView{move: states.MovePlan{Targets: []string{"peer-b", "peer-c"}}},
		}},
		Kind: engine.Stepped, Decision: states.Decision{Step: states.NodeMoveBrick, Reason: states.ReasonMovingBrick}, To: states.NodeDraining,
	}
	if _, err := f.syncer.Finish(context.Background(), node, []engine.Outcome[*nodeSync]{out}, engine.Result{}, nil); err != nil {
		t.Fatal(err)
	}
	ledger := clusterLedger(t, f)
	if len(ledger) != 1 || ledger[0].Node != "gc-z1-a" || ledger[0].Peer != "peer-a" || ledger[0].Volume != "v" || ledger[0].Brick != "/b/1" ||
		fmt.Sprint(ledger[0].TargetPeers) != "[peer-b peer-c]" || ledger[0].Reason != states.ReasonMovingBrick || ledger[0].Cause != "DecommissionRequested" || ledger[0].Recovered {
		t.Fatalf("ledger after a move: %+v", ledger)
	}

	// The next move was persisted on the node, then the operator died.
	node.Status.MovedBricks = append(node.Status.MovedBricks, operatorv1alpha1.BrickRef{Volume: "v", Path: "/b/2"})
	for range 2 { // the cluster lister is stale: the second Prepare must not add it again
		if done, _, err := f.syncer.Prepare(context.Background(), node.DeepCopy()); done || err != nil {
			t.Fatalf("Prepare = %t, %v", done, err)
		}
	}
	ledger = clusterLedger(t, f)
	if len(ledger) != 2 || ledger[1].Brick != "/b/2" || !ledger[1].Recovered || ledger[1].Cause != "DecommissionRequested" {
		t.Fatalf("ledger after the restart: %+v", ledger)
	}
}

// TestNodeSyncerLedgersLastingChanges: a deleted peer, a restart at a new
// version and a device change reach the ledger before their action runs,
// once each however often the step repeats or its action fails and is
// retried; a second upgrade's restart is a new entry, and a device change
// on a dead peer (which the action skips) is not recorded.
func TestNodeSyncerLedgersLastingChanges(t *testing.T) {
	f := newNodeFixture(t)
	node := f.node()
	node.Status.PeerID = "peer-a"
	node.Status.History = []operatorv1alpha1.TransitionRecord{{From: "Online", To: "Draining", Event: "decommission", Reason: "DecommissionRequested"}}
	act := func(in, to fsm.State, d states.Decision, snap states.NodeSnapshot) {
		t.Helper()
		ctx := engine.WithAction(context.Background(), engine.ActionContext{State: string(in), Target: string(to)})
		// The action itself runs against empty fakes and may fail: the
		// entry is written before it, and a failed action is retried.
		_ = f.syncer.Act(ctx, node, engine.Instance[*nodeSync]{State: in, Facts: &nodeSync{snap: snap}}, d)
	}
	alive := states.NodeSnapshot{PeerKnown: true, PeerAlive: true}
	for range 2 {
		act(states.NodeDetaching, "", states.Decision{Step: states.NodeDeletePeer, Reason: "BricksMoved"}, alive)
	}
	for _, v := range []string{"v2", "v2", "v3"} {
		act(states.NodeRestarting, "", states.Decision{Step: states.NodeRollWorkload, Reason: "Upgrade"}, states.NodeSnapshot{TargetVersion: v})
	}
	act(states.NodeOnline, states.NodeDraining, states.Decision{Event: states.NodeDrain, Reason: "DecommissionRequested"}, states.NodeSnapshot{PeerKnown: true})
	act(states.NodeOnline, states.NodeMaintenance, states.Decision{Event: states.NodeEnterMaintenance, Reason: "MaintenanceRequested"}, alive)

	var got []string
	for _, e := range clusterLedger(t, f) {
		if e.Node != node.Name || e.Peer != "peer-a" {
			t.Errorf("entry names the wrong node: %+v", e)
		}
		got = append(got, e.Action+"@"+e.Version+":"+e.Cause)
	}
	want := []string{"deletePeer@:DecommissionRequested", "rollWorkload@v2:", "rollWorkload@v3:", "disableDevices@:"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ledger = %v, want %v", got, want)
	}
	if l := clusterLedger(t, f); l[len(l)-1].State != string(states.NodeMaintenance) {
		t.Errorf("an event's entry is in %s, want its target %s", l[len(l)-1].State, states.NodeMaintenance)
	}
}

// TestLedgerWriteKeepsANewerStatus: the ledger write stamps this
// operator's status schema level, and refuses to write a cluster status a
// newer operator wrote (it would drop the fields this one does not know).
func TestLedgerWriteKeepsANewerStatus(t *testing.T) {
	f := newNodeFixture(t)
	ctx := context.Background()
	clusters := f.anthill.OperatorV1alpha1().GlusterClusters("ns")
	if _, err := appendLedger(ctx, f.anthill, "ns", "gc", []operatorv1alpha1.LedgerEntry{move("n", "/b/1")}); err != nil {
		t.Fatal(err)
	}
	c, err := clusters.Get(ctx, "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.StatusSchema != operatorv1alpha1.StatusSchemaLevel {
		t.Errorf("statusSchema %d after a ledger write, want %d", c.Status.StatusSchema, operatorv1alpha1.StatusSchemaLevel)
	}
	c.Status.StatusSchema = operatorv1alpha1.StatusSchemaLevel + 1
	if _, err := clusters.UpdateStatus(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := appendLedger(ctx, f.anthill, "ns", "gc", []operatorv1alpha1.LedgerEntry{move("n", "/b/2")}); err == nil {
		t.Error("the ledger was written into a newer operator's status")
	}
	if l := clusterLedger(t, f); len(l) != 1 {
		t.Errorf("ledger %+v, want the first entry only", l)
	}
}

// clusterLedgerFixture is a ClusterSyncer and UpgradeSyncer over fake
// clientsets holding cluster gc with one template, z1, of want nodes, and
// the nodes named.
func clusterLedgerFixture(t *testing.T, want int32, nodes ...string) (*ClusterSyncer, *UpgradeSyncer, *anthillfake.Clientset) {
	t.Helper()
	c := &operatorv1alpha1.GlusterCluster{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gc"},
		Spec: operatorv1alpha1.GlusterClusterSpec{
			Gluster:       &operatorv1alpha1.GlusterServerSpec{Image: "gluster/gd2", Version: "4.1.0"},
			NodeTemplates: []operatorv1alpha1.NodeTemplate{{Name: "z1", Zone: "zone-1", Nodes: ptr.To(want)}},
		},
	}
	objs := []runtime.Object{c}
	for i, name := range nodes {
		objs = append(objs, &operatorv1alpha1.GlusterNode{
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, CreationTimestamp: metav1.NewTime(time.Date(2026, 1, 1, i, 0, 0, 0, time.UTC))},
			Spec:       operatorv1alpha1.GlusterNodeSpec{Cluster: "gc", Zone: "zone-1", Template: "z1"},
			Status:     operatorv1alpha1.GlusterNodeStatus{State: string(states.NodeOnline), PeerID: "peer-" + name},
		})
	}
	anthill := anthillfake.NewSimpleClientset(objs...)
	kube := kubefake.NewClientset()
	suffix := 0
	ops := &effects.Kube{Client: kube, Anthill: anthill, NameSuffix: func() string { suffix++; return fmt.Sprintf("n%d", suffix) }}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	log := &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics()}
	return &ClusterSyncer{Anthill: anthill, Kube: ops, Log: log, Clock: clk},
		&UpgradeSyncer{Anthill: anthill, Kube: ops, Log: log, Clock: clk}, anthill
}

func liveCluster(t *testing.T, a *anthillfake.Clientset) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	c, err := a.OperatorV1alpha1().GlusterClusters("ns").Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func ledgerLines(l []operatorv1alpha1.LedgerEntry) []string {
	var out []string
	for _, e := range l {
		out = append(out, fmt.Sprintf("%s %s %s/%d %s%s%s@%s %s", e.Action, e.Node, e.Template, e.Count, strings.Join(e.Objects, ","), strings.Join(e.Options, ","), e.Version, e.State, e.Reason))
	}
	return out
}

// TestClusterSyncerLedgersScalingBeforeItActs: a scaleNodes step records
// the GlusterNodes it is about to create (per template, with their count)
// and the node it is about to ask to decommission before its action runs,
// from the plan the action carries out; the entry survives the action's
// failure, and the retry, or a step repeated while the cache lags, adds
// none. A failed ledger write fails the step before anything changes.
func TestClusterSyncerLedgersScalingBeforeItActs(t *testing.T) {
	ctx := context.Background()
	cs, _, a := clusterLedgerFixture(t, 3, "gc-z1-a")
	scale := states.Decision{Step: states.ClusterScaleNodes, Reason: states.ReasonScaling}
	act := func() error {
		t.Helper()
		c := liveCluster(t, a)
		return cs.Act(ctx, c, engine.Instance[*clusterFacts]{State: states.ClusterScaling, Facts: &clusterFacts{snap: states.ClusterSnapshot{DesiredNodes: 3}}}, scale)
	}

	// The ledger write fails: nothing is created.
	failStatus := true
	a.PrependReactor("update", "glusterclusters", func(ac k8stesting.Action) (bool, runtime.Object, error) {
		if ac.GetSubresource() == "status" && failStatus {
			return true, nil, errors.New("injected: etcd timeout")
		}
		return false, nil, nil
	})
	if err := act(); err == nil {
		t.Fatal("a failed ledger write must fail the step")
	}
	if l, _ := a.OperatorV1alpha1().GlusterNodes("ns").List(ctx, metav1.ListOptions{}); len(l.Items) != 1 {
		t.Fatalf("%d GlusterNodes after a failed ledger write, want the 1 there was", len(l.Items))
	}
	failStatus = false

	// The creates fail after the entry is written; the retry adds no entry.
	failCreate := true
	a.PrependReactor("create", "glusternodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failCreate {
			return true, nil, errors.New("injected: admission webhook down")
		}
		return false, nil, nil
	})
	if err := act(); err == nil {
		t.Fatal("the creates were to fail")
	}
	if got := ledgerLines(liveCluster(t, a).Status.Ledger); fmt.Sprint(got) != "[createNodes  z1/2 @Scaling Scaling]" {
		t.Fatalf("ledger before the nodes exist: %v", got)
	}
	failCreate = false
	for range 2 { // the second is a repeat: the live plan is empty
		if err := act(); err != nil {
			t.Fatal(err)
		}
	}
	if l, _ := a.OperatorV1alpha1().GlusterNodes("ns").List(ctx, metav1.ListOptions{}); len(l.Items) != 3 {
		t.Fatalf("%d GlusterNodes, want 3", len(l.Items))
	}
	if got := ledgerLines(liveCluster(t, a).Status.Ledger); len(got) != 1 {
		t.Fatalf("ledger after the retry: %v, want the one entry", got)
	}

	// Scale down to 2: the node objects.ScaleDownOrder puts first (here a
	// node that never joined) is named before it is asked.
	c := liveCluster(t, a)
	c.Spec.NodeTemplates[0].Nodes = ptr.To[int32](2)
	if _, err := a.OperatorV1alpha1().GlusterClusters("ns").Update(ctx, c, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := act(); err != nil {
			t.Fatal(err)
		}
	}
	ledger := liveCluster(t, a).Status.Ledger
	if len(ledger) != 2 || ledger[1].Action != operatorv1alpha1.LedgerActionDecommissionNode || ledger[1].Template != "z1" || ledger[1].Reason != states.ReasonScaling {
		t.Fatalf("ledger after scaling down: %v", ledgerLines(ledger))
	}
	n, err := a.OperatorV1alpha1().GlusterNodes("ns").Get(ctx, ledger[1].Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations[objects.AnnotationRequest] != objects.RequestDecommission || ledger[1].Peer != n.Status.PeerID || ledger[1].State != n.Status.State {
		t.Fatalf("the ledger names %s (peer %s), whose request is %q", n.Name, ledger[1].Peer, n.Annotations[objects.AnnotationRequest])
	}
}

// TestClusterSyncerLedgersDriversOptionsAndClientRolls: the CSI objects an
// ensureDrivers step creates, the GD2 options an applyOptions step sets
// and the version a rollClients step rolls the CSI clients to reach the
// ledger before the action, each once however often the step repeats; a
// later, different change is a new entry.
func TestClusterSyncerLedgersDriversOptionsAndClientRolls(t *testing.T) {
	ctx := context.Background()
	cs, us, a := clusterLedgerFixture(t, 1, "gc-z1-a")
	drivers := states.Decision{Step: states.ClusterEnsureDrivers, Reason: states.ReasonCreatingDrivers}
	missing := []string{"CSIDriver org.gluster.glusterfs", "Deployment gc-csi-file-provisioner"}
	for range 2 {
		// The runner hands Act the cached object, which lags the write.
		c := liveCluster(t, a)
		c.Status.Ledger = nil
		_ = cs.Act(ctx, c, engine.Instance[*clusterFacts]{State: states.ClusterProvisioning, Facts: &clusterFacts{snap: states.ClusterSnapshot{DriversMissing: missing}}}, drivers)
	}
	// applyOptions needs a GD2 client: the entry is written only once one
	// exists, so it is tested on the entry function, then through the
	// ledger's de-duplication.
	opts := optionsLedgerEntry(map[string]string{"cluster.brick-multiplex": "on", "cluster.max-bricks-per-process": "4"},
		states.Decision{Step: states.ClusterApplyOptions, Reason: states.ReasonApplyingOptions}, states.ClusterReady, time.Now())
	for range 2 {
		if err := ledgerClusterChanges(ctx, a, liveCluster(t, a), []operatorv1alpha1.LedgerEntry{opts}); err != nil {
			t.Fatal(err)
		}
	}
	roll := states.Decision{Step: states.UpgradeRollClients, Reason: "RollingClients"}
	for _, v := range []string{"4.2.0", "4.2.0", "4.3.0"} {
		_ = us.Act(ctx, liveCluster(t, a), engine.Instance[*upgradeFacts]{State: states.UpgradeRollingClients, Facts: &upgradeFacts{snap: states.UpgradeSnapshot{ActiveTarget: v}}}, roll)
	}
	want := []string{
		"ensureCSIDrivers  /0 CSIDriver org.gluster.glusterfs,Deployment gc-csi-file-provisioner@Provisioning CreatingCSIDrivers",
		"setClusterOptions  /0 cluster.brick-multiplex=on,cluster.max-bricks-per-process=4@Ready ApplyingOptions",
		"rollCSIDrivers  /0 4.2.0@RollingClients RollingClients",
		"rollCSIDrivers  /0 4.3.0@RollingClients RollingClients",
	}
	if got := ledgerLines(liveCluster(t, a).Status.Ledger); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ledger:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestLedgerKeepsAClusterWideChangeOnce: the entries of one cluster-wide
// change (several templates scaled in one step) are one record: written
// again, as a retry does, they add nothing, even with node entries in
// between; a different change is new.
func TestLedgerKeepsAClusterWideChangeOnce(t *testing.T) {
	a := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionCreateNodes, Template: "z1", Count: 1}
	b := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionCreateNodes, Template: "z2", Count: 1}
	ledger, changed := withLedgerEntries(nil, []operatorv1alpha1.LedgerEntry{a, b})
	if !changed || len(ledger) != 2 {
		t.Fatalf("first write: %v", ledgerLines(ledger))
	}
	ledger, _ = withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{{Action: operatorv1alpha1.LedgerActionDisableDevices, Node: "n"}})
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{a, b}); changed {
		t.Error("the same change written again was recorded twice")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{b}); changed {
		t.Error("the last part of the same change written again was recorded twice")
	}
	if _, changed := withLedgerEntries(ledger, []operatorv1alpha1.LedgerEntry{a}); !changed {
		t.Error("scaling z1 again after z2 is a new change")
	}
}

// TestLedgerClusterChangesKeepTheRunnersWriteGoing: after the ledger write
// the runner's copy takes the written version and ledger when nothing
// else changed, so its status write neither conflicts nor drops the
// entry; when another machine wrote in between, the copy is left alone.
func TestLedgerClusterChangesKeepTheRunnersWriteGoing(t *testing.T) {
	ctx := context.Background()
	_, _, a := clusterLedgerFixture(t, 1)
	e := operatorv1alpha1.LedgerEntry{Action: operatorv1alpha1.LedgerActionRollCSIDrivers, Version: "4.2.0"}
	c := liveCluster(t, a)
	if err := ledgerClusterChanges(ctx, a, c, []operatorv1alpha1.LedgerEntry{e}); err != nil {
		t.Fatal(err)
	}
	if len(c.Status.Ledger) != 1 {
		t.Fatalf("the runner's copy did not take the ledger: %v", ledgerLines(c.Status.Ledger))
	}
	other := liveCluster(t, a)
	other.Status.Phase = operatorv1alpha1.ClusterPhase(states.ClusterDegraded)
	stale := liveCluster(t, a)
	if _, err := a.OperatorV1alpha1().GlusterClusters("ns").UpdateStatus(ctx, other, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	e.Version = "4.3.0"
	if err := ledgerClusterChanges(ctx, a, stale, []operatorv1alpha1.LedgerEntry{e}); err != nil {
		t.Fatal(err)
	}
	if len(stale.Status.Ledger) != 1 || stale.Status.Phase == operatorv1alpha1.ClusterPhase(states.ClusterDegraded) {
		t.Fatalf("a copy behind another write took the written object: %v, phase %s", ledgerLines(stale.Status.Ledger), stale.Status.Phase)
	}
	if got := liveCluster(t, a).Status.Ledger; len(got) != 2 {
		t.Fatalf("ledger: %v", ledgerLines(got))
	}
}
