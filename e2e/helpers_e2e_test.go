//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// gd2Client talks to the simulator as the operator does.
func gd2Client(t testing.TB) *gd2.Client {
	t.Helper()
	c, err := gd2.New(gd2.Options{Endpoint: simOf(t).URL, Secret: simOf(t).Secret})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// defaultSimOptions: a light write load that heals quickly.
var defaultSimOptions = framework.SimOptions{Seed: 1, WriteRate: 5, HealRate: 40}

// startSim starts a GD2 simulator linked to the pods of ns, makes it the
// running test's simOf(t), and stops it when the test ends: after the
// test's clusters are deleted (testRun.finish), which takes their GD2.
func startSim(tb testing.TB, ns string, o framework.SimOptions) *framework.GD2Sim {
	tb.Helper()
	o.Namespace = ns
	s, err := env.StartGD2Sim(context.Background(), o)
	if err != nil {
		tb.Fatalf("start GD2 simulator: %v", err)
	}
	r := runOf(tb)
	r.mu.Lock()
	r.sim = s
	owned := r.op != nil
	if owned {
		r.sims = append(r.sims, s)
	}
	r.mu.Unlock()
	if !owned {
		tb.Cleanup(s.Stop)
	}
	return s
}

// createCluster starts the test's GD2 simulator and creates the sample
// cluster in ns with perTemplate nodes per zone, pointing at it.
func createCluster(t testing.TB, ns, name string, perTemplate int32) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	return createClusterWithSim(t, ns, name, perTemplate, defaultSimOptions)
}

// createClusterWithSim is createCluster with a simulator started with o.
func createClusterWithSim(t testing.TB, ns, name string, perTemplate int32, o framework.SimOptions) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	return createClusterEdited(t, ns, name, perTemplate, o, nil)
}

// releaseGD2Image is the server image the samples of the releases up to
// v0.2.0 named (their CRDs required one; none is built upstream, which
// the kwok kubelets never notice). A cluster an older release runs names
// it, as a cluster made with that release would.
const releaseGD2Image = "docker.io/gluster/glusterd2"

// createReleaseCluster is createClusterWithSim for a cluster an older
// release runs first: it names releaseGD2Image.
func createReleaseCluster(t testing.TB, ns, name string, perTemplate int32, o framework.SimOptions) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	return createClusterEdited(t, ns, name, perTemplate, o, func(c *operatorv1alpha1.GlusterCluster) {
		c.Spec.Gluster.Image = releaseGD2Image
	})
}

// createClusterEdited is createClusterWithSim with edit applied to the
// sample before it is created.
func createClusterEdited(t testing.TB, ns, name string, perTemplate int32, o framework.SimOptions, edit func(*operatorv1alpha1.GlusterCluster)) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	ctx := context.Background()
	startSim(t, ns, o)
	if err := env.CreateSimAuthSecret(ctx, ns, name, simOf(t)); err != nil {
		t.Fatal(err)
	}
	c, err := framework.SampleCluster(ns, name, simOf(t), perTemplate)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(c)
	}
	c, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// nodeStates is "name=State" for every node of the cluster, sorted.
func nodeStates(ctx context.Context, ns, cluster string) (map[string]operatorv1alpha1.GlusterNode, string, error) {
	nodes, err := framework.ClusterNodes(ctx, anthill, ns, cluster)
	if err != nil {
		return nil, "", err
	}
	byName := map[string]operatorv1alpha1.GlusterNode{}
	var parts []string
	for _, n := range nodes {
		byName[n.Name] = n
		parts = append(parts, n.Name+"="+n.Status.State)
	}
	sort.Strings(parts)
	return byName, strings.Join(parts, " "), nil
}

// waitNodes waits until the cluster has exactly want nodes, all Online, and
// the cluster is Ready.
func waitNodes(t testing.TB, ns, cluster string, want int, timeout time.Duration) map[string]operatorv1alpha1.GlusterNode {
	t.Helper()
	var nodes map[string]operatorv1alpha1.GlusterNode
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var desc string
		var err error
		nodes, desc, err = nodeStates(ctx, ns, cluster)
		if err != nil {
			return false, err
		}
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		online := 0
		for _, n := range nodes {
			if n.Status.State == "Online" {
				online++
			}
		}
		if len(nodes) == want && online == want && c.Status.Phase == "Ready" {
			return true, nil
		}
		return false, fmt.Errorf("cluster %s, nodes: %s", c.Status.Phase, desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for %d Online nodes and a Ready cluster: %v", want, err)
	}
	return nodes
}

// waitNodeState waits until node reaches state (or is gone when state is "").
func waitNodeState(t testing.TB, ns, name, state string, timeout time.Duration) *operatorv1alpha1.GlusterNode {
	t.Helper()
	var got *operatorv1alpha1.GlusterNode
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			if state == "" && strings.Contains(err.Error(), "not found") {
				return true, nil
			}
			return false, err
		}
		got = n
		if state != "" && n.Status.State == state {
			return true, nil
		}
		return false, fmt.Errorf("node %s is %s: %s", name, n.Status.State, n.Status.Message)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for node %s to be %q: %v", name, state, err)
	}
	return got
}

// requestOnNode sets the request annotation, as `anthill node` does.
func requestOnNode(t testing.TB, ns, name, request string) {
	t.Helper()
	patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:%q}}}`, "operator.gluster.org/request", request)
	if _, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Patch(context.Background(), name, "application/merge-patch+json", []byte(patch), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// setTemplateNodes sets nodes on the named templates.
func setTemplateNodes(t testing.TB, ns, cluster string, counts map[string]int32) {
	t.Helper()
	editCluster(t, ns, cluster, func(c *operatorv1alpha1.GlusterCluster) {
		for i := range c.Spec.NodeTemplates {
			if n, ok := counts[c.Spec.NodeTemplates[i].Name]; ok {
				c.Spec.NodeTemplates[i].Nodes = &n
			}
		}
	})
}

// editCluster changes a GlusterCluster's spec as an admin's edit would:
// the operator writes status all the time, so the edit retries on
// conflict exactly like kubectl edit would have to. Several machines
// write a cluster's status, in bursts on a loaded machine, so the retries
// back off for seconds (editBackoff), not client-go's 50 ms in all.
func editCluster(t testing.TB, ns, name string, edit func(*operatorv1alpha1.GlusterCluster)) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(editBackoff, func() error {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(c)
		_, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Update(ctx, c, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("edit GlusterCluster %s/%s: %v", ns, name, err)
	}
}

// editBackoff is how an edit retries on conflict: up to 12 tries over
// about 10 s.
var editBackoff = wait.Backoff{Steps: 12, Duration: 20 * time.Millisecond, Factor: 2, Jitter: 0.5, Cap: 2 * time.Second}

// editNode changes a GlusterNode's spec as an admin's edit would.
func editNode(t testing.TB, ns, name string, edit func(*operatorv1alpha1.GlusterNode)) {
	t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(editBackoff, func() error {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		edit(n)
		_, err = anthill.OperatorV1alpha1().GlusterNodes(ns).Update(ctx, n, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		t.Fatalf("edit GlusterNode %s/%s: %v", ns, name, err)
	}
}

// noViolations fails the test if the simulator recorded any data-safety
// violation.
func noViolations(t testing.TB) {
	t.Helper()
	if v := simOf(t).Violations(); len(v) > 0 {
		t.Fatalf("the simulator recorded %d data-safety violation(s): %+v", len(v), v)
	}
}

// createReplicatedVolume creates, starts and enables self-heal on a
// replica-3 volume placed by GD2 across three zones.
func createReplicatedVolume(t testing.TB, g *gd2.Client, name string) *gd2.Volume {
	t.Helper()
	ctx := context.Background()
	if _, err := g.CreateVolume(ctx, gd2.VolumeCreateRequest{Name: name, Size: 1 << 30, Replica: 3}); err != nil {
		t.Fatalf("create volume: %v", err)
	}
	if _, err := g.StartVolume(ctx, name, false); err != nil {
		t.Fatalf("start volume: %v", err)
	}
	v, err := g.SetVolumeOptions(ctx, name, gd2.VolumeOptionRequest{
		Options: map[string]string{"cluster/replicate.self-heal-daemon": "on"}, AllowAdvanced: true,
	})
	if err != nil {
		t.Fatalf("enable self-heal: %v", err)
	}
	return v
}

// bricksByPeer counts the volume's bricks per peer id.
func bricksByPeer(t testing.TB, g *gd2.Client, vol string) map[string]int {
	t.Helper()
	v, err := g.GetVolume(context.Background(), vol)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, b := range v.Bricks() {
		out[b.PeerID]++
	}
	return out
}

// gd2FilterAll lists everything.
var gd2FilterAll = gd2.Filter{}

// dumpNamespace logs what a person would look at when a wait fails: the
// cluster and node statuses, pods, claims and StatefulSets of ns.
func dumpNamespace(t testing.TB, ns string) {
	t.Helper()
	ctx := context.Background()
	if cs, err := anthill.OperatorV1alpha1().GlusterClusters(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, c := range cs.Items {
			t.Logf("GlusterCluster %s: phase=%s nodes=%+v conditions=%+v", c.Name, c.Status.Phase, c.Status.Nodes, c.Status.Conditions)
		}
	}
	if ns2, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, n := range ns2.Items {
			t.Logf("GlusterNode %s: state=%s peer=%s message=%q", n.Name, n.Status.State, n.Status.PeerID, n.Status.Message)
		}
	}
	if pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pods.Items {
			t.Logf("Pod %s: node=%s phase=%s conditions=%v", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
		}
	}
	if pvcs, err := env.Client.CoreV1().PersistentVolumeClaims(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, p := range pvcs.Items {
			t.Logf("PVC %s: phase=%s volume=%s", p.Name, p.Status.Phase, p.Spec.VolumeName)
		}
	}
	if sts, err := env.Client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, s := range sts.Items {
			t.Logf("StatefulSet %s: replicas=%d ready=%d", s.Name, s.Status.Replicas, s.Status.ReadyReplicas)
		}
	}
	if ev, err := env.Client.CoreV1().Events(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, e := range ev.Items {
			if e.Type == "Warning" {
				t.Logf("Event %s %s/%s: %s", e.Reason, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message)
			}
		}
	}
	t.Logf("GD2 hosts: %+v", simOf(t).Hosts())
}

// waitNodeCondition waits until any condition of the node carries reason.
func waitNodeCondition(t testing.TB, ns, name, reason string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range n.Status.Conditions {
			if c.Reason == reason {
				return true, nil
			}
		}
		return false, fmt.Errorf("node %s is %s: %s", name, n.Status.State, n.Status.Message)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for node %s to report %s: %v", name, reason, err)
	}
}

// waitMovedBrick waits until the node's drain has recorded a moved brick.
func waitMovedBrick(t testing.TB, ns, name string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		return len(n.Status.MovedBricks) > 0, fmt.Errorf("node %s is %s: %s", name, n.Status.State, n.Status.Message)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for node %s to move a brick: %v", name, err)
	}
}

// waitDevices waits until every device of peer has state.
func waitDevices(t testing.TB, g *gd2.Client, peer, state string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		devs, err := g.ListDevices(ctx, peer)
		if err != nil {
			return false, err
		}
		for _, d := range devs {
			if string(d.State) != state {
				return false, fmt.Errorf("device %s is %s", d.Device, d.State)
			}
		}
		return len(devs) > 0, fmt.Errorf("peer %s has no devices", peer)
	})
	if err != nil {
		t.Fatalf("waiting for the devices of peer %s to be %s: %v", peer, state, err)
	}
}

// pendingHeal sums heal-info's pending entries of vol.
func pendingHeal(t testing.TB, g *gd2.Client, vol string) int64 {
	t.Helper()
	hi, err := g.HealInfo(context.Background(), vol, gd2.HealInfoSummary)
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, b := range hi {
		for _, c := range []*int64{b.EntriesInHealPending, b.TotalEntries} {
			if c != nil && *c > 0 {
				n += *c
				break
			}
		}
	}
	return n
}

// restartOperator SIGKILLs the operator and starts it again.
func restartOperator(t *testing.T) {
	t.Helper()
	operatorOf(t).Kill()
	if err := operatorOf(t).Start(); err != nil {
		t.Fatal(err)
	}
}

// waitChecked waits until check passes, failing the test with what and the
// namespace's dump when timeout runs out first.
func waitChecked(ctx context.Context, t testing.TB, ns, what string, timeout time.Duration, check func(ctx context.Context) error) {
	t.Helper()
	err := framework.WaitFor(ctx, timeout, func(ctx context.Context) (bool, error) {
		if err := check(ctx); err != nil {
			return false, err
		}
		return true, nil
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("%s: %v", what, err)
	}
}

// twoBrickNodes names two nodes of nodes, in different zones, that both
// hold bricks of vol; the test fails if there are no such two.
func twoBrickNodes(t testing.TB, g *gd2.Client, nodes map[string]operatorv1alpha1.GlusterNode, vol string) (victim, other string) {
	t.Helper()
	byPeer := bricksByPeer(t, g, vol)
	for n, node := range nodes {
		if byPeer[node.Status.PeerID] == 0 {
			continue
		}
		if victim == "" {
			victim = n
		} else if node.Spec.Zone != nodes[victim].Spec.Zone {
			other = n
		}
	}
	if victim == "" || other == "" {
		t.Fatalf("need two nodes holding bricks of %s; bricks per peer %v", vol, byPeer)
	}
	return victim, other
}

// restartWhenFired waits up to timeout for a KillOnLine trigger to fire,
// then restarts the operator it SIGKILLed; without the line it fails the
// test, saying that never happened.
func restartWhenFired(t *testing.T, ns string, fired <-chan string, timeout time.Duration, never string) {
	t.Helper()
	select {
	case line := <-fired:
		t.Logf("SIGKILLed the operator after %s", line)
		operatorOf(t).Kill()
		if err := operatorOf(t).Start(); err != nil {
			t.Fatalf("restart the operator: %v", err)
		}
	case <-time.After(timeout):
		dumpNamespace(t, ns)
		t.Fatal(never)
	}
}

// waitExternalReady waits until the cluster is Ready and shows vol with its
// heal state.
func waitExternalReady(t *testing.T, ns, cluster, vol string) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	var c *operatorv1alpha1.GlusterCluster
	err := framework.WaitFor(context.Background(), 2*time.Minute, func(ctx context.Context) (bool, error) {
		var err error
		c, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		var states []string
		for _, v := range c.Status.Volumes {
			if v.Name == vol && v.State == "Healthy" && c.Status.Phase == "Ready" {
				return true, nil
			}
			states = append(states, v.Name+"="+v.State)
		}
		return false, fmt.Errorf("phase %s, volumes %v, conditions %+v", c.Status.Phase, states, c.Status.Conditions)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for a Ready external cluster showing volume %s: %v", vol, err)
	}
	return c
}

// waitVolumeHealthy waits until the volume's heal machine reports Healthy.
func waitVolumeHealthy(t testing.TB, ns, cluster, vol string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, cluster, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range c.Status.Volumes {
			if v.Name == vol {
				return v.State == "Healthy", fmt.Errorf("volume %s is %s: %s", vol, v.State, v.Message)
			}
		}
		return false, fmt.Errorf("volume %s is not in status.volumes", vol)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for volume %s to be Healthy: %v", vol, err)
	}
}

// waitMoreSyncs waits until op has synced machine k more times: a test
// that checks nothing changes while the operator keeps looking waits for
// it to look again, rather than for a fixed time in which it may not
// have. Syncs of every object of the machine count, so k should exceed
// the number of the test's objects of that machine that may sync for
// other reasons.
func waitMoreSyncs(t *testing.T, op *framework.Operator, machine string, k int, timeout time.Duration) {
	t.Helper()
	from, err := syncsOf(op, machine)
	if err != nil {
		t.Fatal(err)
	}
	err = framework.WaitFor(context.Background(), timeout, func(context.Context) (bool, error) {
		n, err := syncsOf(op, machine)
		if err != nil {
			return false, err
		}
		return n >= from+float64(k), fmt.Errorf("%s syncs: %.0f more, want %d", machine, n-from, k)
	})
	if err != nil {
		t.Fatalf("waiting for the operator to sync again: %v", err)
	}
}

// waitUpgradeState waits for status.upgrade.state to be state.
func waitUpgradeState(t testing.TB, ns, name, state string, timeout time.Duration) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	return waitRunState(t, ns, name, state, time.Time{}, timeout)
}

// waitRunState waits for status.upgrade.state to be state in a run that
// started at since or later (any run when since is zero).
func waitRunState(t testing.TB, ns, name, state string, since time.Time, timeout time.Duration) *operatorv1alpha1.GlusterCluster {
	t.Helper()
	var c *operatorv1alpha1.GlusterCluster
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		var err error
		c, err = anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		up := c.Status.Upgrade
		if up == nil {
			return false, fmt.Errorf("no upgrade status")
		}
		if !since.IsZero() && (up.StartTime == nil || up.StartTime.Time.Before(since.Truncate(time.Second))) {
			return false, fmt.Errorf("no run started since %s yet (upgrade %s: %s)", since.Format(time.RFC3339), up.State, up.Message)
		}
		_, desc, _ := nodeStates(ctx, ns, name)
		return up.State == state, fmt.Errorf("upgrade is %s (%s), nodes %v; all nodes: %s", up.State, up.Message, up.CurrentNodes, desc)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for the upgrade to be %s: %v", state, err)
	}
	return c
}

// waitVolumeState waits for a volume's heal machine to be in state.
func waitVolumeState(t testing.TB, ns, name, vol, state string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, v := range c.Status.Volumes {
			if v.Name == vol {
				return v.State == state, fmt.Errorf("volume %s is %s: %s", vol, v.State, v.Message)
			}
		}
		return false, fmt.Errorf("volume %s is not in status.volumes", vol)
	})
	if err != nil {
		t.Fatalf("waiting for volume %s to be %s: %v", vol, state, err)
	}
}

func waitVolumesHealthy(t testing.TB, ns, name string, vols []string, timeout time.Duration) {
	t.Helper()
	for _, v := range vols {
		waitVolumeState(t, ns, name, v, "Healthy", timeout)
	}
}
