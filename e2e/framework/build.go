package framework

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// This file is the one place in the tests and their framework that runs
// `go build` (e2e/architecture holds it to that). make test builds every
// binary the tests run before the first package starts
// (hack/build-test-binaries.sh) and sets PrebuiltEnv, so a test there never
// gets here; a developer's `go test` by hand, or make bench and make chaos,
// which run no build step of their own, do.

// RaceEnv turns the race detector off in the operator binary the tests
// build when set to "0". The benchmarks do (make bench, make bench-scale):
// the detector multiplies the operator's memory and CPU, which they
// measure. The tests keep it on.
const RaceEnv = "ANTHILL_E2E_RACE"

// buildDir is where the binaries built here go: one place per user and
// checkout, so a developer's runs leave nothing behind in the temporary
// directory, and tests run at once from two checkouts (a clone for CI
// beside the working tree) never start each other's operator. Each build
// replaces its file by a rename, so a test process running the old one is
// not disturbed.
func buildDir() (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256([]byte(RepoRoot()))
	dir := filepath.Join(cache, "e2e", "bin", hex.EncodeToString(sum[:6]))
	return dir, os.MkdirAll(dir, 0o755)
}

// goBuild runs `go build -o out args...` in dir (the working directory
// when empty) with env added, writing a temporary file beside out that it
// renames to out.
func goBuild(ctx context.Context, dir, out string, env []string, args ...string) error {
	tmp := fmt.Sprintf("%s.tmp-%d", out, os.Getpid())
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", tmp}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	if b, err := cmd.CombinedOutput(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("go build %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return os.Rename(tmp, out)
}

// buildOperator builds ./cmd/anthill with the race detector unless RaceEnv
// says otherwise, so end-to-end tests run the operator as it ships.
func buildOperator(ctx context.Context) (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	out, args := filepath.Join(dir, "operator-race"), []string{"-race", "./cmd/anthill"}
	if os.Getenv(RaceEnv) == "0" {
		out, args = filepath.Join(dir, "operator"), args[1:]
	}
	return out, goBuild(ctx, RepoRoot(), out, nil, args...)
}

// buildCommand returns the build of ./cmd/name, into the one directory
// the three commands share.
func buildCommand(name string) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		dir, err := buildDir()
		if err != nil {
			return "", err
		}
		out := filepath.Join(dir, name)
		return out, goBuild(ctx, RepoRoot(), out, nil, "./cmd/"+name)
	}
}

// buildPause builds the real node's pause program static, in the working
// directory: the sandbox's real node (anthill-dev) runs it too, from the
// checkout.
func buildPause(ctx context.Context) (string, error) {
	dir, err := buildDir()
	if err != nil {
		return "", err
	}
	out := filepath.Join(dir, "realnodepause")
	return out, goBuild(ctx, "", out, []string{"CGO_ENABLED=0"}, "-trimpath", "-ldflags=-s -w", module+"/e2e/framework/realnodepause")
}

// buildRelease builds the anthill binary of r from the repository's
// history into the releases' cache, as hack/build-test-binaries.sh does,
// unless it is there already: the release commit's tree is exported with
// git archive and built without the race detector (a release only hands
// its work over to the operator under test, which is the code the
// detector is for). It needs the commit in the checkout's repository (a
// clone has it).
func buildRelease(ctx context.Context, r Release) (string, error) {
	cache, err := CacheDir()
	if err != nil {
		return "", err
	}
	releases := filepath.Join(cache, "releases")
	if p, err := releaseIn(releases, r); err == nil {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	src, err := os.MkdirTemp("", "anthill-release-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(src)
	if err := exportCommit(ctx, RepoRoot(), r, src); err != nil {
		return "", err
	}
	dir := filepath.Join(releases, r.Version)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	out := filepath.Join(dir, "anthill")
	if err := goBuild(ctx, src, out, nil, "./cmd/anthill"); err != nil {
		return "", fmt.Errorf("release %s: %w", r.Version, err)
	}
	return out, os.WriteFile(filepath.Join(dir, "commit"), []byte(r.Commit+"\n"), 0o644)
}
