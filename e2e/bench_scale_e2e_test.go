//go:build e2e

package e2e

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/e2e/framework"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// scaleStepsEnv lists the steps of BenchmarkScale, in GlusterNodes
// (make bench-scale sets it; unset, the benchmark does not run).
const scaleStepsEnv = "ANTHILL_SCALE_STEPS"

// scaleMemLimitEnv, when set, is the operator's GOMEMLIMIT for the whole
// benchmark (make bench-scale SCALE_GOMEMLIMIT=...): the soft memory limit
// the operator gives itself inside a container with a memory limit, set
// here for the operator alone (the control plane's programs are Go too).
const scaleMemLimitEnv = "ANTHILL_SCALE_GOMEMLIMIT"

// scaleNodesPerCluster and scalePodsPerKubeNode shape every step: clusters
// of ten GlusterNodes (four, three and three in the three zones), ten
// Gluster pods per kwok node.
const (
	scaleNodesPerCluster = 10
	scalePodsPerKubeNode = 10
	// scaleConsumerLabel marks the Kubernetes nodes that would consume
	// volumes; no kwok node carries it, so no node plugin pod is placed.
	scaleConsumerLabel = "bench.anthill.gluster.org/volume-consumer"
)

// BenchmarkScale is make bench-scale: one operator bringing up, then
// holding, clusters of ten GlusterNodes, in steps of a growing fleet
// (ANTHILL_SCALE_STEPS, GlusterNodes per step, e.g. "100,1000"). Each step
// adds the kwok nodes and network PersistentVolumes it needs, then prints
// in the same run:
//
//   - the time from creating the GlusterClusters to every node Online,
//     against the bare control plane bringing up as many single-replica
//     StatefulSets with the same claims (the ratio; target <= 1.2);
//   - the operator's peak RSS during the bring-up and its RSS at rest,
//     and the functions whose allocations hold most of its heap at rest
//     (its profile is saved under ANTHILL_SCALE_PROFILES);
//   - at rest, over ANTHILL_SCALE_WINDOW (default 60s): API writes per
//     minute, GD2 calls per node per minute, CPU seconds per minute;
//   - the reaction to an admin's request (a maintenance annotation, one
//     node in each of five clusters): median and maximum until the node is
//     in Maintenance;
//   - the time from SIGKILLing the operator to its restarted process
//     having synced every GlusterNode once;
//   - API writes and GD2 calls per node per minute at rest again, with
//     the operator restarted at a longer --gd2-list-interval and a slower
//     leader election (quietFlags).
//
// With ANTHILL_SCALE_GOMEMLIMIT set, every run of the operator has that
// soft memory limit, and the RSS and CPU figures show what holding it
// costs.
//
// Every cluster runs its file CSI driver (an empty spec.drivers means
// file), with spec.csi.nodeSelector naming a label no kwok node carries, as
// an admin limits the plugins to the nodes that consume volumes: without
// it each cluster's node plugin DaemonSet puts a pod on every kwok node,
// and the pods grow as clusters times kwok nodes (10,200 of them at 1,000
// GlusterNodes, more than the kwok nodes' 110 pods each hold beside the
// Gluster pods; docs/performance.md). Every cluster has its own simulator
// state and listener, all served by the test process, whose CPU and peak
// RSS are printed apart.
func BenchmarkScale(b *testing.B) {
	// One operator over every namespace, with production timers, as users run it.
	watchEveryNamespace(b)
	raw := os.Getenv(scaleStepsEnv)
	if raw == "" {
		b.Skipf("%s is not set (make bench-scale sets it)", scaleStepsEnv)
	}
	var steps []int
	for _, f := range strings.Split(raw, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 || n%scaleNodesPerCluster != 0 {
			b.Fatalf("%s: %q is not a positive multiple of %d", scaleStepsEnv, f, scaleNodesPerCluster)
		}
		steps = append(steps, n)
	}
	window := time.Minute
	if w, err := time.ParseDuration(os.Getenv("ANTHILL_SCALE_WINDOW")); err == nil && w > 0 {
		window = w
	}
	ctx := context.Background()
	if lim := os.Getenv(scaleMemLimitEnv); lim != "" {
		b.Logf("the operator runs with GOMEMLIMIT=%s", lim)
		operatorOf(b).SetEnv("GOMEMLIMIT=" + lim)
	}
	// The operator serves its heap profile for the whole benchmark, and
	// runs as the other benchmarks expect it once done (the deferred
	// calls run last first: its own environment, then the restart).
	killAndStart(b, scaleFlags...)
	defer killAndStart(b)
	defer operatorOf(b).SetEnv()
	pvs := 0
	for range b.N {
		// fleet is every GlusterNode the operator holds: the steps before
		// stay, so the rates at rest are per node of the whole fleet.
		fleet := 0
		for _, nodes := range steps {
			// Claims are never reused (Retain): each step needs its own for
			// the baseline and for the operator.
			pvs += 2 * nodes
			if err := env.CreateNetworkStorage(ctx, pvs, "100Gi"); err != nil {
				b.Fatal(err)
			}
			perZone := (nodes/scalePodsPerKubeNode + 2) / 3
			if err := env.CreateFakeNodes(ctx, 3, max(perZone, 2)); err != nil {
				b.Fatal(err)
			}
			fleet += nodes
			scaleStep(b, nodes, fleet, window)
		}
	}
}

// scaleStep runs one step of BenchmarkScale: nodes GlusterNodes more, for
// fleet in all.
func scaleStep(b *testing.B, nodes, fleet int, window time.Duration) {
	ctx := context.Background()
	clusters := nodes / scaleNodesPerCluster
	selfCPU0 := processCPU()

	baseline := timeStatefulSets(b, nodes)

	addr, err := operatorOf(b).HTTPAddress(ctx, time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	var namespaces []string
	// The clock runs from before the first simulator and create, as the
	// baseline's runs from before its first create.
	start := time.Now()
	peak := newPeakSampler(addr)
	for range clusters {
		ns := newNamespace(b)
		sim := startSim(b, ns, defaultSimOptions)
		// Each cluster is named after its namespace: the names of its
		// cluster-scoped objects (StorageClasses, CSIDrivers) derive from
		// it, and a second cluster of the same name would find them taken.
		name := ns
		if err := env.CreateSimAuthSecret(ctx, ns, name, sim); err != nil {
			b.Fatal(err)
		}
		c, err := framework.SampleCluster(ns, name, sim, 3)
		if err != nil {
			b.Fatal(err)
		}
		c.Spec.NodeTemplates[0].Nodes = ptr.To[int32](4)
		if c.Spec.CSI == nil {
			c.Spec.CSI = &operatorv1alpha1.CSISpec{}
		}
		c.Spec.CSI.NodeSelector = map[string]string{scaleConsumerLabel: "true"}
		for t := range c.Spec.NodeTemplates {
			c.Spec.NodeTemplates[t].Storage.StorageClassName = ptr.To(framework.NetworkStorageClass)
		}
		namespaces = append(namespaces, ns)
		if _, err := anthill.OperatorV1alpha1().GlusterClusters(ns).Create(ctx, c, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	err = framework.WaitFor(ctx, time.Duration(nodes/10+10)*time.Minute, func(ctx context.Context) (bool, error) {
		online := countOnline(ctx, b, namespaces)
		return online == nodes, fmt.Errorf("%d of %d Online", online, nodes)
	})
	peakRSS := peak.stop()
	if err != nil {
		b.Fatal(err)
	}
	up := time.Since(start)

	w := measureRest(b, addr, window)
	rest, _ := w.after.value("process_resident_memory_bytes", nil)
	heap, _ := w.after.value("go_memstats_heap_inuse_bytes", nil)
	heapTop := heapProfile(b, addr, nodes)

	react := reactionTimes(b, namespaces[:min(5, len(namespaces))])
	resync := resyncTime(b, fleet)
	quiet := quietRest(b, window)

	ratio := up.Seconds() / baseline.Seconds()
	b.ReportMetric(ratio, fmt.Sprintf("ratio@%d", nodes))
	fmt.Printf("scale: %d GlusterNodes (%d clusters): Online in %s; %d plain StatefulSets Ready in %s; ratio %.2f (target <= 1.2)\n",
		nodes, clusters, up.Round(100*time.Millisecond), nodes, baseline.Round(100*time.Millisecond), ratio)
	fmt.Printf("scale:   the operator now holds %d GlusterNodes (%d clusters); rates at rest are per node of all of them\n", fleet, fleet/scaleNodesPerCluster)
	fmt.Printf("scale:   operator RSS peak %.0f MB during the bring-up, %.0f MB at rest (heap in use %.0f MB)\n", peakRSS/1e6, rest/1e6, heap/1e6)
	fmt.Print(heapTop)
	fmt.Printf("scale:   at rest over %s: %.1f API writes/min, %.2f GD2 calls/node/min, %.2f CPU s/min\n",
		window, w.writes(), w.rate("anthill_gd2_requests_total", nil)/float64(fleet), w.rate("process_cpu_seconds_total", nil))
	fmt.Printf("scale:   at rest, changes per minute: %s\n", w.changes())
	fmt.Printf("scale:   at rest, GD2 calls/node/min by operation: %s\n", w.gd2Operations(fleet))
	fmt.Printf("scale:   at rest restarted with %s: %.1f API writes/min, %.2f GD2 calls/node/min (%s)\n",
		strings.Join(quietFlags, " "), quiet.writes(), quiet.rate("anthill_gd2_requests_total", nil)/float64(fleet), quiet.changes())
	fmt.Printf("scale:   reaction to a maintenance request: median %s, max %s (%d samples)\n",
		react[len(react)/2].Round(time.Millisecond), react[len(react)-1].Round(time.Millisecond), len(react))
	fmt.Printf("scale:   restart: every GlusterNode synced %s after the SIGKILL\n", resync.Round(100*time.Millisecond))
	fmt.Printf("scale:   the test process (control-plane clients, %d simulators): %.0f CPU s over the step, peak RSS %.0f MB\n",
		clusters, processCPU()-selfCPU0, selfPeakRSS()/1e6)
}

// timeStatefulSets creates n single-replica StatefulSets with a Gluster
// node's claims (GD2 state and one block brick, network storage) at once
// and returns how long until all are Ready.
func timeStatefulSets(b *testing.B, n int) time.Duration {
	b.Helper()
	ctx := context.Background()
	ns := newNamespace(b)
	start := time.Now()
	for i := range n {
		sts := baselineStatefulSet(ns, fmt.Sprintf("baseline-%d", i), 1, ptr.To(framework.NetworkStorageClass))
		if _, err := env.Client.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	err := framework.WaitFor(ctx, time.Duration(n/10+10)*time.Minute, func(ctx context.Context) (bool, error) {
		list, err := env.Client.AppsV1().StatefulSets(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		ready := 0
		for _, s := range list.Items {
			if s.Status.ReadyReplicas == 1 {
				ready++
			}
		}
		return ready == n, fmt.Errorf("%d of %d StatefulSets Ready", ready, n)
	})
	if err != nil {
		b.Fatalf("baseline: %v", err)
	}
	return time.Since(start)
}

// countOnline counts the Online GlusterNodes of the namespaces.
func countOnline(ctx context.Context, b *testing.B, namespaces []string) int {
	online := 0
	for _, ns := range namespaces {
		list, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for _, n := range list.Items {
			if n.Status.State == "Online" {
				online++
			}
		}
	}
	return online
}

// reactionTimes requests maintenance on one Online node of each namespace
// in turn and measures until the node is in Maintenance, then requests
// resume and waits for Online again. It returns the times, sorted.
func reactionTimes(b *testing.B, namespaces []string) []time.Duration {
	b.Helper()
	ctx := context.Background()
	var out []time.Duration
	for _, ns := range namespaces {
		list, err := anthill.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) == 0 {
			b.Fatalf("nodes of %s: %v", ns, err)
		}
		name := list.Items[0].Name
		start := time.Now()
		requestOnNode(b, ns, name, "maintenance")
		err = pollState(ctx, ns, name, "Maintenance")
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, time.Since(start))
		requestOnNode(b, ns, name, "resume")
		if err := pollState(ctx, ns, name, "Online"); err != nil {
			b.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}

// pollState waits, polling every 20 ms, until GlusterNode ns/name is in
// state.
func pollState(ctx context.Context, ns, name, state string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	for {
		n, err := anthill.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && n.Status.State == state {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s/%s not %s: %v", ns, name, state, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// resyncTime SIGKILLs the operator, starts it again and measures until
// the new process has synced every GlusterNode once (its node-machine
// sync count reaches the number of nodes; its counters start at zero).
func resyncTime(b *testing.B, nodes int) time.Duration {
	b.Helper()
	ctx := context.Background()
	start := time.Now()
	addr := killAndStart(b, scaleFlags...)
	err := framework.WaitFor(ctx, 10*time.Minute, func(ctx context.Context) (bool, error) {
		s, err := tryScrape(addr)
		if err != nil {
			return false, err
		}
		var synced float64
		for _, m := range s.matching("anthill_dispatcher_sync_duration_seconds", map[string]string{"machine": "node"}) {
			synced += float64(m.GetHistogram().GetSampleCount())
		}
		return synced >= float64(nodes), fmt.Errorf("%.0f of %d node syncs", synced, nodes)
	})
	if err != nil {
		b.Fatal(err)
	}
	return time.Since(start)
}

// quietFlags restart the operator for BenchmarkScale's second window at
// rest: a longer --gd2-list-interval (fewer device and volume list reads;
// the peer watch still reads the peer list every 15 s) and a slower
// leader election (a Lease renewal every 10 s instead of 2 s; a standby
// takes over within 30 s instead of 15 s).
var quietFlags = []string{
	"--gd2-list-interval=30s",
	"--leader-election-retry-period=10s", "--leader-election-renew-deadline=20s", "--leader-election-lease-duration=30s",
}

// quietRest restarts the operator with quietFlags, lets it settle, and
// measures it at rest over window; then it restarts the operator as it
// was.
func quietRest(b *testing.B, window time.Duration) restWindow {
	b.Helper()
	addr := killAndStart(b, append(slices.Clone(scaleFlags), quietFlags...)...)
	defer killAndStart(b, scaleFlags...)
	return measureRest(b, addr, window)
}

// scaleFlags are the operator's for every run of BenchmarkScale: it serves
// its runtime profiles, so that heapProfile can read where the heap goes.
var scaleFlags = []string{"--profiling"}

// scaleProfilesEnv names the directory BenchmarkScale writes its heap
// profiles to, created if missing (default the system's temporary
// directory).
const scaleProfilesEnv = "ANTHILL_SCALE_PROFILES"

// heapProfile saves the operator's heap profile at rest after a step of
// nodes GlusterNodes and returns a few lines for the step's report: where
// it was written, and the functions whose allocations hold the most of
// the heap in use (go tool pprof -top), so that what grows with the fleet
// is named in the same run.
func heapProfile(b *testing.B, addr string, nodes int) string {
	b.Helper()
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b.Fatalf("heap profile: %s", resp.Status)
	}
	dir := cmp.Or(os.Getenv(scaleProfilesEnv), os.TempDir())
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(dir, fmt.Sprintf("anthill-heap-%d.pb.gz", nodes))
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		b.Fatal(err)
	}
	out, err := exec.Command("go", "tool", "pprof", "-top", "-sample_index=inuse_space", "-nodecount=12", path).CombinedOutput()
	if err != nil {
		b.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "scale:   heap profile at rest: %s (go tool pprof -top -sample_index=inuse_space %s)\n", path, path)
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(line); len(f) > 0 && (strings.HasSuffix(f[0], "B") || f[0] == "flat" || f[0] == "Showing") {
			fmt.Fprintf(&sb, "scale:     %s\n", strings.TrimSpace(line))
		}
	}
	return sb.String()
}

// killAndStart SIGKILLs the operator, starts it again with extra
// arguments for that run only, and returns its metrics address.
func killAndStart(b *testing.B, extra ...string) string {
	b.Helper()
	operatorOf(b).Kill()
	if err := operatorOf(b).StartWith(extra...); err != nil {
		b.Fatal(err)
	}
	addr, err := operatorOf(b).HTTPAddress(context.Background(), time.Minute)
	if err != nil {
		b.Fatal(err)
	}
	return addr
}

// peakSampler samples the operator's RSS every second until stopped.
type peakSampler struct {
	stopc chan struct{}
	wg    sync.WaitGroup
	peak  float64
}

func newPeakSampler(addr string) *peakSampler {
	p := &peakSampler{stopc: make(chan struct{})}
	p.wg.Go(func() {
		for {
			if s, err := tryScrape(addr); err == nil {
				if v, ok := s.value("process_resident_memory_bytes", nil); ok && v > p.peak {
					p.peak = v
				}
			}
			select {
			case <-p.stopc:
				return
			case <-time.After(time.Second):
			}
		}
	})
	return p
}

func (p *peakSampler) stop() float64 {
	close(p.stopc)
	p.wg.Wait()
	return p.peak
}

// processCPU is the test process's CPU time so far, in seconds.
func processCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return tv(ru.Utime) + tv(ru.Stime)
}

// selfPeakRSS is the test process's peak RSS in bytes (Linux reports
// ru_maxrss in KiB).
func selfPeakRSS() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil || runtime.GOOS != "linux" {
		return 0
	}
	return float64(ru.Maxrss) * 1024
}
