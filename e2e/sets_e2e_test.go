//go:build e2e

package e2e

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/objects"
)

// The e2e tests come in four sets. Most run side by side (sideBySide:
// t.Parallel) on the shared control plane, each with its own namespace,
// simulator and operator. A test that touches what every cluster shares
// runs alone, and says why, in the set of what it shares: one that takes a
// Kubernetes node away or cordons it calls alone; one that runs an older
// release (which watches every namespace) calls aloneWithOlderRelease; one
// that needs its cluster to run the CSI driver, whose name is fixed, calls
// aloneWithCSI. Go runs the tests that run alone first, one after another,
// then the others together.
//
// make test (hack/test.sh) runs the four sets as four processes at once,
// each with its own control plane, so that the tests that run alone do not
// hold up the others nor each other's set: ANTHILL_E2E_SET=alone-nodes,
// alone-releases, alone-csi or side-by-side runs only that set; unset runs
// all in one process. The alone-nodes set's control plane notices a lost
// node within seconds (nodeMonitorGrace). Each process saves the operator requests it recorded to
// ANTHILL_E2E_SET_DIR when its tests pass, and the one that finds every
// set's file checks the RBAC usage of their union.
const (
	setEnv           = "ANTHILL_E2E_SET"
	setDirEnv        = "ANTHILL_E2E_SET_DIR"
	setAlone         = "alone-nodes"
	setAloneReleases = "alone-releases"
	setAloneCSI      = "alone-csi"
	setSide          = "side-by-side"
	// setRealNode runs only the tests on a real node (onRealNode); it is
	// not among sets, since its operators run in pods, as their
	// ServiceAccount, which the audit does not record.
	setRealNode = "real-node"
)

// sets are every set's name.
var sets = []string{setAlone, setAloneReleases, setAloneCSI, setSide}

// nodeMonitorGrace is how long a fake node of the alone-nodes set's
// control plane goes unrenewed before it is NotReady (Kubernetes' default
// is 50 s); the other sets keep the default, which a loaded machine never
// comes near.
const nodeMonitorGrace = 16 * time.Second

// controlPlaneOptions are the options of the set's control plane.
func (s runSet) controlPlaneOptions(opts framework.Options) framework.Options {
	if s.name == setAlone {
		opts.NodeMonitorGrace = nodeMonitorGrace
	}
	return opts
}

// runSet is the set this process runs ("" both) and where the sets leave
// their RBAC usage.
type runSet struct {
	name, dir string
}

// parseSet reads ANTHILL_E2E_SET and ANTHILL_E2E_SET_DIR.
func parseSet(name, dir string) (runSet, error) {
	switch name {
	case "":
		return runSet{}, nil
	case setAlone, setAloneReleases, setAloneCSI, setSide, setRealNode:
		if dir == "" {
			return runSet{}, fmt.Errorf("%s=%s is set without %s (where the sets leave their RBAC usage)", setEnv, name, setDirEnv)
		}
		return runSet{name: name, dir: dir}, nil
	}
	return runSet{}, fmt.Errorf("%s=%q: want one of %q", setEnv, name, sets)
}

// currentSet is this process's set, read once by TestMain.
var currentSet runSet

// sideBySide marks a test that runs beside others: t.Parallel, or a skip
// in the processes that run the tests that run alone. It runs when one of
// the places is free and the tests queued before it have theirs.
func sideBySide(t *testing.T) {
	t.Helper()
	inSet(t, setSide, "runs side by side")
	beside(t, framework.RankShort)
}

// sideBySideLong is sideBySide for a test that takes minutes: the long
// tests start before the others (framework.Places).
func sideBySideLong(t *testing.T) {
	t.Helper()
	inSet(t, setSide, "runs side by side")
	beside(t, framework.RankLong)
}

// sideBySideOfSubtests is sideBySide for a test whose work is done by
// subtests that run side by side (besideSub): it takes no place itself,
// and they go before every test still waiting.
func sideBySideOfSubtests(t *testing.T) {
	t.Helper()
	inSet(t, setSide, "runs side by side")
	t.Parallel()
}

// besideSub runs a subtest side by side with the others, before every
// top-level test still waiting for a place.
func besideSub(t *testing.T) {
	t.Helper()
	beside(t, framework.RankSub)
}

// places is how many tests run side by side, and which goes first: go
// test's -parallel (make test's E2E_PARALLEL) sets their number; TestMain
// lifts go test's own limit so that places alone applies it.
var places *framework.Places

// beside queues t for a place, lets go test run it in parallel and waits
// for its place, which it gives back when it ends. A wait of a second or
// more is logged in a form hack/testtimes takes off the test's time.
func beside(t *testing.T, rank framework.Rank) {
	t.Helper()
	w := places.Queue(rank)
	t.Parallel()
	waited := places.Take(w)
	// The first cleanup registered runs last: the place is given back
	// once everything else the test set up is gone.
	t.Cleanup(places.Release)
	if waited >= time.Second {
		t.Logf("waited %s for one of the %d places", waited.Round(100*time.Millisecond), places.Size())
	}
}

// takeOverParallel makes places apply go test's -parallel: it reads the
// flag's value and raises go test's own limit above any number of tests.
func takeOverParallel() error {
	f := flag.Lookup("test.parallel")
	if f == nil {
		return errors.New("no -test.parallel flag")
	}
	n, err := strconv.Atoi(f.Value.String())
	if err != nil {
		return fmt.Errorf("-test.parallel=%s: %w", f.Value, err)
	}
	places = framework.NewPlaces(n)
	return flag.Set("test.parallel", strconv.Itoa(math.MaxInt32))
}

// alone marks a test that must not run beside others because it takes a
// Kubernetes node away or cordons it, for the reason why. It is skipped in
// the processes of the other sets.
func alone(t *testing.T, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("a test that runs alone says why")
	}
	inSet(t, setAlone, "runs alone ("+why+")")
}

// aloneWithOlderRelease marks a test that runs an older release, which
// watches every namespace, for the reason why: it runs alone, in a set of
// its own.
func aloneWithOlderRelease(t *testing.T, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("a test that runs alone says why")
	}
	inSet(t, setAloneReleases, "runs alone with an older release ("+why+")")
}

// aloneWithCSI marks a test that needs its cluster to run the CSI driver,
// whose name is fixed, so one cluster at a time on a control plane does
// (docs/csi.md): it runs alone, in a set of its own.
func aloneWithCSI(t *testing.T, why string) {
	t.Helper()
	inSet(t, setAloneCSI, "runs alone with the CSI driver ("+why+")")
	// The cluster of the test before may still be being deleted; the
	// driver is free once its CSIDriver object is gone.
	err := framework.WaitFor(context.Background(), 3*time.Minute, func(ctx context.Context) (bool, error) {
		d, err := env.Client.StorageV1().CSIDrivers().Get(ctx, objects.CSIFileDriverName, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			return true, nil
		case err != nil:
			return false, err
		}
		return false, fmt.Errorf("the CSI driver is still deployed for %s/%s", d.Labels[objects.LabelClusterNamespace], d.Labels[objects.LabelCluster])
	})
	if err != nil {
		t.Fatalf("waiting for the CSI driver to be free: %v", err)
	}
}

// onRealNode marks a test that runs the operator's image on a real node
// (framework.StartRealNode), for the reason why. It needs root, containerd
// and the kubelet, and installs anthill's cluster-wide objects as users
// do, so it runs only in a process of its own: ANTHILL_E2E_SET=real-node
// (make test runs it when the machine has what a real node needs).
func onRealNode(t *testing.T, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("a test on a real node says why")
	}
	if currentSet.name != setRealNode {
		t.Skipf("runs on a real node (%s), only with %s=%s", why, setEnv, setRealNode)
	}
}

// inSet skips t unless this process runs set (or every set).
func inSet(t *testing.T, set, what string) {
	t.Helper()
	if currentSet.name != "" && currentSet.name != set {
		t.Skipf("%s, in the %s process of make test", what, set)
	}
}

func (s runSet) usesFile(name string) string {
	return filepath.Join(s.dir, "rbac-uses-"+name+".json")
}

// allUses saves this set's recorded requests and returns every set's,
// merged, once all have saved theirs; nil while some have not (the last
// checks when it ends).
func (s runSet) allUses(mine map[framework.Request]*framework.RequestUse) (map[framework.Request]*framework.RequestUse, error) {
	if s.name == setRealNode {
		return nil, nil
	}
	if err := framework.SaveUses(s.usesFile(s.name), mine); err != nil {
		return nil, err
	}
	all := map[framework.Request]*framework.RequestUse{}
	for _, name := range sets {
		uses, err := framework.LoadUses(s.usesFile(name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		framework.MergeUses(all, uses)
	}
	return all, nil
}

// A bad ANTHILL_E2E_SET is refused before anything starts.
func TestSetsRefuseABadName(t *testing.T) {
	for _, c := range []struct{ name, dir string }{{"serial", "d"}, {setAlone, ""}} {
		if _, err := parseSet(c.name, c.dir); err == nil {
			t.Errorf("%s=%q with %s=%q was accepted", setEnv, c.name, setDirEnv, c.dir)
		}
	}
	if s, err := parseSet("", ""); err != nil || s.name != "" {
		t.Errorf("no set: %+v, %v; want both", s, err)
	}
}
