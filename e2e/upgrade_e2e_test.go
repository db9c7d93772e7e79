//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// upgradeStates are the node states of a node being upgraded.
var upgradeStates = []string{"Quiescing", "Restarting", "Rejoining", "HealWait"}

// TestUpgradeRollsNodeByNode upgrades a 6-node, 3-zone cluster while the
// simulator keeps writing to two replica-3 volumes, so every restarted node
// comes back with a heal backlog. It checks, all along, that no replica
// set ever has more than one brick down and no two nodes are upgraded at
// once; that each node starts only after the previous one healed; that the
// operator, SIGKILLed while a node is being upgraded, resumes with that
// same node; and that the simulator saw no unsafe operation.
func TestUpgradeRollsNodeByNode(t *testing.T) {
	sideBySideLong(t)
	ns := newNamespace(t)
	const name = "roll"
	const from, to = "4.1.0", "5.0.0"
	// Writes outpace the heal rate: every restarted node comes back with a
	// backlog that takes longer to heal than the node was down. GD2 takes
	// two seconds to start after its pod is Ready (kwok restarts a pod in
	// well under a second, which left too small a backlog to be seen).
	createClusterWithSim(t, ns, name, 2, framework.SimOptions{Seed: 2, WriteRate: 100, HealRate: 25, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	waitNodes(t, ns, name, 6, 3*time.Minute)
	vols := []string{"rolla", "rollb"}
	for _, v := range vols {
		createReplicatedVolume(t, g, v)
	}
	waitVolumesHealthy(t, ns, name, vols, 2*time.Minute)

	mon := startUpgradeMonitor(t, ns, name, g, vols)
	setGlusterVersion(t, ns, name, to)

	// SIGKILL the operator while the second node is being upgraded; it must
	// carry on with that node, not pick another.
	var victim string
	err := framework.WaitFor(context.Background(), 5*time.Minute, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		nodes, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return false, err
		}
		up := c.Status.Upgrade
		if up == nil || len(up.CurrentNodes) != 1 {
			return false, fmt.Errorf("no node selected yet: %s", desc)
		}
		done := 0
		for _, n := range nodes {
			if n.Status.Version == to && n.Status.State == "Online" {
				done++
			}
		}
		if n := nodes[up.CurrentNodes[0]]; done == 1 && slices.Contains(upgradeStates, n.Status.State) {
			victim = n.Name
			return true, nil
		}
		return false, fmt.Errorf("%d node(s) upgraded, current %v: %s", done, up.CurrentNodes, desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the second node to be upgraded: %v", err)
	}
	restartOperator(t)
	t.Logf("operator SIGKILLed while %s was being upgraded", victim)

	c := waitUpgradeState(t, ns, name, "Complete", 10*time.Minute)
	mon.stop()

	if c.Status.Upgrade.FromVersion != from || c.Status.Upgrade.ToVersion != to {
		t.Errorf("upgrade recorded as %s -> %s, want %s -> %s", c.Status.Upgrade.FromVersion, c.Status.Upgrade.ToVersion, from, to)
	}
	var events []string
	for _, h := range c.Status.Upgrade.History {
		events = append(events, h.Event)
	}
	for _, want := range []string{"requestUpgrade", "validated", "serversDone", "clientsDone"} {
		if !slices.Contains(events, want) {
			t.Errorf("upgrade history %v lacks %s", events, want)
		}
	}

	// Each restart is in the ledger once, at the target version, the
	// victim's included: the entry is written before the restart.
	rolls := map[string]int{}
	for _, e := range c.Status.Ledger {
		if e.Action == operatorv1alpha1.LedgerActionRollWorkload {
			if e.Version != to || e.Peer == "" {
				t.Errorf("restart entry lacks its version or peer: %+v", e)
			}
			rolls[e.Node]++
		}
	}
	nodes, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if got := rolls[n.Name]; got != 1 {
			t.Errorf("the ledger records %d restarts of %s, want 1: %+v", got, n.Name, c.Status.Ledger)
		}
	}

	checkRolledOneByOne(t, ns, name, mon, func(n operatorv1alpha1.GlusterNode, pod *corev1.Pod) error {
		if n.Status.Version != to {
			return fmt.Errorf("status.version %q, want %s", n.Status.Version, to)
		}
		// The sample names no image: every version runs the pinned GD2
		// image (objects.GD2Image), and the version is the annotation's.
		if v := pod.Annotations["operator.gluster.org/version"]; v != to || pod.Spec.Containers[0].Image != objects.GD2Image(c, to) {
			return fmt.Errorf("the pod runs %q (image %s), want %s (image %s)", v, pod.Spec.Containers[0].Image, to, objects.GD2Image(c, to))
		}
		return nil
	})
	noViolations(t)
}

// checkRolledOneByOne checks, after a rolling upgrade or template rollout
// of cluster name watched by mon, that every node is Online and passes
// podOK with its pod; that each went Online -> Quiescing -> Restarting ->
// Rejoining -> HealWait -> Online exactly once; that each started only
// after the previous one had healed, and some were seen waiting on a heal
// backlog; and that no replica set ever had two bricks down nor two nodes
// were rolled at once.
func checkRolledOneByOne(t *testing.T, ns, name string, mon *upgradeMonitor, podOK func(operatorv1alpha1.GlusterNode, *corev1.Pod) error) {
	t.Helper()
	nodes, err := framework.ClusterNodes(context.Background(), anthill, ns, name)
	if err != nil {
		t.Fatal(err)
	}
	type window struct {
		node       string
		start, end time.Time
		healWaited bool
	}
	var windows []window
	for _, n := range nodes {
		pod, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), n.Name+"-0", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if n.Status.State != "Online" {
			t.Errorf("node %s is %s after the roll", n.Name, n.Status.State)
		}
		if err := podOK(n, pod); err != nil {
			t.Errorf("node %s: %v", n.Name, err)
		}
		w := window{node: n.Name}
		var path []string
		for _, h := range n.Status.History {
			switch {
			case h.Event == "upgrade":
				w.start = h.Time.Time
				path = []string{h.From}
			case len(path) > 0:
				path = append(path, h.From)
				if h.To == "Online" && h.From == "HealWait" {
					w.end = h.Time.Time
					path = append(path, h.To)
				}
			}
		}
		if got := strings.Join(path, " -> "); got != "Online -> Quiescing -> Restarting -> Rejoining -> HealWait -> Online" {
			t.Errorf("node %s went %q through its roll", n.Name, got)
		}
		w.healWaited = mon.sawPending(n.Name)
		windows = append(windows, w)
	}
	// Each node started only after the previous one had healed.
	slices.SortFunc(windows, func(a, b window) int { return a.start.Compare(b.start) })
	for i := 1; i < len(windows); i++ {
		if windows[i].start.Before(windows[i-1].end) {
			t.Errorf("node %s started its roll at %s, before %s finished healing at %s",
				windows[i].node, windows[i].start, windows[i-1].node, windows[i-1].end)
		}
	}
	healed := 0
	for _, w := range windows {
		if w.healWaited {
			healed++
		}
	}
	if healed == 0 {
		t.Errorf("no node was ever seen waiting on a heal backlog; the test did not exercise heal gating")
	}
	if mon.maxDown > 1 {
		t.Errorf("a replica set had %d bricks down at once: %s", mon.maxDown, mon.worst)
	}
	if mon.maxUpgrading > 1 {
		t.Errorf("%d nodes were being rolled at once", mon.maxUpgrading)
	}
	if mon.samples < 20 {
		t.Errorf("the monitor took only %d samples", mon.samples)
	}
	t.Logf("monitor: %d samples, max bricks down in a replica set %d, max nodes rolling %d, %d of %d nodes waited on heal",
		mon.samples, mon.maxDown, mon.maxUpgrading, healed, len(windows))
}

// TestUpgradeBlockedBySplitBrain: an upgrade requested while a volume is in
// split-brain is Blocked with the reason in status and in the Upgrading
// condition, touches no node, and resumes by itself once the split-brain
// is resolved.
func TestUpgradeBlockedBySplitBrain(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "split"
	createCluster(t, ns, name, 1)
	g := gd2Client(t)
	waitNodes(t, ns, name, 3, 2*time.Minute)
	createReplicatedVolume(t, g, "sbvol")
	waitVolumesHealthy(t, ns, name, []string{"sbvol"}, 2*time.Minute)
	if err := simOf(t).InjectSplitBrain("sbvol", 0, []string{"/a/b.txt"}); err != nil {
		t.Fatal(err)
	}
	waitVolumeState(t, ns, name, "sbvol", "SplitBrain", 2*time.Minute)

	setGlusterVersion(t, ns, name, "4.1.1")
	c := waitUpgradeState(t, ns, name, "Blocked", 2*time.Minute)
	cond := apimeta.FindStatusCondition(c.Status.Conditions, "Upgrading")
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != "SplitBrain" || !strings.Contains(cond.Message, "split-brain") {
		t.Fatalf("Upgrading condition %+v, want False with reason SplitBrain", cond)
	}
	if !strings.Contains(c.Status.Upgrade.Message, "split-brain") {
		t.Errorf("status.upgrade.message %q does not say why", c.Status.Upgrade.Message)
	}
	// Blocked while the operator looks again: no node may be touched. A
	// blocked upgrade looks again a minute after its last look at the
	// latest, so two looks may take two minutes.
	waitMoreSyncs(t, operatorOf(t), states.UpgradeMachine, 2, 3*time.Minute)
	nodes, desc, err := nodeStates(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Status.State != "Online" || n.Status.Version != "4.1.0" {
			t.Fatalf("a blocked upgrade touched a node: %s", desc)
		}
	}

	if err := simOf(t).ClearSplitBrain("sbvol"); err != nil {
		t.Fatal(err)
	}
	c = waitUpgradeState(t, ns, name, "Complete", 5*time.Minute)
	var path []string
	for _, h := range c.Status.Upgrade.History {
		path = append(path, h.To)
	}
	if !slices.Contains(path, "Blocked") || !slices.Contains(path, "RollingServers") {
		t.Errorf("upgrade path %v, want it through Blocked, then RollingServers", path)
	}
	noViolations(t)
}

// setGlusterVersion changes spec.gluster.version, which starts an upgrade.
func setGlusterVersion(t testing.TB, ns, name, version string) {
	t.Helper()
	patch := fmt.Sprintf(`{"spec":{"gluster":{"version":%q}}}`, version)
	_, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(context.Background(), name, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	if err != nil {
		t.Fatalf("set version %s: %v", version, err)
	}
}

// upgradeMonitor samples, until stopped, how many bricks of each replica
// set are down (GD2's peer liveness) and how many nodes are in upgrade
// states, and which nodes were seen in HealWait with a heal backlog.
type upgradeMonitor struct {
	cancel context.CancelFunc
	done   chan struct{}

	mu           sync.Mutex
	samples      int
	maxDown      int
	worst        string
	maxUpgrading int
	pending      map[string]bool
}

func startUpgradeMonitor(t testing.TB, ns, name string, g *gd2.Client, vols []string) *upgradeMonitor {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	m := &upgradeMonitor{cancel: cancel, done: make(chan struct{}), pending: map[string]bool{}}
	var subvols [][]gd2.BrickInfo
	var names []string
	for _, v := range vols {
		vol, err := g.GetVolume(ctx, v)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		for _, sv := range vol.Subvols {
			subvols = append(subvols, sv.Bricks)
			names = append(names, v+"/"+sv.Name)
		}
	}
	t.Cleanup(m.stop)
	go func() {
		defer close(m.done)
		tick := time.NewTicker(250 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			peers, err := g.ListPeers(ctx, gd2.Filter{})
			if err != nil {
				continue
			}
			online := map[string]bool{}
			for _, p := range peers {
				online[p.ID] = p.Online
			}
			nodes, err := framework.ClusterNodes(ctx, anthill, ns, name)
			if err != nil {
				continue
			}
			m.mu.Lock()
			m.samples++
			for i, bricks := range subvols {
				down := 0
				for _, b := range bricks {
					if !online[b.PeerID] {
						down++
					}
				}
				if down > m.maxDown {
					m.maxDown, m.worst = down, names[i]
				}
			}
			upgrading := 0
			for _, n := range nodes {
				if slices.Contains(upgradeStates, n.Status.State) {
					upgrading++
				}
				if n.Status.State == "HealWait" && strings.Contains(n.Status.Message, "pending heal") {
					m.pending[n.Name] = true
				}
			}
			m.maxUpgrading = max(m.maxUpgrading, upgrading)
			m.mu.Unlock()
		}
	}()
	return m
}

func (m *upgradeMonitor) stop() {
	m.cancel()
	<-m.done
}

func (m *upgradeMonitor) sawPending(node string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.pending[node]
}

// TestUpgradeHealTimeoutBlocksAndResumes: a node whose heal outlasts
// upgradePolicy.healTimeout moves the upgrade to Blocked with reason
// StepTimedOut, visible in the Upgrading condition. Blocked is not Failed:
// no further node is stopped while it lasts, the node in flight finishes
// healing, and the upgrade resumes by itself to Complete.
func TestUpgradeHealTimeoutBlocksAndResumes(t *testing.T) {
	sideBySide(t)
	ns := newNamespace(t)
	const name = "slowheal"
	// Writes at five hundred times the heal rate: a node down for a second
	// or two (GD2 takes two seconds to start after its pod is Ready; kwok
	// alone restarts a pod in a fraction of a second) comes back with a
	// backlog that takes far longer to heal than the blocked checks below
	// last, however slowly a loaded machine runs them (at fifty times, a
	// two-minute check could see the node healed and the roll go on).
	c := createClusterWithSim(t, ns, name, 1, framework.SimOptions{Seed: 3, WriteRate: 50, HealRate: 0.1, StartupDelay: 2 * time.Second})
	g := gd2Client(t)
	waitNodes(t, ns, name, 3, 2*time.Minute)
	createReplicatedVolume(t, g, "slow")
	waitVolumesHealthy(t, ns, name, []string{"slow"}, 2*time.Minute)

	// The first node restarts within the default timeout, however slowly
	// this machine syncs; once it waits for its heal, the timeout drops
	// below how long the step has run, so the step times out healing (a
	// 3 s timeout from the start could expire before the restart, on a
	// node still quiescing).
	setGlusterVersion(t, ns, name, "4.1.1")
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		nodes, desc, err := nodeStates(ctx, ns, name)
		if err != nil {
			return false, err
		}
		for _, n := range nodes {
			if n.Status.State == "HealWait" {
				return true, nil
			}
		}
		return false, fmt.Errorf("no node waits for its heal: %s", desc)
	})
	if err != nil {
		t.Fatal(err)
	}
	patch := `{"spec":{"upgradePolicy":{"healTimeout":"3s"}}}`
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(context.Background(), c.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	blocked := waitUpgradeState(t, ns, name, "Blocked", 2*time.Minute)
	cond := apimeta.FindStatusCondition(blocked.Status.Conditions, "Upgrading")
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != states.ReasonStepTimedOut {
		t.Fatalf("Upgrading condition %+v, want False with reason %s", cond, states.ReasonStepTimedOut)
	}
	nodes, desc, err := nodeStates(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	busy := 0
	for _, n := range nodes {
		if slices.Contains(upgradeStates, n.Status.State) {
			busy++
		}
	}
	if busy > 1 {
		t.Fatalf("%d nodes are being upgraded while blocked: %s", busy, desc)
	}
	// Blocked while the operator looks again: the node in flight keeps
	// healing, no other node is stopped. A blocked upgrade looks again a
	// minute after its last look at the latest (sooner on any change to
	// its cluster or nodes), so two looks may take two minutes.
	waitMoreSyncs(t, operatorOf(t), states.UpgradeMachine, 2, 3*time.Minute)
	nodes, desc, err = nodeStates(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	stopped := 0
	for _, n := range nodes {
		if n.Status.State != "Online" || n.Status.Version != "4.1.0" {
			stopped++
		}
	}
	if stopped != 1 {
		t.Fatalf("while blocked, %d nodes are off Online at 4.1.0, want only the one in flight: %s", stopped, desc)
	}
	// The condition still names the timeout, not the wait for the node.
	still, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cond := apimeta.FindStatusCondition(still.Status.Conditions, "Upgrading"); still.Status.Upgrade.State != "Blocked" || cond == nil || cond.Reason != states.ReasonStepTimedOut {
		t.Fatalf("after 3s blocked: upgrade %s, Upgrading condition %+v; want Blocked with reason %s", still.Status.Upgrade.State, cond, states.ReasonStepTimedOut)
	}
	// Heal catches up and the rest heal within a longer timeout.
	if err := simOf(t).SetRates(5, 500); err != nil {
		t.Fatal(err)
	}
	patch = `{"spec":{"upgradePolicy":{"healTimeout":"5m"}}}`
	if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Patch(context.Background(), c.Name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}

	done := waitUpgradeState(t, ns, name, "Complete", 5*time.Minute)
	var path []string
	for _, h := range done.Status.Upgrade.History {
		path = append(path, h.From+"-"+h.Event+"->"+h.To)
	}
	if !slices.Contains(path, "Blocked-retry->Validating") {
		t.Errorf("upgrade path %v: want it to leave Blocked by itself (retry)", path)
	}
	nodes, desc, err = nodeStates(context.Background(), ns, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if n.Status.State != "Online" || n.Status.Version != "4.1.1" {
			t.Errorf("after the upgrade: %s", desc)
			break
		}
	}
	noViolations(t)
}
