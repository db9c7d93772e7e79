//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	policyv1 "k8s.io/api/policy/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// TestDisruptionBudgets drives the per-zone PodDisruptionBudgets through
// the real Eviction API, with the real disruption controller computing
// disruptionsAllowed: a three-zone cluster with a replica-3 volume (one
// brick per zone) and a fourth, empty node. It checks that a locked zone
// refuses evictions while another is open, that an empty node's pod can
// always be evicted, that a drain of the open zone takes one pod and then
// every eviction is refused while the pod is away and while its volume
// heals, and that the zone opens again once the node is back and healed.
func TestDisruptionBudgets(t *testing.T) {
	alone(t, "it cordons a Kubernetes node, which the pods of every cluster on that node would feel")
	ns := newNamespace(t)
	const name = "pdb"
	ctx := context.Background()
	createCluster(t, ns, name, 1)
	g := gd2Client(t)
	nodes := waitNodes(t, ns, name, 3, 3*time.Minute)
	createReplicatedVolume(t, g, "data")
	// A fourth node after the volume: GD2 places no brick on it.
	setTemplateNodes(t, ns, name, map[string]int32{"zone-2": 2})
	all := waitNodes(t, ns, name, 4, 2*time.Minute)
	var empty string
	for n := range all {
		if _, ok := nodes[n]; !ok {
			empty = n
		}
	}
	bricks := bricksByPeer(t, g, "data")
	brickPod := map[string]string{} // zone -> pod of the node holding the zone's brick
	for n, node := range nodes {
		if bricks[node.Status.PeerID] != 1 {
			t.Fatalf("node %s holds %d bricks of data, want 1", n, bricks[node.Status.PeerID])
		}
		brickPod[node.Spec.Zone] = n + "-0"
	}
	if bricks[all[empty].Status.PeerID] != 0 {
		t.Fatalf("the new node %s holds a brick", empty)
	}
	waitVolumeState(t, ns, name, "data", "Healthy", 2*time.Minute)

	st := waitDisruption(t, ns, name, "Open", "", 2*time.Minute)
	open := st.Zone
	var locked []string
	for z := range brickPod {
		if z != open {
			locked = append(locked, z)
		}
	}
	sort.Strings(locked)
	waitAllowed(t, ns, name, map[string]int32{open: 1, locked[0]: 0, locked[1]: 0})

	t.Run("a pod in a locked zone cannot be evicted while another zone is open", func(t *testing.T) {
		for _, z := range locked {
			refused(t, ns, brickPod[z])
		}
	})

	t.Run("the pod of a node holding no brick can always be evicted", func(t *testing.T) {
		pod := empty + "-0"
		err := framework.WaitFor(ctx, time.Minute, func(ctx context.Context) (bool, error) {
			p, err := env.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			return p.Labels["operator.gluster.org/holds-bricks"] == "false", fmt.Errorf("pod %s labels %v", pod, p.Labels)
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := evict(ctx, ns, pod); err != nil {
			t.Fatalf("evicting the empty node's pod %s (its zone's budget is locked): %v", pod, err)
		}
		waitNodes(t, ns, name, 4, 2*time.Minute)
	})

	// kubectl drain of the Kubernetes node under the open zone's brick
	// pod: cordon, then evict.
	victim := brickPod[open]
	p, err := env.Client.CoreV1().Pods(ns).Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kubeNode := p.Spec.NodeName
	host := victim // the simulator names a host after its pod
	t.Cleanup(func() { _ = cordon(context.Background(), kubeNode, false) })

	t.Run("a drain of the open zone evicts its pod holding a brick", func(t *testing.T) {
		if err := cordon(ctx, kubeNode, true); err != nil {
			t.Fatal(err)
		}
		if err := evict(ctx, ns, victim); err != nil {
			t.Fatalf("evicting %s in the open zone %s: %v", victim, open, err)
		}
		// The pod cannot come back while its node is cordoned (its brick
		// claim is bound to a local disk there); writes meanwhile build a
		// heal backlog for when it returns.
		waitHostAlive(t, host, false, time.Minute)
		if err := simOf(t).Write("data", 1200); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a second eviction right after the first is refused everywhere", func(t *testing.T) {
		waitDisruption(t, ns, name, "Recovering", open, time.Minute)
		waitAllowed(t, ns, name, map[string]int32{open: 0, locked[0]: 0, locked[1]: 0})
		for _, z := range locked {
			refused(t, ns, brickPod[z])
		}
	})

	t.Run("the returned pod cannot be evicted while its volume heals", func(t *testing.T) {
		if err := cordon(ctx, kubeNode, false); err != nil {
			t.Fatal(err)
		}
		waitHostAlive(t, host, true, 2*time.Minute)
		waitPodReady(t, ns, victim, time.Minute)
		if pending := pendingHeal(t, g, "data"); pending == 0 {
			t.Fatal("no heal pending after the node returned; the test would prove nothing")
		}
		refused(t, ns, victim)
		refused(t, ns, brickPod[locked[0]])
		if pending := pendingHeal(t, g, "data"); pending == 0 {
			t.Fatal("heal finished during the refused evictions; the refusal may not have been for heal")
		}
		st := currentDisruption(t, ns, name)
		if st.State == "Open" {
			t.Fatalf("zone %s reopened while heal is pending: %+v", st.Zone, st)
		}
	})

	t.Run("once the node is back and healed its zone opens again and allows one eviction", func(t *testing.T) {
		waitVolumeState(t, ns, name, "data", "Healthy", 3*time.Minute)
		st := waitDisruption(t, ns, name, "Open", open, 2*time.Minute)
		if pending := pendingHeal(t, g, "data"); pending != 0 {
			t.Fatalf("zone %s open with %d entries pending heal", st.Zone, pending)
		}
		waitAllowed(t, ns, name, map[string]int32{open: 1, locked[0]: 0, locked[1]: 0})
		if err := evict(ctx, ns, victim); err != nil {
			t.Fatalf("evicting %s after heal: %v", victim, err)
		}
		waitNodes(t, ns, name, 4, 2*time.Minute)
		waitDisruption(t, ns, name, "Open", open, 3*time.Minute)
	})

	t.Run("every transition is in the history and the simulator saw no violation", func(t *testing.T) {
		c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]bool{}
		for _, h := range c.Status.History {
			if h.Machine == "disruption" {
				seen[h.From+">"+h.To] = true
			}
		}
		for _, want := range []string{"Open>Recovering", "Recovering>Open"} {
			if !seen[want] {
				t.Errorf("history lacks disruption %s: %+v", want, c.Status.History)
			}
		}
		noViolations(t)
	})
}

// evict asks the Eviction API to evict pod, as kubectl drain does.
func evict(ctx context.Context, ns, pod string) error {
	return env.Client.PolicyV1().Evictions(ns).Evict(ctx, &policyv1.Eviction{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: pod}})
}

// refused fails unless evicting pod is refused by its disruption budget.
func refused(t *testing.T, ns, pod string) {
	t.Helper()
	err := evict(context.Background(), ns, pod)
	if err == nil {
		t.Fatalf("evicting %s was allowed", pod)
	}
	if !apierrors.IsTooManyRequests(err) || !strings.Contains(err.Error(), "disruption budget") {
		t.Fatalf("evicting %s: %v, want 429 for the disruption budget", pod, err)
	}
}

// cordon marks a Kubernetes node (un)schedulable, as kubectl (un)cordon.
func cordon(ctx context.Context, node string, on bool) error {
	patch := fmt.Sprintf(`{"spec":{"unschedulable":%t}}`, on)
	_, err := env.Client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, []byte(patch), metav1.PatchOptions{})
	return err
}

func currentDisruption(t *testing.T, ns, cluster string) operatorv1alpha1.DisruptionStatus {
	t.Helper()
	c, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Get(context.Background(), cluster, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Status.Disruption == nil {
		return operatorv1alpha1.DisruptionStatus{}
	}
	return *c.Status.Disruption
}

// waitDisruption waits for the disruption machine to be in state (and
// zone, unless empty).
func waitDisruption(t *testing.T, ns, cluster, state, zone string, timeout time.Duration) operatorv1alpha1.DisruptionStatus {
	t.Helper()
	var st operatorv1alpha1.DisruptionStatus
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		st = currentDisruption(t, ns, cluster)
		return st.State == state && (zone == "" || st.Zone == zone), fmt.Errorf("disruption %+v", st)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatalf("waiting for disruption %s %s: %v", state, zone, err)
	}
	return st
}

// waitAllowed waits until the disruption controller has processed every
// zone's budget and allows the given number of evictions in each.
func waitAllowed(t *testing.T, ns, cluster string, want map[string]int32) {
	t.Helper()
	err := framework.WaitFor(context.Background(), time.Minute, func(ctx context.Context) (bool, error) {
		l, err := env.Client.PolicyV1().PodDisruptionBudgets(ns).List(ctx, metav1.ListOptions{LabelSelector: labelCluster + "=" + cluster})
		if err != nil {
			return false, err
		}
		got := map[string]string{}
		ok := len(l.Items) == len(want)
		for _, p := range l.Items {
			z := p.Labels["operator.gluster.org/zone"]
			got[z] = fmt.Sprintf("allowed=%d observed=%d/%d", p.Status.DisruptionsAllowed, p.Status.ObservedGeneration, p.Generation)
			w, known := want[z]
			if !known || p.Status.ObservedGeneration != p.Generation || p.Status.DisruptionsAllowed != w {
				ok = false
			}
		}
		return ok, fmt.Errorf("budgets %v, want allowed %v", got, want)
	})
	if err != nil {
		dumpNamespace(t, ns)
		t.Fatal(err)
	}
}

func waitHostAlive(t *testing.T, host string, alive bool, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		for _, h := range simOf(t).Hosts() {
			if h.Name == host {
				return h.Alive == alive, fmt.Errorf("host %s alive=%t", host, h.Alive)
			}
		}
		return false, fmt.Errorf("no host %s", host)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitPodReady(t *testing.T, ns, pod string, timeout time.Duration) {
	t.Helper()
	err := framework.WaitFor(context.Background(), timeout, func(ctx context.Context) (bool, error) {
		p, err := env.Client.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		for _, c := range p.Status.Conditions {
			if c.Type == "Ready" && c.Status == "True" && p.DeletionTimestamp == nil {
				return true, nil
			}
		}
		return false, fmt.Errorf("pod %s not ready", pod)
	})
	if err != nil {
		t.Fatal(err)
	}
}
