package architecture

import (
	"encoding/json"
	"io"
	"os/exec"
	"strings"
	"testing"
)

// layering lists, for each package (by path below the module), the module
// packages and third-party modules its non-test files may import directly;
// the standard library is always allowed. It is DESIGN.md's dependency rule:
// fsm and gd2 are leaves, states builds on fsm, transitions on both, kube
// on those and gd2, and only cmd wires everything.
var layering = []struct {
	pkg     string
	allowed []string
}{
	{"fsm", []string{"github.com/looplab/fsm"}},
	{"states", []string{module + "/fsm"}},
	{"transitions", []string{module + "/fsm", module + "/states"}},
	{"gd2", []string{"github.com/golang-jwt/jwt/v5"}},
	// The simulator shares no code with the client it is checked against.
	{"gd2/sim", []string{"github.com/golang-jwt/jwt/v5", "github.com/google/uuid", "k8s.io/utils/clock"}},
	{"gd2/sim/kubelink", []string{module + "/gd2/sim", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go"}},
	{"manifests", nil},
	// kube/pki issues certificates: the standard library only.
	{"kube/pki", nil},
	// The alerts and recording rules, generated from Go: they name the
	// machines' states through their constants.
	{"kube/monitoring", []string{module + "/fsm", module + "/states", "sigs.k8s.io/yaml"}},
	// The kube rooms, in dependency order: engine (the one sync protocol)
	// knows no GD2 and no action; objects only name and build objects and
	// makes no API call; effects implement the actions; machines gather
	// and wire the specs; operator is the process.
	{"kube", nil},
	// The storage-version migration `kubectl gluster migrate-storage` runs:
	// API machinery only, no operator code.
	{"kube/storageversion", []string{"k8s.io/apiextensions-apiserver", "k8s.io/apimachinery", "k8s.io/client-go"}},
	{"kube/engine", []string{module + "/fsm", module + "/states", module + "/kube/apis",
		"github.com/prometheus/client_golang", "go.uber.org/zap", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/utils"}},
	{"kube/objects", []string{module + "/fsm", module + "/states", module + "/transitions", module + "/gd2", module + "/kube/apis", module + "/kube/pki",
		"k8s.io/api", "k8s.io/apimachinery", "k8s.io/utils"}},
	{"kube/effects", []string{module + "/fsm", module + "/states", module + "/transitions", module + "/gd2", module + "/kube/apis", module + "/kube/pki",
		module + "/kube/client", module + "/kube/engine", module + "/kube/objects",
		"go.uber.org/zap", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/utils"}},
	// The machine rooms: gather (what every machine reads: GD2's bricks and
	// volumes, ownership, failure policy, keys), machinestatus (what every
	// machine writes into its status: ledger, conditions, history, the
	// status writers) and wake (which informer updates wake which machine)
	// are shared; each machine has its own room over them and imports no
	// other machine's; kube/machines wires them all.
	{"kube/machines/gather", machineRoom()},
	{"kube/machines/machinestatus", machineRoom()},
	{"kube/machines/wake", machineRoom()},
	{"kube/machines/node", machineRoom(machinesShared...)},
	{"kube/machines/heal", machineRoom(machinesShared...)},
	{"kube/machines/cluster", machineRoom(machinesShared...)},
	{"kube/machines/upgrade", machineRoom(machinesShared...)},
	{"kube/machines/disruption", machineRoom(machinesShared...)},
	{"kube/machines", machineRoom(append(machinesShared, module+"/kube/machines/node", module+"/kube/machines/heal",
		module+"/kube/machines/cluster", module+"/kube/machines/upgrade", module+"/kube/machines/disruption")...)},
	{"kube/operator", []string{module + "/kube/client", module + "/kube/engine", module + "/kube/machines",
		"github.com/go-logr/zapr", "github.com/prometheus/client_golang", "go.uber.org/zap", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/klog"}},
}

// machinesShared are the shared machine rooms every machine room may import.
var machinesShared = []string{module + "/kube/machines/gather", module + "/kube/machines/machinestatus", module + "/kube/machines/wake"}

// machineRoom is what a machine room may import: the rooms below kube/machines,
// the given machine rooms, and the client libraries.
func machineRoom(rooms ...string) []string {
	return append([]string{module + "/fsm", module + "/states", module + "/transitions", module + "/gd2", module + "/kube/apis", module + "/kube/pki",
		module + "/kube/client", module + "/kube/engine", module + "/kube/objects", module + "/kube/effects",
		"github.com/prometheus/client_golang", "go.uber.org/zap", "k8s.io/api", "k8s.io/apimachinery", "k8s.io/client-go", "k8s.io/klog", "k8s.io/utils"}, rooms...)
}

// forbidden lists packages no one but cmd (and tests) may import: the
// commands, the test framework, and the shared test fixtures.
var forbidden = []string{module + "/cmd/", module + "/e2e", module + "/kube/internal/fixtures", module + "/kube/machines/internal/"}

type listedPackage struct {
	ImportPath string
	Imports    []string
	Standard   bool
}

func TestPackagesFollowTheDependencyRule(t *testing.T) {
	cmd := exec.Command("go", "list", "-json", "./...")
	cmd.Dir = repoRoot()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	pkgs := map[string]listedPackage{}
	for {
		var p listedPackage
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[p.ImportPath] = p
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found only %d packages", len(pkgs))
	}
	std := func(imp string) bool { return !strings.Contains(strings.SplitN(imp, "/", 2)[0], ".") }
	for _, l := range layering {
		p, ok := pkgs[module+"/"+l.pkg]
		if !ok {
			t.Errorf("package %s not found", l.pkg)
			continue
		}
		for _, imp := range p.Imports {
			if std(imp) {
				continue
			}
			ok := false
			for _, a := range l.allowed {
				ok = ok || imp == a || strings.HasPrefix(imp, a+"/")
			}
			if !ok {
				t.Errorf("%s imports %s, which the dependency rule does not allow", l.pkg, imp)
			}
		}
	}
	listed := map[string]bool{}
	for _, l := range layering {
		listed[module+"/"+l.pkg] = true
	}
	for path := range pkgs {
		// A new room under kube/machines names what it may import.
		if strings.HasPrefix(path, module+"/kube/machines") && !listed[path] && !testOnly(path) {
			t.Errorf("%s is not in the dependency rule (layering)", path)
		}
	}
	for path, p := range pkgs {
		if strings.HasPrefix(path, module+"/cmd/") || strings.HasPrefix(path, module+"/e2e") || testOnly(path) {
			continue
		}
		for _, imp := range p.Imports {
			for _, f := range forbidden {
				if strings.HasPrefix(imp, f) {
					t.Errorf("%s imports %s: only cmd wires everything", path, imp)
				}
			}
		}
	}
}

// testOnly reports whether path is a package of test fixtures, which only
// tests import and which may build on each other.
func testOnly(path string) bool {
	return path == module+"/kube/internal/fixtures" || strings.HasPrefix(path, module+"/kube/machines/internal/")
}
