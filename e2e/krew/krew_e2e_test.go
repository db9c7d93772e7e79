//go:build e2e

package krew

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
)

// krewVersion pins krew and its manifest validator, built from the Go
// module proxy.
const krewVersion = "v0.4.3"

// TestKrewInstallsThePluginOffline builds the release archive and manifest
// (hack/krew-release.sh, real checksums), validates the manifest with
// krew's own validator, installs it offline with `kubectl krew install
// --manifest --archive` through the real kubectl, and runs the installed
// `kubectl gluster version`; then links the completion shim the archive
// ships, as the plugin's caveats say, and completes `kubectl gluster <TAB>`
// through kubectl itself.
func TestKrewInstallsThePluginOffline(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("no kubectl on PATH")
	}
	root := framework.RepoRoot()
	run := func(env []string, name string, args ...string) string {
		t.Helper()
		cmd := exec.Command(name, args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
		}
		return string(out)
	}

	tools := filepath.Join(t.TempDir(), "tools")
	if cache, err := os.UserCacheDir(); err == nil {
		tools = filepath.Join(cache, "anthill", "tools", "krew-"+krewVersion)
	}
	if _, err := os.Stat(filepath.Join(tools, "validate-krew-manifest")); err != nil {
		run([]string{"GOBIN=" + tools, "GOFLAGS=-mod=mod"}, "go", "install",
			"sigs.k8s.io/krew/cmd/krew@"+krewVersion, "sigs.k8s.io/krew/cmd/validate-krew-manifest@"+krewVersion)
	}

	dist := t.TempDir()
	const version = "v0.1.0"
	platform := runtime.GOOS + "/" + runtime.GOARCH
	run([]string{"PLATFORMS=" + platform}, "hack/krew-release.sh", version, dist)
	manifest := filepath.Join(dist, "gluster.yaml")
	archive := filepath.Join(dist, "kubectl-gluster_"+runtime.GOOS+"_"+runtime.GOARCH+".tar.gz")
	run(nil, filepath.Join(tools, "validate-krew-manifest"), "-manifest", manifest, "-skip-install")

	// kubectl finds krew as the plugin kubectl-krew; KREW_ROOT keeps the
	// install out of the user's ~/.krew.
	pluginDir, krewRoot := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(tools, "krew"), filepath.Join(pluginDir, "kubectl-krew")); err != nil {
		t.Fatal(err)
	}
	env := []string{"KREW_ROOT=" + krewRoot, "PATH=" + filepath.Join(krewRoot, "bin") + string(os.PathListSeparator) + pluginDir + string(os.PathListSeparator) + os.Getenv("PATH")}
	run(env, kubectl, "krew", "install", "--manifest="+manifest, "--archive="+archive)
	got := run(env, kubectl, "gluster", "version", "--client")
	if !strings.HasPrefix(got, "kubectl gluster "+version+" ") {
		t.Errorf("kubectl gluster version after the krew install = %q, want version %s", got, version)
	}

	// The archive ships the LICENSE and the completion shim beside the
	// plugin; krew installs them into its store.
	store := filepath.Join(krewRoot, "store", "gluster", version)
	for _, f := range []string{"LICENSE", "kubectl_complete-gluster"} {
		if _, err := os.Stat(filepath.Join(store, f)); err != nil {
			t.Errorf("the installed plugin lacks %s: %v", f, err)
		}
	}
	// kubectl 1.26 and later completes a plugin through
	// kubectl_complete-<plugin> on the PATH, once linked there.
	if err := os.Symlink(filepath.Join(store, "kubectl_complete-gluster"), filepath.Join(krewRoot, "bin", "kubectl_complete-gluster")); err != nil {
		t.Fatal(err)
	}
	completed := run(env, kubectl, "__complete", "gluster", "")
	for _, want := range []string{"status\t", "toolbox\t", "explain\t"} {
		if !strings.Contains(completed, want) {
			t.Errorf("kubectl __complete gluster \"\" lacks %q:\n%s", want, completed)
		}
	}
	completed = run(env, kubectl, "__complete", "gluster", "completion", "")
	if !strings.Contains(completed, "bash") || !strings.Contains(completed, "zsh") {
		t.Errorf("kubectl __complete gluster completion \"\" lacks the shells:\n%s", completed)
	}
	// A tampered archive does not install: the manifest's checksum is real.
	if err := os.WriteFile(archive, []byte("not the release"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kubectl, "krew", "install", "--manifest="+manifest, "--archive="+archive)
	cmd.Env = append(os.Environ(), "KREW_ROOT="+t.TempDir(), "PATH="+pluginDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	if out, err := cmd.CombinedOutput(); err == nil {
		t.Errorf("krew installed an archive that does not match the manifest's sha256:\n%s", out)
	}
}
