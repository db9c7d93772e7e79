package cluster

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
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/machinestatus"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// TestClusterCopiesItsNodesLedgers: the cluster machine copies what its
// GlusterNodes put on record into the cluster's ledger, each entry once,
// in time order; a node's entries older than what the cluster holds of it
// are not copied back, nor those a full ledger has dropped.
func TestClusterCopiesItsNodesLedgers(t *testing.T) {
	e := func(node string, s int, brick string) operatorv1alpha1.LedgerEntry {
		x := fixtures.LedgerMove(node, brick)
		x.Time = metav1.NewTime(time.Date(2026, 12, 1, 0, 0, s, 0, time.UTC))
		return x
	}
	n := func(name, cluster string, l ...operatorv1alpha1.LedgerEntry) *operatorv1alpha1.GlusterNode {
		return &operatorv1alpha1.GlusterNode{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: operatorv1alpha1.GlusterNodeSpec{Cluster: cluster}, Status: operatorv1alpha1.GlusterNodeStatus{Ledger: l}}
	}
	lines := func(l []operatorv1alpha1.LedgerEntry) string {
		var out []string
		for _, x := range l {
			out = append(out, x.Node+x.Brick)
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name    string
		cluster []operatorv1alpha1.LedgerEntry
		nodes   []*operatorv1alpha1.GlusterNode
		want    string
	}{
		{name: "a cluster that holds nothing of its nodes takes all their entries, oldest first",
			nodes: []*operatorv1alpha1.GlusterNode{n("a", "gc", e("a", 1, "1"), e("a", 3, "3")), n("b", "gc", e("b", 2, "2")), n("c", "other", e("c", 1, "1"))},
			want:  "a1 b2 a3"},
		{name: "a node's entries after the cluster's latest of it are copied",
			cluster: []operatorv1alpha1.LedgerEntry{e("a", 1, "1")},
			nodes:   []*operatorv1alpha1.GlusterNode{n("a", "gc", e("a", 1, "1"), e("a", 1, "2"))},
			want:    "a2"},
		{name: "a node whose latest entry the cluster holds has nothing to copy",
			cluster: []operatorv1alpha1.LedgerEntry{e("a", 1, "1"), e("b", 2, "1")},
			nodes:   []*operatorv1alpha1.GlusterNode{n("a", "gc", e("a", 1, "1"))},
			want:    ""},
		{name: "a node whose ledger dropped the cluster's latest entry of it copies what is newer",
			cluster: []operatorv1alpha1.LedgerEntry{e("a", 2, "old")},
			nodes:   []*operatorv1alpha1.GlusterNode{n("a", "gc", e("a", 1, "x"), e("a", 2, "y"), e("a", 3, "3"))},
			want:    "a3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := lines(copyNodeLedgers(tc.cluster, "gc", tc.nodes)); got != tc.want {
				t.Errorf("copied %q, want %q", got, tc.want)
			}
		})
	}
	t.Run("a full cluster ledger does not take back what it dropped", func(t *testing.T) {
		var full []operatorv1alpha1.LedgerEntry
		for i := range operatorv1alpha1.MaxLedger {
			full = append(full, e("b", 10+i, fmt.Sprint(i)))
		}
		if got := lines(copyNodeLedgers(full, "gc", []*operatorv1alpha1.GlusterNode{n("a", "gc", e("a", 5, "gone"), e("a", 500, "new"))})); got != "anew" {
			t.Errorf("copied %q, want only the entry newer than the ledger's oldest", got)
		}
	})
}

// clusterLedgerFixture is a Syncer over fake clientsets holding cluster gc with one template, z1, of want nodes, and
// the nodes named.
func clusterLedgerFixture(t *testing.T, want int32, nodes ...string) (*Syncer, *anthillfake.Clientset) {
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
	return &Syncer{Anthill: anthill, Kube: ops, Log: log, Clock: clk}, anthill
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

// clusterStep runs the part of a cluster sync of the live cluster between
// its decision d and the status write: the live re-read, then the changes
// states' table says the action makes (states.ClusterChanges) put on
// record ahead, which ends it (noted), or else the action.
func clusterStep(t *testing.T, cs *Syncer, a *anthillfake.Clientset, state fsm.State, facts *clusterFacts, d states.Decision) (noted bool, err error) {
	t.Helper()
	ctx := context.Background()
	c := liveCluster(t, a)
	in := engine.Instance[*clusterFacts]{State: state, Facts: facts}
	if err := cs.GatherLive(ctx, c, &in, d); err != nil {
		return false, err
	}
	in.Facts.snap.State = state
	if (machinestatus.ClusterLedger{}).Note(c, states.ClusterChanges(in.Facts.snap, d), cs.Clock.Now()) {
		_, err := a.OperatorV1alpha1().GlusterClusters("ns").UpdateStatus(ctx, c, metav1.UpdateOptions{})
		return true, err
	}
	_, err = cs.Act(ctx, c, in, d)
	return false, err
}

// TestClusterSyncerLedgersScalingBeforeItActs: a scaleNodes step puts on
// record the GlusterNodes it is about to create (per template, with their
// count) and the node it is about to ask to decommission, from a plan over
// the live cluster and nodes (GatherLive), before its action runs; the
// entry survives the action's failure, and the retry, or a step repeated
// while the cache lags, adds none.
func TestClusterSyncerLedgersScalingBeforeItActs(t *testing.T) {
	ctx := context.Background()
	cs, a := clusterLedgerFixture(t, 3, "gc-z1-a")
	scale := states.Decision{Step: states.ClusterScaleNodes, Reason: states.ReasonScaling}
	step := func() (bool, error) {
		t.Helper()
		return clusterStep(t, cs, a, states.ClusterScaling, &clusterFacts{snap: states.ClusterSnapshot{DesiredNodes: 3}}, scale)
	}
	nodes := func() int {
		l, err := a.OperatorV1alpha1().GlusterNodes("ns").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return len(l.Items)
	}

	if noted, err := step(); !noted || err != nil {
		t.Fatalf("first step: noted %t, %v; want the plan put on record", noted, err)
	}
	if got := ledgerLines(liveCluster(t, a).Status.Ledger); fmt.Sprint(got) != "[createNodes  z1/2 @Scaling Scaling]" || nodes() != 1 {
		t.Fatalf("ledger before the nodes exist: %v, %d GlusterNodes", got, nodes())
	}
	// The creates fail after the entry is written; the retry adds no entry.
	failCreate := true
	a.PrependReactor("create", "glusternodes", func(k8stesting.Action) (bool, runtime.Object, error) {
		if failCreate {
			return true, nil, errors.New("injected: admission webhook down")
		}
		return false, nil, nil
	})
	if noted, err := step(); noted || err == nil {
		t.Fatalf("second step: noted %t, %v; want the creates to fail", noted, err)
	}
	failCreate = false
	for range 2 { // the second is a repeat: the live plan is empty
		if noted, err := step(); noted || err != nil {
			t.Fatalf("step: noted %t, %v", noted, err)
		}
	}
	if nodes() != 3 {
		t.Fatalf("%d GlusterNodes, want 3", nodes())
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
	if noted, err := step(); !noted || err != nil {
		t.Fatalf("scale-down step: noted %t, %v", noted, err)
	}
	ledger := liveCluster(t, a).Status.Ledger
	if len(ledger) != 2 || ledger[1].Action != operatorv1alpha1.LedgerActionDecommissionNode || ledger[1].Template != "z1" || ledger[1].Reason != states.ReasonScaling {
		t.Fatalf("ledger after scaling down: %v", ledgerLines(ledger))
	}
	n, err := a.OperatorV1alpha1().GlusterNodes("ns").Get(ctx, ledger[1].Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations[objects.AnnotationRequest] != "" {
		t.Fatalf("%s was asked to decommission before the request was on record", n.Name)
	}
	if noted, err := step(); noted || err != nil {
		t.Fatalf("scale-down action: noted %t, %v", noted, err)
	}
	n, err = a.OperatorV1alpha1().GlusterNodes("ns").Get(ctx, ledger[1].Node, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n.Annotations[objects.AnnotationRequest] != objects.RequestDecommission || ledger[1].Peer != n.Status.PeerID || ledger[1].State != n.Status.State {
		t.Fatalf("the ledger names %s (peer %s), whose request is %q", n.Name, ledger[1].Peer, n.Annotations[objects.AnnotationRequest])
	}
}

// TestClusterSyncerLedgersDriversAndOptions: the CSI objects an
// ensureDrivers step creates and the GD2 options an applyOptions step sets
// go on record before the action, each once however often the step
// repeats.
func TestClusterSyncerLedgersDriversAndOptions(t *testing.T) {
	cs, a := clusterLedgerFixture(t, 1, "gc-z1-a")
	c := liveCluster(t, a)
	c.Spec.ClusterOptions = map[string]string{"cluster.brick-multiplex": "on", "cluster.max-bricks-per-process": "4", "cluster.same": "x"}
	now := cs.Clock.Now()
	drivers := states.Decision{Step: states.ClusterEnsureDrivers, Reason: states.ReasonCreatingDrivers}
	missing := []string{"CSIDriver org.gluster.glusterfs", "Deployment gc-csi-file-provisioner"}
	options := states.Decision{Step: states.ClusterApplyOptions, Reason: states.ReasonApplyingOptions}
	differ := []string{"cluster.brick-multiplex", "cluster.max-bricks-per-process"}
	ledger := machinestatus.ClusterLedger{}
	for range 2 {
		ledger.Note(c, states.ClusterChanges(states.ClusterSnapshot{State: states.ClusterProvisioning, DriversMissing: missing}, drivers), now)
	}
	for range 2 {
		ledger.Note(c, states.ClusterChanges(states.ClusterSnapshot{State: states.ClusterReady, OptionsDiffer: differ, ClusterOptions: c.Spec.ClusterOptions}, options), now)
	}
	want := []string{
		"ensureCSIDrivers  /0 CSIDriver org.gluster.glusterfs,Deployment gc-csi-file-provisioner@Provisioning CreatingCSIDrivers",
		"setClusterOptions  /0 cluster.brick-multiplex=on,cluster.max-bricks-per-process=4@Ready ApplyingOptions",
	}
	if got := ledgerLines(c.Status.Ledger); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("ledger:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
