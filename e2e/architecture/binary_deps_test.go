package architecture

import (
	"os/exec"
	"strings"
	"testing"
)

// shippedBinaries are the packages of the binaries users get: the one the
// operator image ships, and the kubectl plugin admins install.
var shippedBinaries = []string{module + "/cmd/anthill", module + "/cmd/kubectl-gluster"}

// devOnly lists the module packages (and those below them) that exist for
// tests and the sandbox: the control-plane launcher and the GD2 simulator.
// They belong in cmd/anthill-dev, never in the shipped binary.
var devOnly = []string{module + "/e2e", module + "/gd2/sim"}

func TestShippedBinaryLeavesOutTestCode(t *testing.T) {
	for _, shippedBinary := range shippedBinaries {
		t.Run(shippedBinary, func(t *testing.T) { checkLeavesOutTestCode(t, shippedBinary) })
	}
}

func checkLeavesOutTestCode(t *testing.T, shippedBinary string) {
	cmd := exec.Command("go", "list", "-deps", shippedBinary)
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", shippedBinary, err)
	}
	deps := strings.Fields(string(out))
	found := false
	for _, dep := range deps {
		found = found || dep == shippedBinary
		for _, d := range devOnly {
			if dep == d || strings.HasPrefix(dep, d+"/") {
				t.Errorf("%s depends on %s, which is for tests and the sandbox only (cmd/anthill-dev)", shippedBinary, dep)
			}
		}
	}
	if !found {
		t.Fatalf("go list -deps %s did not list the package itself:\n%s", shippedBinary, out)
	}
}
