//go:build e2e

package e2e

import (
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
)

// Shards: make test (hack/test.sh) runs this package as two processes at
// once, each with its own control plane, operator and simulators. The
// tests mostly wait on the operator (heal backlogs, GD2 timeouts, sync
// intervals), so two fit on two cores: one process took 64 minutes under
// -race, two 32 (docs/testing.md).
//
// ANTHILL_E2E_SHARD=k/n picks shard k of n: shard 1 runs every test but
// those named in laterShards, shard k > 1 only those of laterShards[k-2].
// A test named nowhere runs in shard 1, so a new or renamed test is never
// left out; laterShards only balances the shards by the tests' durations.
//
// Each shard saves the operator requests it recorded to
// ANTHILL_E2E_SHARD_DIR when its tests pass; the shard that finds every
// shard's file there runs the RBAC usage check on their union.
const (
	shardEnv    = "ANTHILL_E2E_SHARD"
	shardDirEnv = "ANTHILL_E2E_SHARD_DIR"
)

// laterShards are the tests of shards 2..n. Shard 2 holds the lifecycle
// under GD2 faults (15 to 20 minutes under -race: each of its hangs holds
// a sync for the 30 s GD2 timeout), the crash subset and the
// handover tests (which kill the operator), and the metrics test, so that
// both shards end at about the same time.
var laterShards = [][]string{{
	"TestLifecycleUnderGD2Faults",
	"TestCrashAtDestructiveTransitions",
	"TestHandoverFromThePreviousRelease",
	"TestHandoverFromTheFirstRelease",
	"TestOlderOperatorRefusesNewerState",
	"TestTwoOperatorsNeverActAtOnce",
	"TestMetricsFollowTheMachines",
}}

// shard is the part of the suite this process runs; n == 0 is all of it.
type shard struct {
	k, n int
	dir  string
}

// parseShard reads ANTHILL_E2E_SHARD and ANTHILL_E2E_SHARD_DIR.
func parseShard(spec, dir string) (shard, error) {
	if spec == "" {
		return shard{}, nil
	}
	ks, ns, ok := strings.Cut(spec, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || k < 1 || k > n {
		return shard{}, fmt.Errorf("%s=%q: want k/n with 1 <= k <= n", shardEnv, spec)
	}
	if n != len(laterShards)+1 {
		return shard{}, fmt.Errorf("%s=%q: the suite has %d shards", shardEnv, spec, len(laterShards)+1)
	}
	if dir == "" {
		return shard{}, fmt.Errorf("%s is set without %s (where the shards leave their RBAC usage)", shardEnv, shardDirEnv)
	}
	return shard{k: k, n: n, dir: dir}, nil
}

// namesPattern matches exactly the test names given.
func namesPattern(names []string) string {
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = regexp.QuoteMeta(n)
	}
	return "^(" + strings.Join(quoted, "|") + ")$"
}

// selectTests sets -test.skip (shard 1: the later shards' tests) or
// -test.run (a later shard: its own) to the shard's tests. The shards
// together are the whole suite, so a shard takes no -run or -skip of the
// caller's.
func (s shard) selectTests() error {
	if s.n == 0 {
		return nil
	}
	if flagValue("test.run") != "" || flagValue("test.skip") != "" {
		return fmt.Errorf("%s=%d/%d runs its share of the whole suite; it cannot take -run or -skip", shardEnv, s.k, s.n)
	}
	if s.k == 1 {
		var later []string
		for _, names := range laterShards {
			later = append(later, names...)
		}
		return flag.Set("test.skip", namesPattern(later))
	}
	return flag.Set("test.run", namesPattern(laterShards[s.k-2]))
}

func (s shard) usesFile(k int) string {
	return filepath.Join(s.dir, fmt.Sprintf("rbac-uses-%d-of-%d.json", k, s.n))
}

// allUses saves this shard's recorded requests and returns every shard's,
// merged, once all have saved theirs; nil while some have not (a later
// shard checks).
func (s shard) allUses(mine map[framework.Request]*framework.RequestUse) (map[framework.Request]*framework.RequestUse, error) {
	if err := framework.SaveUses(s.usesFile(s.k), mine); err != nil {
		return nil, err
	}
	all := map[framework.Request]*framework.RequestUse{}
	for k := 1; k <= s.n; k++ {
		uses, err := framework.LoadUses(s.usesFile(k))
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

// TestShardsNameTestsOfThisPackageOnce keeps laterShards true: each name
// is a test function of this package, named in one shard only, and a bad
// ANTHILL_E2E_SHARD is refused.
func TestShardsNameTestsOfThisPackageOnce(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]bool{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = true
			}
		}
	}
	seen := map[string]int{}
	for i, names := range laterShards {
		for _, n := range names {
			if !tests[n] {
				t.Errorf("shard %d names %s, which is no test of this package", i+2, n)
			}
			if j, dup := seen[n]; dup {
				t.Errorf("%s is in shards %d and %d", n, j, i+2)
			}
			seen[n] = i + 2
		}
	}
	n := len(laterShards) + 1
	for _, spec := range []string{"0/" + strconv.Itoa(n), strconv.Itoa(n+1) + "/" + strconv.Itoa(n), "1/" + strconv.Itoa(n+1), "1", "a/b"} {
		if _, err := parseShard(spec, t.TempDir()); err == nil {
			t.Errorf("%s=%s was accepted", shardEnv, spec)
		}
	}
	if _, err := parseShard("1/"+strconv.Itoa(n), ""); err == nil {
		t.Errorf("a shard without %s was accepted", shardDirEnv)
	}
	if s, err := parseShard("", ""); err != nil || s.n != 0 {
		t.Errorf("no shard: %+v, %v; want the whole suite", s, err)
	}
}
