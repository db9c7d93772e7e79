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
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
)

// tool returns the path of tools/olm, building it on first use.
func tool(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "olm.sh"), "tool")
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
	src := filepath.Join(framework.RepoRoot(), "manifests", "olm", "bundle")
	dst := filepath.Join(t.TempDir(), "bundle")
	if out, err := exec.Command("cp", "-r", src, dst).CombinedOutput(); err != nil {
		t.Fatalf("copy bundle: %v\n%s", err, out)
	}
	return dst
}

func TestBundlePassesTheOperatorFrameworkValidators(t *testing.T) {
	out, err := validate(t, filepath.Join(framework.RepoRoot(), "manifests", "olm", "bundle"))
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

// readYAML decodes the first document of the file at path (relative to
// the repository) into a generic value.
func readYAML(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(framework.RepoRoot(), path))
	if err != nil {
		t.Fatal(err)
	}
	if i := strings.Index(string(b), "\n---"); i >= 0 {
		b = b[:i]
	}
	var v map[string]any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// dig follows keys (string for maps, int for lists) into v.
func dig(v any, keys ...any) any {
	for _, k := range keys {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

const csvPath = "manifests/olm/bundle/manifests/anthill.clusterserviceversion.yaml"

// TestBundleShipsTheSameObjectsAsTheManifests: the CSV installs exactly the
// Deployment, ClusterRole and leader-election Role of manifests/, and the
// bundle's CRDs are the shipped ones, byte for byte.
func TestBundleShipsTheSameObjectsAsTheManifests(t *testing.T) {
	csv := readYAML(t, csvPath)
	strategy := dig(csv, "spec", "install", "spec")
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"the Deployment's spec", dig(strategy, "deployments", 0, "spec"), dig(readYAML(t, "manifests/operator/deployment.yaml"), "spec")},
		{"the ClusterRole's rules", dig(strategy, "clusterPermissions", 0, "rules"), dig(readYAML(t, "manifests/rbac/cluster_role.yaml"), "rules")},
		{"the leader-election Role's rules", dig(strategy, "permissions", 0, "rules"), dig(readYAML(t, "manifests/rbac/leader_election_role.yaml"), "rules")},
	} {
		if c.want == nil || !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("the CSV's copy of %s differs from manifests/:\n got %v\nwant %v", c.what, c.got, c.want)
		}
	}
	crds, err := filepath.Glob(filepath.Join(framework.RepoRoot(), "manifests", "crds", "*.yaml"))
	if err != nil || len(crds) == 0 {
		t.Fatalf("no CRDs in manifests/crds: %v", err)
	}
	for _, f := range crds {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		want, _ := os.ReadFile(f)
		got, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "olm", "bundle", "manifests", filepath.Base(f)))
		if err != nil || string(got) != string(want) {
			t.Errorf("the bundle's %s is not the shipped CRD (%v)", filepath.Base(f), err)
		}
	}
}

// TestDescriptorsNameRealFields: every spec and status descriptor of the
// CSV names a field of its CRD's schema, so the console's form and status
// panel show fields that exist.
func TestDescriptorsNameRealFields(t *testing.T) {
	csv := readYAML(t, csvPath)
	owned, _ := dig(csv, "spec", "customresourcedefinitions", "owned").([]any)
	if len(owned) == 0 {
		t.Fatal("the CSV owns no CRD")
	}
	for _, o := range owned {
		name, _ := dig(o, "name").(string)
		crd := readYAML(t, filepath.Join("manifests", "crds", "operator.gluster.org_"+strings.SplitN(name, ".", 2)[0]+".yaml"))
		schema := dig(crd, "spec", "versions", 0, "schema", "openAPIV3Schema")
		n := 0
		for _, part := range []string{"spec", "status"} {
			ds, _ := dig(o, part+"Descriptors").([]any)
			for _, d := range ds {
				n++
				path, _ := dig(d, "path").(string)
				node := dig(schema, "properties", part)
				for _, seg := range strings.Split(path, ".") {
					seg, list := strings.CutSuffix(seg, "[0]")
					node = dig(node, "properties", seg)
					if list {
						node = dig(node, "items")
					}
				}
				if node == nil {
					t.Errorf("%s %sDescriptor %q names no field of the CRD", name, part, path)
				}
				if desc, _ := dig(d, "description").(string); desc == "" {
					t.Errorf("%s %sDescriptor %q has no description", name, part, path)
				}
			}
		}
		if n == 0 {
			t.Errorf("%s has no descriptors", name)
		}
	}
}
