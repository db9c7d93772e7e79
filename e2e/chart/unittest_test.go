//go:build e2e

package chart

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
)

// helmPlugins returns the helm plugin directory that holds the pinned
// helm-unittest, building it on first use (hack/build-helm-unittest.sh).
func helmPlugins(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "build-helm-unittest.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-helm-unittest.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// helmEnv is an environment in which helm sees only the given plugins and
// keeps its cache, configuration and data in dir, not the user's.
func helmEnv(plugins, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "HELM_") {
			env = append(env, kv)
		}
	}
	return append(env, "HELM_PLUGINS="+plugins, "HELM_CACHE_HOME="+filepath.Join(dir, "cache"),
		"HELM_CONFIG_HOME="+filepath.Join(dir, "config"), "HELM_DATA_HOME="+filepath.Join(dir, "data"))
}

// TestChartUnitTests runs the chart's helm-unittest suites
// (manifests/charts/anthill/tests), one case per value that changes what
// the chart renders, as a helm plugin of the pinned helm.
func TestChartUnitTests(t *testing.T) {
	h, plugins := helm(t), helmPlugins(t)
	tests, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "manifests/charts/anthill/tests/*_test.yaml"))
	if err != nil || len(tests) == 0 {
		t.Fatalf("no helm-unittest suites in manifests/charts/anthill/tests (%v)", err)
	}
	cmd := exec.Command(h, "unittest", "--strict", "--color=false", "manifests/charts/anthill")
	cmd.Dir = framework.RepoRoot()
	cmd.Env = helmEnv(plugins, t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("helm unittest: %v\n%s", err, out)
	}
	// helm-unittest prints a summary; make sure every suite ran.
	if want := fmt.Sprintf("Test Suites: %d passed, %d total", len(tests), len(tests)); !strings.Contains(string(out), want) {
		t.Fatalf("helm unittest ran other than the %d suites (want %q):\n%s", len(tests), want, out)
	}
	t.Logf("%s", out)
}
