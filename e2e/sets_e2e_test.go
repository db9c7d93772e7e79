//go:build e2e

package e2e

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
)

// The e2e tests come in two sets. Most run side by side (sideBySide:
// t.Parallel) on the shared control plane, each with its own namespace,
// simulator and operator. A test that touches what every cluster shares
// (a Kubernetes node, the CSI driver's fixed name) or runs an older
// release (which watches every namespace) runs alone (alone), and says
// why. Go runs the tests that run alone first, one after another, then the
// others together.
//
// make test (hack/test.sh) runs the two sets as two processes at once, each
// with its own control plane, so that the tests that run alone do not hold
// up the others: ANTHILL_E2E_SET=alone runs only those, =side-by-side only
// the others; unset runs both in one process. Each process saves the
// operator requests it recorded to ANTHILL_E2E_SET_DIR when its tests
// pass, and the one that finds both files checks the RBAC usage of their
// union.
const (
	setEnv    = "ANTHILL_E2E_SET"
	setDirEnv = "ANTHILL_E2E_SET_DIR"
	setAlone  = "alone"
	setSide   = "side-by-side"
)

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
	case setAlone, setSide:
		if dir == "" {
			return runSet{}, fmt.Errorf("%s=%s is set without %s (where the sets leave their RBAC usage)", setEnv, name, setDirEnv)
		}
		return runSet{name: name, dir: dir}, nil
	}
	return runSet{}, fmt.Errorf("%s=%q: want %q or %q", setEnv, name, setAlone, setSide)
}

// currentSet is this process's set, read once by TestMain.
var currentSet runSet

// sideBySide marks a test that runs beside others: t.Parallel, or a skip
// in the process that runs the tests that run alone.
func sideBySide(t *testing.T) {
	t.Helper()
	if currentSet.name == setAlone {
		t.Skip("runs side by side, in the other process of make test")
	}
	t.Parallel()
}

// alone marks a test that must not run beside others, for the reason
// why; it is skipped in the process that runs the others.
func alone(t *testing.T, why string) {
	t.Helper()
	if why == "" {
		t.Fatal("a test that runs alone says why")
	}
	if currentSet.name == setSide {
		t.Skipf("runs alone (%s), in the other process of make test", why)
	}
}

func (s runSet) usesFile(name string) string {
	return filepath.Join(s.dir, "rbac-uses-"+name+".json")
}

// allUses saves this set's recorded requests and returns both sets',
// merged, once both have saved theirs; nil while the other has not (it
// checks when it ends).
func (s runSet) allUses(mine map[framework.Request]*framework.RequestUse) (map[framework.Request]*framework.RequestUse, error) {
	if err := framework.SaveUses(s.usesFile(s.name), mine); err != nil {
		return nil, err
	}
	all := map[framework.Request]*framework.RequestUse{}
	for _, name := range []string{setAlone, setSide} {
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
