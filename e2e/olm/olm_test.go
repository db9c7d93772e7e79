//go:build e2e

// Package olm checks the OLM bundle in manifests/olm/bundle with the
// Operator Framework's validators (tools/olm, built by hack/olm.sh): the
// committed bundle passes, and a bundle with a broken CSV does not, so the
// check can fail.
package olm

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// tool returns the path of tools/olm, building it on first use.
func tool(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "hack", "olm.sh"), "tool")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("build tools/olm: %v", err)
	}
	return strings.TrimSpace(string(out))
}

func validate(t *testing.T, dir string) (string, error) {
	t.Helper()
	out, err := exec.Command(tool(t), "validate", dir).CombinedOutput()
	return string(out), err
}

// copyBundle copies the committed bundle into a temporary directory.
func copyBundle(t *testing.T) string {
	t.Helper()
	src := filepath.Join(repoRoot(t), "manifests", "olm", "bundle")
	dst := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy bundle: %v\n%s", err, out)
	}
	return dst
}

func TestBundlePassesTheOperatorFrameworkValidators(t *testing.T) {
	out, err := validate(t, filepath.Join(repoRoot(t), "manifests", "olm", "bundle"))
	if err != nil {
		t.Fatalf("the committed bundle fails validation: %v\n%s", err, out)
	}
	if strings.Contains(out, "Warning") {
		t.Errorf("the committed bundle has validation warnings:\n%s", out)
	}
}

func TestBrokenBundlesFailValidation(t *testing.T) {
	for _, c := range []struct {
		name, file, from, to, want string
	}{
		{"an owned CRD the bundle lacks", "anthill.clusterserviceversion.yaml", "kind: GlusterNode\n", "kind: GlusterThing\n", "not found in bundle"},
		{"a capability level that does not exist", "anthill.clusterserviceversion.yaml", "capabilities: Seamless Upgrades", "capabilities: Everything", "not a valid capabilities level"},
		{"a CSV version that is not semver", "anthill.clusterserviceversion.yaml", "\n  version: ", "\n  version: x", "unable to parse CSV"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyBundle(t)
			p := filepath.Join(dir, "manifests", c.file)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), c.from) {
				t.Fatalf("%s has no %q to break", c.file, c.from)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(b), c.from, c.to, 1)), 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := validate(t, dir)
			if err == nil {
				t.Fatalf("a bundle with %s passes validation:\n%s", c.name, out)
			}
			if !strings.Contains(out, c.want) {
				t.Errorf("validation output lacks %q:\n%s", c.want, out)
			}
		})
	}
}
