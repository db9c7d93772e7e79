package framework

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
	cmd := exec.Command(filepath.Join(RepoRoot(), "hack", "build-csi-driver.sh"), "path")
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
