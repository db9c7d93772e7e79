//go:build e2e

package e2e

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/e2e/framework"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/manifests"
)

// The end-to-end environment every test in this package shares: a control
// plane with three zones of two fake nodes and local disks on each, and the
// anthill operator binary. Each test runs its own operator on its own
// namespaces and its own GD2 simulators (test_env_e2e_test.go).
var (
	env     *framework.ControlPlane
	anthill versioned.Interface
	binPath string
	// operatorKubeconfig is the kubeconfig every test's operator runs
	// with: the operator's service account under the shipped RBAC.
	operatorKubeconfig string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	fail := func(format string, args ...any) int {
		fmt.Fprintf(os.Stderr, "e2e: "+format+"\n", args...)
		return 1
	}
	flag.Parse()
	if err := takeOverParallel(); err != nil {
		return fail("%v", err)
	}
	set, err := parseSet(os.Getenv(setEnv), os.Getenv(setDirEnv))
	if err != nil {
		return fail("%v", err)
	}
	currentSet = set
	cp, err := framework.Start(ctx, set.controlPlaneOptions(framework.Options{Zones: 3, NodesPerZone: 2, InstallCRDs: true, Log: os.Stderr,
		// ANTHILL_E2E_KEEP=1 keeps the control plane's directory (component
		// and operator logs) for a look after the run.
		KeepDir: os.Getenv("ANTHILL_E2E_KEEP") != "",
		// Every request of the operator's service account is recorded, so
		// that checkRBACUsage can prove every granted permission is used.
		AuditOperator: true}))
	if err != nil {
		return fail("start control plane: %v", err)
	}
	env = cp
	defer cp.Stop()
	// Local PVs are retained, never reused: every test's servers use up
	// their own, and the node-loss tests take a node's away. 40 of each
	// mode per fake node leave every zone room for the whole suite (the
	// suite used up 20 per node in zone 1 and 2 once it grew past 50 tests).
	if err := cp.CreateLocalStorage(ctx, 40, "100Gi"); err != nil {
		return fail("local storage: %v", err)
	}
	root := framework.RepoRoot()
	// make test builds the operator once for every set.
	if binPath, err = framework.OperatorBinary.Path(ctx); err != nil {
		return fail("%v", err)
	}
	if anthill, err = versioned.NewForConfig(cp.RestConfig); err != nil {
		return fail("%v", err)
	}
	if operatorKubeconfig, err = cp.InstallOperatorRBAC(ctx); err != nil {
		return fail("install the operator's RBAC: %v", err)
	}
	code := m.Run()
	if !checkRBACUsage(root, code, set) {
		code = 1
	}
	if code != 0 {
		if err := cp.Healthy(); err != nil {
			fmt.Fprintf(os.Stderr, "e2e: %v\n", err)
		}
	}
	return code
}

// rbacUsageEnv forces the RBAC usage check on a partial run (-run or
// -skip), where it is otherwise skipped because the tests left out would
// use some permissions: ANTHILL_E2E_RBAC_USAGE=1 checks and fails,
// ANTHILL_E2E_RBAC_USAGE=report only prints.
const rbacUsageEnv = "ANTHILL_E2E_RBAC_USAGE"

// checkRBACUsage compares the operator's recorded requests with the
// shipped RBAC (framework.CheckRBACUsage) after a whole run (every test's
// operator runs as the same service account), or after the second of the
// two sets that make test runs at once (sets_e2e_test.go), and reports
// whether the run may pass. It
// prints, per rule, the test that first needed each permission.
func checkRBACUsage(root string, code int, set runSet) bool {
	force := os.Getenv(rbacUsageEnv)
	partial := (flagValue("test.run") != "" || flagValue("test.skip") != "")
	if force == "" && (partial || code != 0) {
		return true // a partial or failed run leaves permissions unused
	}
	fail := func(format string, args ...any) bool {
		fmt.Fprintf(os.Stderr, "e2e: rbac usage: "+format+"\n", args...)
		return false
	}
	// The operator is still running; its last requests may still be in
	// the API server's audit batches. (run's context may have expired.)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := env.Audit.Flush(ctx, operatorKubeconfig); err != nil {
		return fail("%v", err)
	}
	perms, err := framework.OperatorPermissions(manifests.RBAC)
	if err != nil {
		return fail("%v", err)
	}
	doc, err := os.Open(filepath.Join(root, "docs", "rbac.md"))
	if err != nil {
		return fail("%v", err)
	}
	defer doc.Close()
	exempt, err := framework.ParseExemptions(doc)
	if err != nil {
		return fail("docs/rbac.md: %v", err)
	}
	uses := env.Audit.Uses()
	if set.name != "" && force == "" {
		if uses, err = set.allUses(uses); err != nil {
			return fail("%v", err)
		}
		if uses == nil {
			if set.name == setRealNode {
				fmt.Fprintf(os.Stderr, "e2e: rbac usage: the %s set's operators run in pods the audit does not follow; the other sets check theirs\n", set.name)
			} else {
				fmt.Fprintf(os.Stderr, "e2e: rbac usage: the %s set saved its requests; the last set to end checks them all\n", set.name)
			}
			return true
		}
	}
	rep := framework.CheckRBACUsage(perms, uses, framework.OperatorOnwardGrants(), exempt)
	rep.Write(os.Stderr)
	fmt.Fprintf(os.Stderr, "e2e: rbac usage: %d audit events received\n", env.Audit.Events())
	return rep.OK() || force == "report"
}

func flagValue(name string) string {
	if f := flag.Lookup(name); f != nil {
		return f.Value.String()
	}
	return ""
}

// keyMaterialLines returns the operator log lines that carry a PEM block
// or a private key's text: no certificate, key or bundle may ever be
// logged (TestTLS runs clusters with issued certificates in this run).
func keyMaterialLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		// PEM armour, or the base64 start of a P-256 key in PKCS#8 or
		// SEC 1 form (what the operator issues, and test CAs use).
		if strings.Contains(l, "-----BEGIN") || strings.Contains(l, "PRIVATE KEY") ||
			strings.Contains(l, "MIGHAgEAMBMGByqGSM49") || strings.Contains(l, "MHcCAQEE") {
			out = append(out, l)
		}
	}
	return out
}

// forbiddenLines returns the operator log lines that report a request
// denied by authorization. Other admission refusals also say "forbidden"
// (creating in a namespace being deleted, at the end of a test); RBAC's
// name the user.
func forbiddenLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, framework.RBACDenied) {
			out = append(out, l)
		}
	}
	return out
}
