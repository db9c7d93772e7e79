//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2/sim"
	"github.com/gluster/anthill/kube/objects"
)

// soakKinds is how many kinds of operation the soak drives (the cases of
// its switch).
const soakKinds = 7

// soakOp is one admin operation of the chaos soak and how it went.
type soakOp struct {
	what   string
	took   time.Duration
	result string
}

// TestChaosSoak is issue 17's item 5, run by `make chaos DURATION=5m`
// (skipped unless ANTHILL_CHAOS_DURATION is set): on the lifecycle's
// cluster, for that long, it drives random admin operations one after
// another, in rounds that hold each kind once in a random order (a new
// operation starts only within the duration; the one under way then
// finishes):
//
//   - decommission a node (a replacement joins);
//   - put a node in maintenance and resume it;
//   - upgrade to the next patch version;
//   - delete a node's Gluster pod (its StatefulSet makes a new one, which
//     rejoins);
//   - scale a zone's template up by one, then back (the surplus node
//     drains);
//   - delete a GlusterNode, as kubectl delete would (it drains, and the
//     cluster creates one in its place);
//   - lose the Kubernetes node under a Gluster node (kwok stops reporting
//     it; the node lifecycle controller marks it NotReady), wait for the
//     Gluster node to go Offline, then give the node back.
//
// Meanwhile, clients write to the volume in random bursts every 1–4 s
// (each write to a replica set with a brick down leaves entries to heal),
// the simulator injects its chaos faults into every operator request, and
// the operator is killed with SIGKILL and restarted every 20–60 s. The
// simulator's violations are checked every 2 s. Then writes, faults and
// kills stop, and after that quiet period the cluster must converge (six
// nodes Online, Ready, the volume Healthy, the last upgrade Complete) with
// no replace-brick or peer delete repeated after it succeeded and every
// brick of the volume on a node of the cluster. It prints the operations,
// the kills, the writes, the faults injected and the violations.
// ANTHILL_CHAOS_SEED fixes the choices (default: the time).
func TestChaosSoak(t *testing.T) {
	alone(t, "it takes Kubernetes nodes away from every cluster")
	raw := os.Getenv("ANTHILL_CHAOS_DURATION")
	if raw == "" {
		t.Skip("the chaos soak runs with make chaos DURATION=5m (ANTHILL_CHAOS_DURATION)")
	}
	dur, err := time.ParseDuration(raw)
	if err != nil || dur <= 0 {
		t.Fatalf("ANTHILL_CHAOS_DURATION=%q: want a duration such as 5m", raw)
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("ANTHILL_CHAOS_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("ANTHILL_CHAOS_SEED=%q: %v", s, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x736f616b))
	t.Logf("chaos soak for %s, seed %d", dur, seed)

	growLocalStorage(t)
	l := newLifecycle(t, "soak", sim.ChaosFaults())

	var (
		mu     sync.Mutex
		ops    []soakOp
		kills  int
		writes int
		seen   []sim.Violation
		// current is the operation under way (the one a failed wait
		// leaves unfinished) and since when.
		current      *soakOp
		currentSince time.Time
	)
	start := time.Now()
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		var b strings.Builder
		fmt.Fprintf(&b, "chaos soak: %s of operations, seed %d\n", time.Since(start).Round(time.Second), seed)
		all := ops
		if current != nil {
			all = append(all, soakOp{what: current.what, took: time.Since(currentSince), result: "FAIL (did not finish)"})
		}
		for i, op := range all {
			fmt.Fprintf(&b, "%3d  %-50s  %-8s  %s\n", i+1, op.what, op.took.Round(time.Second), op.result)
		}
		faults := simOf(t).InjectedFaults()
		fmt.Fprintf(&b, "operator kills: %d\nclient write bursts: %d\nfaults injected: %d error, %d conflict, %d hang\nviolations: %d\n",
			kills, writes, faults["error"], faults["conflict"], faults["hang"], len(seen))
		for _, v := range seen {
			fmt.Fprintf(&b, "  %s %s %s: %s\n", v.Kind, v.Op, v.Brick+v.PeerID, v.Detail)
		}
		t.Log("\n" + b.String())
		fmt.Print(b.String())
	})

	// The violation watcher and the killer run until the operations end.
	ctx, stop := context.WithCancel(context.Background())
	var bg sync.WaitGroup
	bg.Go(func() {
		tick := time.NewTicker(2 * time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if v := simOf(t).Violations(); len(v) > 0 {
				mu.Lock()
				if len(seen) == 0 {
					t.Errorf("the simulator recorded a violation during the soak: %+v", v[0])
				}
				seen = v
				mu.Unlock()
			}
		}
	})
	killRng := rand.New(rand.NewPCG(seed, 0x6b696c6c))
	bg.Go(func() {
		for {
			wait := 20*time.Second + time.Duration(killRng.Int64N(int64(40*time.Second)))
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			operatorOf(t).Kill()
			if err := operatorOf(t).Start(); err != nil {
				t.Errorf("restart the operator: %v", err)
				return
			}
			mu.Lock()
			kills++
			mu.Unlock()
		}
	})
	writeRng := rand.New(rand.NewPCG(seed, 0x77726974))
	written := 0.0 // files the bursts added
	bg.Go(func() {
		for {
			wait := time.Second + time.Duration(writeRng.Int64N(int64(3*time.Second)))
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			// New files until the working set is written, then rewrites of
			// it: a brick a decommission adds has the same to heal late in
			// a long soak as early in it.
			n := float64(1 + writeRng.IntN(200))
			write := simOf(t).Overwrite
			if written < soakWorkingSet {
				write, written = simOf(t).Write, written+n
			}
			if err := write("life", n); err != nil {
				t.Errorf("write to volume life: %v", err)
				return
			}
			mu.Lock()
			writes++
			mu.Unlock()
		}
	})
	halt := func() {
		stop()
		bg.Wait()
		if exited, _ := operatorOf(t).Exited(); exited {
			_ = operatorOf(t).Start()
		}
	}
	t.Cleanup(halt)

	within := soakWithin(t)
	if err := simOf(t).SetFaults(l.faults); err != nil {
		t.Fatal(err)
	}
	version := 0    // patch level above 4.1 of the last upgrade
	var round []int // the kinds of operation left in this round
	for time.Since(start) < dur {
		mu.Lock()
		bad := len(seen) > 0
		mu.Unlock()
		if bad {
			break
		}
		nodes, _, err := nodeStates(context.Background(), l.ns, l.name)
		if err != nil {
			t.Fatal(err)
		}
		names := slices.Sorted(maps.Keys(nodes))
		node := names[rng.IntN(len(names))]
		opStart := time.Now()
		begin := func(what string) {
			mu.Lock()
			current, currentSince = &soakOp{what: what}, opStart
			mu.Unlock()
		}
		if len(round) == 0 {
			round = rng.Perm(soakKinds)
		}
		kind := round[0]
		round = round[1:]
		switch kind {
		case 0:
			begin("decommission " + node)
			growLocalStorage(t)
			requestOnNode(t, l.ns, node, "decommission")
			waitNodeState(t, l.ns, node, "", within(15*time.Minute))
			waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
		case 1:
			begin("maintenance and resume " + node)
			requestOnNode(t, l.ns, node, "maintenance")
			waitNodeState(t, l.ns, node, "Maintenance", within(10*time.Minute))
			requestOnNode(t, l.ns, node, "resume")
			waitNodeState(t, l.ns, node, "Online", within(10*time.Minute))
		case 2:
			version++
			v := fmt.Sprintf("4.1.%d", version)
			begin("upgrade to " + v)
			since := time.Now()
			setGlusterVersion(t, l.ns, l.name, v)
			waitRunState(t, l.ns, l.name, "Complete", since, within(20*time.Minute))
			waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
		case 3:
			begin("delete the pod of " + node)
			killNodePod(t, l.ns, node, within)
			waitNodeState(t, l.ns, node, "Online", within(10*time.Minute))
			waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
		case 4:
			zone := framework.ZoneName(1 + rng.IntN(3))
			begin("scale " + zone + " to 3 nodes and back to 2")
			growLocalStorage(t)
			setTemplateNodes(t, l.ns, l.name, map[string]int32{zone: 3})
			waitNodes(t, l.ns, l.name, 7, within(10*time.Minute))
			setTemplateNodes(t, l.ns, l.name, map[string]int32{zone: 2})
			waitNodes(t, l.ns, l.name, 6, within(15*time.Minute))
		case 5:
			begin("delete the GlusterNode " + node)
			growLocalStorage(t)
			if err := anthill.OperatorV1alpha1().GlusterNodes(l.ns).Delete(context.Background(), node, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
			waitNodeState(t, l.ns, node, "", within(15*time.Minute))
			waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
		case 6:
			kube := nodePodHost(t, l.ns, node)
			begin("lose the Kubernetes node " + kube + " under " + node)
			loseKubeNode(t, l.ns, node, kube, within)
			waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
		}
		mu.Lock()
		ops = append(ops, soakOp{what: current.what, took: time.Since(opStart), result: "ok"})
		current = nil
		t.Logf("operation %d done in %s: %s (%d kills, %d write bursts so far)", len(ops), time.Since(opStart).Round(time.Second), ops[len(ops)-1].what, kills, writes)
		mu.Unlock()
	}

	// The quiet period: no faults, no kills; the cluster must converge.
	halt()
	if err := simOf(t).SetFaults(sim.Faults{}); err != nil {
		t.Fatal(err)
	}
	quiet := time.Now()
	mu.Lock()
	current, currentSince = &soakOp{what: "converge after the quiet period"}, quiet
	mu.Unlock()
	waitNodes(t, l.ns, l.name, 6, within(10*time.Minute))
	waitVolumeHealthy(t, l.ns, l.name, "life", within(5*time.Minute))
	if version > 0 {
		// The last upgrade is done: Complete, or Idle once Complete has
		// settled (a long soak outlasts the hold), with every node at its
		// version.
		want := fmt.Sprintf("4.1.%d", version)
		err := framework.WaitFor(context.Background(), within(10*time.Minute), func(ctx context.Context) (bool, error) {
			c, err := anthill.OperatorV1alpha1().GlusterClusters(l.ns).Get(ctx, l.name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			nodes, desc, err := nodeStates(ctx, l.ns, l.name)
			if err != nil {
				return false, err
			}
			state := ""
			if c.Status.Upgrade != nil {
				state = c.Status.Upgrade.State
			}
			for _, n := range nodes {
				if n.Status.Version != want {
					return false, fmt.Errorf("upgrade %s; node %s runs %q, want %s (%s)", state, n.Name, n.Status.Version, want, desc)
				}
			}
			return state == "Complete" || state == "Idle", fmt.Errorf("upgrade is %s, want Complete or Idle", state)
		})
		if err != nil {
			t.Fatalf("waiting for the upgrade to %s to be done: %v", want, err)
		}
	}
	mu.Lock()
	ops = append(ops, soakOp{what: current.what, took: time.Since(quiet), result: "ok"})
	current = nil
	mu.Unlock()
	bricksOnClusterNodes(t, l, "life")
	for _, r := range sim.RepeatedDestructiveCalls(simOf(t).DestructiveCalls()) {
		t.Errorf("%s of %s sent again at %s after it succeeded at %s", r.Again.Op, r.Again.Target, r.Again.Time.Format(time.RFC3339Nano), r.First.Time.Format(time.RFC3339Nano))
	}
	mu.Lock()
	seen = simOf(t).Violations()
	mu.Unlock()
	noViolations(t)
}

// soakWithin bounds the soak's waits by the test binary's -timeout: a wait
// is cut to what is left before it, less soakReserve for the summary and
// the teardown, so an operation that does not finish in time fails the
// soak with its summary printed instead of the binary panicking.
func soakWithin(t *testing.T) func(time.Duration) time.Duration {
	deadline, ok := t.Deadline()
	return func(d time.Duration) time.Duration {
		if !ok {
			return d
		}
		return max(min(d, time.Until(deadline)-soakReserve), time.Second)
	}
}

// soakWorkingSet is how many files the soak's write bursts add to the
// volume before they only rewrite them: a replacement brick heals every
// file of its replica set before a decommission moves the next brick, so
// files that grew with every burst of an hour's soak would make its last
// decommissions wait far longer than its first.
const soakWorkingSet = 3000

// soakReserve is the time the soak keeps, before the test binary's
// -timeout, for its summary and the control plane's teardown.
const soakReserve = 2 * time.Minute

// killNodePod deletes node's Gluster pod, as a crash of its process or a
// kubectl delete would, and waits for its StatefulSet's new pod (another
// UID) to be Ready.
func killNodePod(t testing.TB, ns, node string, within func(time.Duration) time.Duration) {
	t.Helper()
	ctx := context.Background()
	pods := env.Client.CoreV1().Pods(ns)
	name := objects.NodePodName(node)
	old, err := pods.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := pods.Delete(ctx, name, metav1.DeleteOptions{Preconditions: metav1.NewUIDPreconditions(string(old.UID))}); err != nil && !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	err = framework.WaitFor(ctx, within(5*time.Minute), func(ctx context.Context) (bool, error) {
		p, err := pods.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("pod %s not recreated yet", name)
		}
		if err != nil {
			return false, err
		}
		if p.UID == old.UID {
			return false, fmt.Errorf("pod %s not deleted yet", name)
		}
		if !podIsReady(p) {
			return false, fmt.Errorf("pod %s (new) not Ready", name)
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// nodePodHost is the Kubernetes node GlusterNode node's pod runs on.
func nodePodHost(t testing.TB, ns, node string) string {
	t.Helper()
	p, err := env.Client.CoreV1().Pods(ns).Get(context.Background(), objects.NodePodName(node), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.NodeName == "" {
		t.Fatalf("pod of %s is not scheduled", node)
	}
	return p.Spec.NodeName
}

// loseKubeNode takes Kubernetes node kube, which runs GlusterNode node's
// pod, away from kwok (framework LoseNode), waits for the node lifecycle
// controller to mark it NotReady, for node to go Offline and for every
// Gluster pod of ns on kube to be evicted (Terminating: their toleration of
// a lost node is objects.LostNodeTolerationSeconds), then gives the node
// back (RestoreNode, also when the test ends early). kwok then finishes
// the evicted pods and their StatefulSets make them again on the same
// node, where their node-local claims are.
func loseKubeNode(t testing.TB, ns, node, kube string, within func(time.Duration) time.Duration) {
	t.Helper()
	ctx := context.Background()
	if err := env.LoseNode(ctx, kube); err != nil {
		t.Fatal(err)
	}
	restored := false
	restore := func() {
		if restored {
			return
		}
		restored = true
		if err := env.RestoreNode(context.Background(), kube); err != nil {
			t.Errorf("restore node %s: %v", kube, err)
		}
	}
	t.Cleanup(restore)
	if err := env.WaitNodeNotReady(ctx, kube, within(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	waitNodeState(t, ns, node, "Offline", within(5*time.Minute))
	err := framework.WaitFor(ctx, within(5*time.Minute), func(ctx context.Context) (bool, error) {
		pods, err := env.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{
			LabelSelector: framework.GlusterPodSelector, FieldSelector: "spec.nodeName=" + kube,
		})
		if err != nil {
			return false, err
		}
		for _, p := range pods.Items {
			if p.DeletionTimestamp == nil {
				return false, fmt.Errorf("pod %s on lost node %s not evicted yet", p.Name, kube)
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	restore()
}

// bricksOnClusterNodes fails unless every brick of vol is on the GD2 peer
// of a GlusterNode of the lifecycle's cluster: a drain or a scale-down
// that lost a brick, or left one on a removed peer, shows here.
func bricksOnClusterNodes(t testing.TB, l *lifecycle, vol string) {
	t.Helper()
	nodes, _, err := nodeStates(context.Background(), l.ns, l.name)
	if err != nil {
		t.Fatal(err)
	}
	peers := map[string]bool{}
	for _, n := range nodes {
		peers[n.Status.PeerID] = true
	}
	total := 0
	for peer, n := range bricksByPeer(t, l.g, vol) {
		total += n
		if !peers[peer] {
			t.Errorf("%d brick(s) of volume %s are on peer %s, which is no node of the cluster", n, vol, peer)
		}
	}
	if total != 6 {
		t.Errorf("volume %s has %d bricks, want its 6 (2 x 3)", vol, total)
	}
}
