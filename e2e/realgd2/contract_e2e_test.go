//go:build e2e

package realgd2

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/objects"
)

// helpFlagRE matches a flag's line in glusterd2's --help (pflag's usage).
var helpFlagRE = regexp.MustCompile(`(?m)^\s+(?:-\w, )?--([a-z0-9_-]+)`)

// gd2FlagsNotInContract are the flags of the built program the contract
// leaves out on purpose: --help and --version, and the Jaeger tracing
// flags (glusterd2@54ce5f6f: pkg/tracing), which anthill does not set.
var gd2FlagsNotInContract = []string{"help", "version", "jaeger-agent-endpoint", "jaeger-endpoint", "jaeger-sample-fraction", "jaeger-sampler"}

// TestGD2ContractIsTheBuiltProgramsOwn holds the GD2 server's contract
// (kube/objects.GD2Contract) to the glusterd2 this machine built from
// the pinned source, not to our reading of it: every flag the contract
// accepts is one the program's --help lists, every flag it lists is in
// the contract or named above, and every configuration key read from
// GD2_<KEY> that is no flag is a name the program holds. So a flag GD2
// does not have (--restauth, --usetls: configuration keys, not flags)
// cannot be in the data, and a key the program never reads is found (the
// reference sheet's etcdlogfile was one). It needs only the binary, no
// pool.
func TestGD2ContractIsTheBuiltProgramsOwn(t *testing.T) {
	dir, err := framework.RealGD2Bin()
	if err != nil {
		t.Skipf("no built glusterd2 here (%v): the contract is held to the sources only", err)
	}
	bin := filepath.Join(dir, "glusterd2")
	contract := objects.GD2Contract
	programFlags := checkFlags(t, bin, contract, "clientaddress", gd2FlagsNotInContract)
	program := readProgram(t, bin)
	for _, k := range objects.GD2FileKeys() {
		if slices.Contains(programFlags, k) {
			t.Errorf("configuration key %s is a flag of glusterd2: list it with the flag keys", k)
		}
		if !bytes.Contains(program, []byte(k)) {
			t.Errorf("configuration key %s is not a name glusterd2 holds: nothing in it can read GD2_%s", k, strings.ToUpper(strings.ReplaceAll(k, "-", "_")))
		}
	}
	// Every variable of the contract is GD2_<KEY> of a flag, a
	// configuration key, or an id (peer-id, cluster-id, read by gdctx
	// from the same prefix).
	keys := slices.Concat(objects.GD2FlagKeys(), objects.GD2FileKeys(), []string{"peer-id", "cluster-id"})
	for _, e := range contract.Env {
		key, ok := strings.CutPrefix(e, "GD2_")
		key = strings.ToLower(strings.ReplaceAll(key, "_", "-"))
		if !ok || !slices.Contains(keys, key) {
			t.Errorf("the contract's variable %s is no GD2_<KEY> of a key glusterd2 reads", e)
			continue
		}
		if !bytes.Contains(program, []byte(key)) {
			t.Errorf("the contract's variable %s names key %s, which glusterd2 does not hold", e, key)
		}
	}
}

// csiFlagsNotInContract are the flags of the built CSI driver the
// contract leaves out on purpose: --help, and glog's logging flags other
// than -v, whose defaults (to stderr) anthill keeps.
var csiFlagsNotInContract = []string{"help", "alsologtostderr", "log_backtrace_at", "log_dir", "logtostderr", "stderrthreshold", "vmodule"}

// TestCSIDriverContractIsTheBuiltProgramsOwn holds the GD2-era CSI file
// driver's contract (kube/objects.CSIFileContract) to the driver built
// from the source anthill's image pins (hack/build-csi-driver.sh): its
// flags are the program's --help, the variables it reads (CSI_ENDPOINT;
// SSL_CERT_FILE, read by Go's crypto/x509) and the driver name it
// registers are names the program holds.
func TestCSIDriverContractIsTheBuiltProgramsOwn(t *testing.T) {
	out, err := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "build-csi-driver.sh"), "path").Output()
	if err != nil {
		t.Skipf("no built CSI driver here (make csi-driver builds it): %v", err)
	}
	bin := strings.TrimSpace(string(out))
	contract := objects.CSIFileContract
	checkFlags(t, bin, contract, "resturl", csiFlagsNotInContract)
	program := readProgram(t, bin)
	for _, name := range append(slices.Clone(contract.Env), contract.DriverName) {
		if !bytes.Contains(program, []byte(name)) {
			t.Errorf("the contract names %s, which the driver does not hold", name)
		}
	}
}

// checkFlags runs bin --help and holds the flags it lists to contract's:
// every flag the contract accepts is listed, and every listed flag is in
// the contract or in notInContract. It returns the listed flags. known is
// a flag the usage must list, or it is not the usage expected.
func checkFlags(t *testing.T, bin string, contract objects.Contract, known string, notInContract []string) []string {
	t.Helper()
	// pflag and cobra print the usage on --help, some exiting non-zero;
	// the usage is what counts.
	help, _ := exec.Command(bin, "--help").CombinedOutput()
	var flags []string
	for _, m := range helpFlagRE.FindAllStringSubmatch(string(help), -1) {
		flags = append(flags, m[1])
	}
	if !slices.Contains(flags, known) {
		t.Fatalf("%s --help lists no --%s: not the usage expected:\n%s", bin, known, help)
	}
	for _, f := range contract.Flags {
		if !slices.Contains(flags, strings.TrimPrefix(f, "--")) {
			t.Errorf("the contract of %s accepts %s, which its --help does not list", contract.Component, f)
		}
	}
	for _, f := range flags {
		if !slices.Contains(contract.Flags, "--"+f) && !slices.Contains(notInContract, f) {
			t.Errorf("%s has --%s, which the contract neither accepts nor leaves out on purpose", contract.Component, f)
		}
	}
	return flags
}

// readProgram is bin's bytes.
func readProgram(t *testing.T, bin string) []byte {
	t.Helper()
	b, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
