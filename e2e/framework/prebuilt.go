package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// PrebuiltEnv, set by make test (hack/test.sh), says every binary the
// tests run was built before the first package started: a Binary whose
// variable is unset then fails instead of being built. A cold build inside
// a test, while every package compiles at once, outlasted the tests' own
// limits (issue 48); make test must never build there.
const PrebuiltEnv = "ANTHILL_E2E_PREBUILT"

// buildScript is what builds the binaries before the tests.
const buildScript = "make test (hack/test.sh, which runs hack/build-test-binaries.sh)"

// Binary is a program the tests run. make test builds each once, before
// the first package starts (hack/build-test-binaries.sh), and names it in
// the binary's variable; a developer's `go test` by hand, without the
// variable, builds it here once per test process (build.go).
type Binary struct {
	// Env is the variable naming the binary (for releases, the
	// directory that holds them).
	Env string
	// what names the binary in messages.
	what string
	// prebuilt is the binary's path given the variable's value.
	prebuilt func(value string) (string, error)
	// build builds it when the variable is unset.
	build func(ctx context.Context) (string, error)
}

// The binaries the tests run. hack/build-test-binaries.sh builds them
// all and prints these variables.
var (
	// OperatorBinary is anthill with the race detector (unless RaceEnv
	// says otherwise), the operator every e2e test runs.
	OperatorBinary = command("ANTHILL_E2E_OPERATOR", "the race-enabled operator (./cmd/anthill -race)", buildOperator)
	// AnthillBinary, KubectlGlusterBinary and AnthillDevBinary are
	// cmd/'s three programs, without the race detector, side by side in
	// one directory as make build lays out bin/ (anthill-dev finds the
	// anthill next to it).
	AnthillBinary        = command("ANTHILL_E2E_ANTHILL", "anthill", buildCommand("anthill"))
	KubectlGlusterBinary = command("ANTHILL_E2E_KUBECTL_GLUSTER", "kubectl-gluster", buildCommand("kubectl-gluster"))
	AnthillDevBinary     = command("ANTHILL_E2E_ANTHILL_DEV", "anthill-dev", buildCommand("anthill-dev"))
	// PauseBinary is the real node's sandbox program (realnodepause),
	// static.
	PauseBinary = command("ANTHILL_E2E_PAUSE", "realnodepause", buildPause)
)

// ReleasesEnv names the directory holding the old releases' binaries,
// <dir>/<version>/anthill, each beside a file "commit" naming the commit it
// was built from: ${XDG_CACHE_HOME:-~/.cache}/anthill/releases, reused from
// run to run.
const ReleasesEnv = "ANTHILL_E2E_RELEASES"

// ReleaseBinary is the anthill binary of r, built from its commit without
// the race detector.
func ReleaseBinary(r Release) Binary {
	return Binary{
		Env:  ReleasesEnv,
		what: "release " + r.Version,
		prebuilt: func(dir string) (string, error) {
			return releaseIn(dir, r)
		},
		build: func(ctx context.Context) (string, error) {
			return buildRelease(ctx, r)
		},
	}
}

// releaseIn is r's binary in dir, when it was built from r's commit.
func releaseIn(dir string, r Release) (string, error) {
	stamp, err := os.ReadFile(filepath.Join(dir, r.Version, "commit"))
	if err != nil {
		return "", err
	}
	if got := strings.TrimSpace(string(stamp)); got != r.Commit {
		return "", fmt.Errorf("%s was built from commit %s, CHANGELOG.md records %s", filepath.Join(dir, r.Version), got, r.Commit)
	}
	return filepath.Join(dir, r.Version, "anthill"), nil
}

func command(env, what string, build func(context.Context) (string, error)) Binary {
	return Binary{Env: env, what: what, prebuilt: func(v string) (string, error) { return v, nil }, build: build}
}

// Path is the binary's path: the one make test built, or, when its
// variable is unset outside make test, one built now (once per process).
func (b Binary) Path(ctx context.Context) (string, error) {
	v := os.Getenv(b.Env)
	if v == "" {
		if os.Getenv(PrebuiltEnv) != "" {
			return "", fmt.Errorf("%s: %s is not set; %s builds it before the tests and sets it", b.what, b.Env, buildScript)
		}
		return builtOnce(ctx, b)
	}
	p, err := b.prebuilt(v)
	if err == nil {
		var st os.FileInfo
		if st, err = os.Stat(p); err == nil && st.IsDir() {
			err = fmt.Errorf("%s is a directory", p)
		}
	}
	if err != nil {
		return "", fmt.Errorf("%s (%s=%s): %v; %s builds it", b.what, b.Env, v, err, buildScript)
	}
	return p, nil
}

// For is Path for a test, which fails when the binary is missing.
func (b Binary) For(t TB) string {
	t.Helper()
	p, err := b.Path(context.Background())
	if err != nil {
		t.Fatalf("%v", err)
	}
	return p
}

// built holds the binaries this process built, by what they are.
var (
	builtMu sync.Mutex
	built   = map[string]string{}
)

// builtOnce builds b unless this process already has.
func builtOnce(ctx context.Context, b Binary) (string, error) {
	builtMu.Lock()
	defer builtMu.Unlock()
	key := b.what
	if b.Env == OperatorBinary.Env {
		key += " race=" + os.Getenv(RaceEnv)
	}
	if p, ok := built[key]; ok {
		return p, nil
	}
	p, err := b.build(ctx)
	if err != nil {
		return "", fmt.Errorf("%s (%s unset, so the test builds it; %s builds it once beforehand): %w", b.what, b.Env, buildScript, err)
	}
	built[key] = p
	return p, nil
}
