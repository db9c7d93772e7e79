package upgrade

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	appsv1listers "k8s.io/client-go/listers/apps/v1"
	corev1listers "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	anthillfake "github.com/gluster/anthill/kube/client/clientset/versioned/fake"
	listers "github.com/gluster/anthill/kube/client/listers/operator/v1alpha1"
	"github.com/gluster/anthill/kube/effects"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// upgradeFixture is an Syncer over fake clientsets whose listers
// the test feeds directly: a 4.1.0 cluster asking for 4.1.1, three Online
// nodes (two in zone-1, one in zone-2) at 4.1.0.
type upgradeFixture struct {
	t       *testing.T
	anthill *anthillfake.Clientset
	syncer  *Syncer
	events  *record.FakeRecorder
	cluster *operatorv1alpha1.GlusterCluster
	nodes   []*operatorv1alpha1.GlusterNode
}

func newUpgradeFixture(t *testing.T, mutate func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode)) *upgradeFixture {
	t.Helper()
	c := fixtures.Cluster("gc")
	c.Spec.Gluster.Version = "4.1.1"
	var nodes []*operatorv1alpha1.GlusterNode
	for _, n := range []struct{ name, zone string }{{"n-b", "zone-1"}, {"n-a", "zone-1"}, {"n-c", "zone-2"}} {
		node := fixtures.Node("gc", n.name, nil)
		node.Spec.Zone = n.zone
		node.Status.State, node.Status.Version = string(states.NodeOnline), "4.1.0"
		nodes = append(nodes, node)
	}
	if mutate != nil {
		mutate(c, nodes)
	}
	for _, n := range nodes {
		if n.Status.Revision == "" {
			// Each node runs the template the spec gives it.
			n.Status.Revision = objects.NodeTemplateRevision(c, n)
		}
	}
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	ac := anthillfake.NewSimpleClientset(c)
	clusters, nodeIdx := fixtures.NewIndexer(), fixtures.NewIndexer()
	if err := clusters.Add(c); err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if err := nodeIdx.Add(n); err != nil {
			t.Fatal(err)
		}
	}
	f := &upgradeFixture{t: t, anthill: ac, events: record.NewFakeRecorder(100), cluster: c, nodes: nodes}
	f.syncer = &Syncer{
		Clusters: listers.NewGlusterClusterLister(clusters),
		Nodes:    listers.NewGlusterNodeLister(nodeIdx),
		CSI:      effects.CSIReader{DaemonSets: appsv1listers.NewDaemonSetLister(fixtures.NewIndexer()), Pods: corev1listers.NewPodLister(fixtures.NewIndexer())},
		Anthill:  ac,
		Kube:     &effects.Kube{Client: k8sfake.NewClientset(), Anthill: ac},
		Log:      &engine.TransitionLog{Log: zap.NewNop(), Metrics: engine.NewMetrics(), Recorder: f.events},
		Clock:    clk,
	}
	return f
}

func (f *upgradeFixture) sync() *operatorv1alpha1.GlusterCluster {
	f.t.Helper()
	if _, err := f.syncer.Sync(context.Background(), gather.UpgradeKey(fixtures.Namespace, "gc")); err != nil {
		f.t.Fatalf("sync: %v", err)
	}
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return c
}

func TestUpgradeSyncerStartsAndRecordsTheRun(t *testing.T) {
	f := newUpgradeFixture(t, nil)
	c := f.sync()
	// Validating and RollingServers are prompt: the sync that requests
	// the run validates it and picks its first batch, a write each.
	if up := c.Status.Upgrade; up == nil || up.State != string(states.UpgradeRollingServers) || len(up.History) != 2 ||
		up.History[0].Event != string(states.UpgradeRequest) || up.History[1].Event != string(states.UpgradeValidated) || !slices.Equal(up.CurrentNodes, []string{"n-a"}) {
		t.Fatalf("after a version change: %+v", c.Status.Upgrade)
	}
	if ev := <-f.events.Events; !strings.Contains(ev, "upgrade: Idle -> Validating (requestUpgrade)") {
		t.Errorf("event %q", ev)
	}
	if cond := apimeta.FindStatusCondition(c.Status.Conditions, ConditionUpgrade); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Upgrading condition %+v, want True", cond)
	}

	f2 := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeValidating)}
	})
	c = f2.sync()
	up := c.Status.Upgrade
	if up.State != string(states.UpgradeRollingServers) || up.FromVersion != "4.1.0" || up.ToVersion != "4.1.1" ||
		up.StartTime == nil || up.StepStartTime == nil {
		t.Fatalf("validated run recorded as %+v", up)
	}
}

func TestUpgradeSyncerSelectsByZoneThenNameAndKeepsTheCurrentNode(t *testing.T) {
	rolling := func(current ...string) func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		return func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
			c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1", CurrentNodes: current}
		}
	}
	if c := newUpgradeFixture(t, rolling()).sync(); !slices.Equal(c.Status.Upgrade.CurrentNodes, []string{"n-a"}) || c.Status.Upgrade.StepStartTime == nil {
		t.Errorf("first pick %+v, want n-a (zone-1, first by name) with a step start", c.Status.Upgrade)
	}
	// After a crash, or a pause that sent it back to Online, the selected
	// node keeps its turn.
	if c := newUpgradeFixture(t, rolling("n-c")).sync(); !slices.Equal(c.Status.Upgrade.CurrentNodes, []string{"n-c"}) {
		t.Errorf("pick %q, want the already selected n-c", c.Status.Upgrade.CurrentNodes)
	}
	// A node at the target is done and never picked again.
	f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) {
		rolling("n-a")(c, nodes)
		nodes[1].Status.Version = "4.1.1"
	})
	if c := f.sync(); !slices.Equal(c.Status.Upgrade.CurrentNodes, []string{"n-b"}) {
		t.Errorf("pick %q, want n-b once n-a runs the target", c.Status.Upgrade.CurrentNodes)
	}
}

func TestUpgradeSyncerBatchesUpToMaxParallel(t *testing.T) {
	for _, tc := range []struct {
		name    string
		perZone bool
		want    []string
	}{
		{"per zone: the batch stays in zone-1", true, []string{"n-a", "n-b"}},
		{"across zones: the first three by zone then name", false, []string{"n-a", "n-b", "n-c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
				c.Spec.UpgradePolicy = &operatorv1alpha1.UpgradePolicy{MaxParallel: 3, PerZone: tc.perZone}
				c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1"}
			})
			if c := f.sync(); !slices.Equal(c.Status.Upgrade.CurrentNodes, tc.want) {
				t.Errorf("batch %v, want %v", c.Status.Upgrade.CurrentNodes, tc.want)
			}
		})
	}
}

func TestUpgradeSyncerBlocksOnSplitBrainAndWaitsForTheNodeInFlight(t *testing.T) {
	f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: string(states.UpgradeRollingServers), ToVersion: "4.1.1", CurrentNodes: []string{"n-a"}}
		c.Status.Volumes = []operatorv1alpha1.VolumeStatus{{Name: "v", State: string(states.HealSplitBrain)}}
		nodes[1].Status.State = string(states.NodeHealWait)
	})
	c := f.sync()
	cond := apimeta.FindStatusCondition(c.Status.Conditions, ConditionUpgrade)
	if c.Status.Upgrade.State != string(states.UpgradeBlocked) || cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != states.ReasonSplitBrain {
		t.Fatalf("upgrade %+v, condition %+v: want Blocked, False, SplitBrain", c.Status.Upgrade, cond)
	}
	// Blocked with a node still healing: nothing retries until it settles.
	f.syncer.Clusters = listers.NewGlusterClusterLister(indexerWith(t, c))
	c.Status.Volumes = nil
	if c := f.sync(); c.Status.Upgrade.State != string(states.UpgradeBlocked) || !strings.Contains(c.Status.Upgrade.Message, "node being upgraded") {
		t.Errorf("blocked run with a node in HealWait: %+v", c.Status.Upgrade)
	}
}

func TestUpgradeSyncerLeavesExternalAndIdleClustersAlone(t *testing.T) {
	f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Spec.Gluster.Version = "4.1.0"
	})
	if c := f.sync(); c.Status.Upgrade != nil {
		t.Errorf("an idle cluster got upgrade status %+v", c.Status.Upgrade)
	}
	f = newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Spec.Mode = operatorv1alpha1.ClusterModeExternal
	})
	if c := f.sync(); c.Status.Upgrade != nil {
		t.Errorf("an external cluster got upgrade status %+v", c.Status.Upgrade)
	}
}

func indexerWith(t *testing.T, objs ...any) cache.Indexer {
	t.Helper()
	idx := fixtures.NewIndexer()
	for _, o := range objs {
		if err := idx.Add(o); err != nil {
			t.Fatal(err)
		}
	}
	return idx
}

func TestUpgradeSyncerSurfacesAnUnknownStateWithoutResettingIt(t *testing.T) {
	f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, _ []*operatorv1alpha1.GlusterNode) {
		c.Status.Upgrade = &operatorv1alpha1.UpgradeStatus{State: "Teleporting"}
	})
	_, err := f.syncer.Sync(context.Background(), gather.UpgradeKey(fixtures.Namespace, "gc"))
	var perm *engine.PermanentError
	if !errors.As(err, &perm) {
		t.Fatalf("sync error %v, want a permanent error", err)
	}
	c, err := f.anthill.OperatorV1alpha1().GlusterClusters(fixtures.Namespace).Get(context.Background(), "gc", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Upgrade.State != "Teleporting" {
		t.Errorf("unknown state reset to %q", c.Status.Upgrade.State)
	}
	cond := apimeta.FindStatusCondition(c.Status.Conditions, operatorv1alpha1.ConditionDegraded)
	if cond == nil || cond.Reason != states.ReasonUnknownState || cond.Status != metav1.ConditionTrue {
		t.Errorf("Degraded condition %+v, want True with reason %s", cond, states.ReasonUnknownState)
	}
	if ev := <-f.events.Events; !strings.Contains(ev, states.ReasonUnknownState) {
		t.Errorf("event %q", ev)
	}
}

// A server whose pod runs another template revision than the spec gives
// it — a changed template, or a pod from before revisions were recorded —
// starts a rollout at the cluster's unchanged version.
func TestUpgradeSyncerRollsOutAStaleTemplateAtTheSameVersion(t *testing.T) {
	for name, revision := range map[string]string{"a changed template": "0123456789abcdef", "no revision recorded": "-"} {
		t.Run(name, func(t *testing.T) {
			f := newUpgradeFixture(t, func(c *operatorv1alpha1.GlusterCluster, nodes []*operatorv1alpha1.GlusterNode) {
				c.Spec.Gluster.Version = "4.1.0"
				nodes[0].Status.Revision = revision
			})
			if revision == "-" {
				// The fixture gives every node the current revision; take it
				// away again, as for a node an older operator ran.
				f.nodes[0].Status.Revision = ""
			}
			c := f.sync()
			up := c.Status.Upgrade
			if up == nil || len(up.History) == 0 || !strings.Contains(up.History[0].Message, "1 server(s) to roll") ||
				up.State != string(states.UpgradeRollingServers) || !slices.Equal(up.CurrentNodes, []string{"n-b"}) {
				t.Fatalf("upgrade status %+v, want a rollout of 1 server requested, validated and rolling n-b", up)
			}
		})
	}
}
