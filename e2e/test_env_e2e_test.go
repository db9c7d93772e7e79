//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"slices"
	"time"

	"path/filepath"
	"strings"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/gd2"
)

// Each top-level test runs against its own operator and its own GD2
// simulators, so that tests can run side by side on the shared control
// plane (t.Parallel) and a test can kill its operator without touching
// another test's clusters.
//
// newNamespace creates a namespace for the test and runs the test's
// operator on it: `anthill operator --watch-namespace=<the test's
// namespaces>` with a Lease of the test's own. A test that creates a
// second namespace gets its operator restarted (gracefully, before any
// cluster exists there) to watch both. startSim makes a simulator the
// test's current one (simOf), as the last one started.
//
// A test that hands its clusters to an older release (which has neither
// --watch-namespace nor the test-sized timers) calls watchEveryNamespace
// first: its operator then watches the whole control plane, with
// production timers, so the test must not run in parallel with others.

// testRun is the state of one top-level test.
type testRun struct {
	mu         sync.Mutex
	name       string
	namespaces []string
	sim        *framework.GD2Sim
	// sims are every simulator the test started, stopped by finish.
	sims []*framework.GD2Sim
	op   *framework.Operator
	// everyNamespace: the operator runs without --watch-namespace (see
	// watchEveryNamespace).
	everyNamespace bool
	// args are the operator's extra arguments (operatorArgs).
	args []string
	// leaseNamespace holds the operator's leader-election Lease: the
	// test's first namespace.
	leaseNamespace string
	// ownNamespaces are the namespaces made for the test, which finish
	// deletes once its clusters are gone (their deletion needs the
	// clusters' Secrets).
	ownNamespaces []string
}

var (
	runsMu sync.Mutex
	runs   = map[string]*testRun{}
)

// runOf is the state of the test t belongs to: the closest of t and its
// parents that has one; without any, t's own, made now. A subtest that
// creates a namespace before its parent has one gets an operator of its
// own (the crash sweep's runs, side by side).
func runOf(t testing.TB) *testRun {
	runsMu.Lock()
	defer runsMu.Unlock()
	if r := lookupRun(t.Name()); r != nil {
		return r
	}
	r := &testRun{name: t.Name()}
	runs[r.name] = r
	return r
}

// lookupRun is the state of test name or of its closest parent that has
// one, or nil; runsMu is held.
func lookupRun(name string) *testRun {
	for {
		if r, ok := runs[name]; ok {
			return r
		}
		i := strings.LastIndex(name, "/")
		if i < 0 {
			return nil
		}
		name = name[:i]
	}
}

// simOf is the test's current GD2 simulator (the last startSim started).
func simOf(t testing.TB) *framework.GD2Sim {
	t.Helper()
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sim == nil {
		t.Fatalf("%s has started no GD2 simulator", r.name)
	}
	return r.sim
}

// operatorOf is the test's operator.
func operatorOf(t testing.TB) *framework.Operator {
	t.Helper()
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.op == nil {
		t.Fatalf("%s has no operator: create a namespace with newNamespace first", r.name)
	}
	return r.op
}

// watchEveryNamespace starts the test's operator watching every
// namespace (no --watch-namespace), as older releases do and as a
// benchmark measures it; call it first, from a test that does not run in
// parallel.
func watchEveryNamespace(t testing.TB) *framework.Operator {
	t.Helper()
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.everyNamespace = true
	r.start(t)
	return r.op
}

// start starts the test's operator unless it runs; r.mu is held.
func (r *testRun) start(t testing.TB) {
	t.Helper()
	if r.op != nil {
		return
	}
	switch {
	case r.leaseNamespace != "": // the operator's own (leaseInOperatorNamespace)
	case len(r.namespaces) > 0:
		r.leaseNamespace = r.namespaces[0]
	default:
		r.leaseNamespace = env.KeptNamespace(t)
		r.ownNamespaces = append(r.ownNamespaces, r.leaseNamespace)
	}
	if r.leaseNamespace != framework.OperatorNamespace {
		if err := env.InstallLeaderElectionRBAC(context.Background(), r.leaseNamespace); err != nil {
			t.Fatalf("the operator of %s: %v", r.name, err)
		}
	}
	op, err := env.StartOperatorAs(context.Background(), binPath, operatorIdentity(r.name), r.operatorArgs()...)
	if err != nil {
		t.Fatalf("start the operator of %s: %v", r.name, err)
	}
	r.op = op
	t.Cleanup(func() { r.finish(t) })
}

// leaseInOperatorNamespace makes the test's operator keep its Lease where
// the Deployment's does, in the operator's namespace under the shipped
// Role, as the only test that does (the Lease's name is fixed there); call
// it before newNamespace.
func leaseInOperatorNamespace(t testing.TB) {
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.leaseNamespace = framework.OperatorNamespace
}

// operatorArgs adds arguments to the test's operator (test-sized timers,
// say); call it before newNamespace.
func operatorArgs(t testing.TB, args ...string) {
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.args = append(r.args, args...)
}

// newNamespace creates a namespace for the test, deleted when it ends,
// and runs the test's operator on it (see the top of this file).
func newNamespace(t testing.TB) string {
	t.Helper()
	ns := env.KeptNamespace(t)
	r := runOf(t)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.namespaces = append(r.namespaces, ns)
	r.ownNamespaces = append(r.ownNamespaces, ns)
	if r.op == nil {
		r.start(t)
		return ns
	}
	if r.everyNamespace {
		return ns
	}
	// A graceful stop releases the Lease, so the new run leads at once.
	r.op.Stop()
	r.op.SetArgs(r.operatorArgs()...)
	if err := r.op.Start(); err != nil {
		t.Fatalf("restart the operator of %s: %v", r.name, err)
	}
	return ns
}

// operatorArgs are the arguments of the test's operator runs: its own
// Lease (in the test's first namespace, under the shipped leader-election
// Role), its namespaces, and the test's own.
func (r *testRun) operatorArgs() []string {
	args := []string{"--leader-election-namespace=" + r.leaseNamespace}
	if !r.everyNamespace {
		// Older releases know neither flag.
		args = append(args, "--watch-namespace="+strings.Join(r.namespaces, ","))
		args = append(args, testTimers...)
	}
	return append(args, r.args...)
}

// operatorIdentity names a test's operator: its leader-election identity
// and the directory of its logs.
func operatorIdentity(test string) string {
	id := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, strings.TrimPrefix(test, "Test"))
	if len(id) > 60 {
		id = id[:60]
	}
	return "op-" + strings.Trim(id, "-")
}

// finish deletes the test's GlusterClusters and waits, while the
// operator and the GD2 simulators still run, for them to be gone (their cluster-scoped objects
// with them, the CSI driver's among them; a cluster whose deletion is
// refused, for PersistentVolumes it still has, is left after a minute);
// then it stops the operator and checks its logs: no request denied by
// the shipped RBAC, no key material logged. The namespaces go after it
// (ControlPlane.Namespace), with the Role that held the operator's Lease.
func (r *testRun) finish(t testing.TB) {
	r.mu.Lock()
	op, namespaces, sims, ownNamespaces := r.op, slices.Clone(r.namespaces), slices.Clone(r.sims), slices.Clone(r.ownNamespaces)
	r.mu.Unlock()
	defer func() {
		for _, s := range sims {
			s.Stop()
		}
	}()
	ctx := context.Background()
	// The volumes go first, as an admin deletes them before the cluster:
	// a cluster being deleted drains its nodes, and bricks left would make
	// that a series of brick moves and heals.
	for _, s := range sims {
		deleteVolumes(ctx, s)
	}
	for _, ns := range namespaces {
		_ = anthill.OperatorV1alpha1().GlusterClusters(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
	}
	err := framework.WaitFor(ctx, 2*time.Minute, func(ctx context.Context) (bool, error) {
		var left []string
		for _, ns := range namespaces {
			l, err := anthill.OperatorV1alpha1().GlusterClusters(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range l.Items {
				left = append(left, ns+"/"+c.Name)
			}
		}
		return len(left) == 0, fmt.Errorf("GlusterClusters not yet deleted: %s", strings.Join(left, ", "))
	})
	if err != nil {
		t.Logf("%s: %v (they are left to the control plane)", r.name, err)
	}
	op.Stop()
	logs := op.Logs()
	if denied := forbiddenLines(logs); len(denied) > 0 {
		// Tests can pass around a denied request (a retry, a skipped
		// step); the shipped RBAC must still cover everything the
		// operator asks for.
		t.Errorf("the operator was denied %d request(s) by its RBAC (manifests/rbac), e.g.:\n%s", len(denied), strings.Join(denied[:min(5, len(denied))], "\n"))
	}
	if pem := keyMaterialLines(logs); len(pem) > 0 {
		t.Errorf("%d operator log line(s) carry PEM or key material, e.g.:\n%s", len(pem), strings.Join(pem[:min(3, len(pem))], "\n"))
	}
	if t.Failed() {
		if len(logs) > 20000 {
			logs = logs[len(logs)-20000:]
		}
		t.Logf("tail of the operator logs (all in %s):\n%s", filepath.Dir(op.LogPaths()[0]), logs)
	}
	// The namespaces go last, once nothing of the clusters needs their
	// Secrets.
	for _, ns := range ownNamespaces {
		env.DeleteNamespace(ns)
	}
	runsMu.Lock()
	delete(runs, r.name)
	runsMu.Unlock()
}

// deleteVolumes stops and deletes every volume of s, as far as GD2 lets
// it (best effort: a test's end must not fail on it).
func deleteVolumes(ctx context.Context, s *framework.GD2Sim) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	g, err := gd2.New(gd2.Options{Endpoint: s.URL, Secret: s.Secret})
	if err != nil {
		return
	}
	vols, err := g.ListVolumes(ctx, gd2.Filter{})
	if err != nil {
		return
	}
	for _, v := range vols {
		_, _ = g.StopVolume(ctx, v.Name)
		_ = g.DeleteVolume(ctx, v.Name)
	}
}

// testTimers are the operator flags that size its timers for tests; the
// production defaults stay in the flags' definitions. A machine waiting
// on a heal, a restart or a peer looks again every few seconds rather than
// every 15 s to 10 min; heal state is re-read every 3 s rather than 30 s;
// a hung GD2 request holds a sync 10 s rather than 30 s; a pod stuck on a
// lost Kubernetes node is force-deleted once the node has been lost for
// testLostNodeGrace rather than a minute.
var testTimers = []string{"--max-wait=5s", "--heal-interval=3s", "--gd2-timeout=10s",
	"--lost-node-grace=" + testLostNodeGrace.String()}

// testLostNodeGrace is the operators' --lost-node-grace in the tests.
const testLostNodeGrace = 10 * time.Second
