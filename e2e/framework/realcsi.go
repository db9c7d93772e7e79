package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// RealCSIDriverEnv names the built GD2-era CSI file driver binary; make
// test sets it from hack/build-csi-driver.sh. Unset, the framework asks
// the script where it built it.
const RealCSIDriverEnv = "ANTHILL_CSI_DRIVER_BIN"

// RealCSIDriver returns the path of the built GD2-era CSI file driver
// (docs/testing.md, "The real CSI driver"), or why there is none: which
// command builds it, or why it cannot be built here. It never builds it.
func RealCSIDriver() (string, error) {
	if p := os.Getenv(RealCSIDriverEnv); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %v: run make csi-driver", RealCSIDriverEnv, p, err)
		}
		return p, nil
	}
	return builtPath("build-csi-driver.sh")
}

// builtPath asks a hack/build-*.sh script where it built what it builds
// (its path action), or why it has not: the reason it printed last.
func builtPath(script string) (string, error) {
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", script), "path")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		reason := strings.TrimSpace(stderr.String())
		if reason == "" {
			reason = err.Error()
		}
		return "", errors.New(reason)
	}
	return strings.TrimSpace(string(out)), nil
}

// StartLogged starts cmd with its output in the file log, kills it when
// the test ends, and prints the file when the test failed.
func StartLogged(t testing.TB, cmd *exec.Cmd, log, what string) {
	t.Helper()
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		_ = f.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log)
			t.Logf("%s log:\n%s", what, b)
		}
	})
}
