package main

import (
	"fmt"
	"maps"
	"os"
	"regexp"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/kube/objects"
)

// The files the operator's manifests and docs are in, from this package.
const (
	kustomizeDeployment = "../../manifests/operator/deployment.yaml"
	chartDeployment     = "../../manifests/charts/anthill/templates/deployment.yaml"
	chartValues         = "../../manifests/charts/anthill/values.yaml"
	bundleCSV           = "../../manifests/olm/bundle/manifests/anthill.clusterserviceversion.yaml"
	installDoc          = "../../docs/install.md"
	namespacedKustomize = "../../manifests/namespaced/kustomization.yaml"
)

// operatorContainer is the operator container of the kustomize Deployment.
func operatorContainer(t *testing.T) (image string, args []string) {
	t.Helper()
	raw, err := os.ReadFile(kustomizeDeployment)
	if err != nil {
		t.Fatal(err)
	}
	var dep appsv1.Deployment
	if err := yaml.UnmarshalStrict(raw, &dep); err != nil {
		t.Fatal(err)
	}
	cs := dep.Spec.Template.Spec.Containers
	if len(cs) != 1 {
		t.Fatalf("the Deployment has %d containers, want the operator only", len(cs))
	}
	return cs[0].Image, cs[0].Args
}

// The operator's own contract: every argument the manifests hand the
// operator is a flag `anthill operator` defines, and the kustomize
// Deployment's arguments parse with its real flag set and pass its checks
// up to connecting. The chart renders the same arguments with default
// values (e2e/chart compares them); its template is checked by name here,
// so a value that is not the default cannot bring an unknown flag either.
func TestOperatorDeploymentArgsAreOperatorFlags(t *testing.T) {
	_, args := operatorContainer(t)
	var o operatorOptions
	fs := operatorFlags(&o)
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || fs.Lookup(name) == nil {
			t.Errorf("manifests/operator/deployment.yaml passes %q, which is no flag of anthill operator", a)
		}
	}
	// Kubernetes expands $(POD_NAMESPACE) from the env the Deployment sets.
	expanded := make([]string, len(args))
	for i, a := range args {
		expanded[i] = strings.ReplaceAll(a, "$(POD_NAMESPACE)", "anthill-system")
	}
	if err := fs.Parse(expanded); err != nil {
		t.Fatalf("anthill operator refuses the Deployment's args: %v", err)
	}
	if fs.NArg() > 0 {
		t.Errorf("the Deployment's args leave %v unparsed", fs.Args())
	}

	// manifests/namespaced adds its arguments by JSON patch.
	added := namespacedArgs(t)
	if len(added) == 0 {
		t.Error("manifests/namespaced adds no argument; it must name the watched namespaces")
	}
	for _, a := range added {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if !strings.HasPrefix(a, "--") || fs.Lookup(name) == nil {
			t.Errorf("manifests/namespaced adds %q, which is no flag of anthill operator", a)
		}
	}
	if err := operatorFlags(&operatorOptions{}).Parse(append(expanded, added...)); err != nil {
		t.Errorf("anthill operator refuses the namespaced install's args: %v", err)
	}

	raw, err := os.ReadFile(chartDeployment)
	if err != nil {
		t.Fatal(err)
	}
	names := chartFlagNames(t, string(raw))
	if len(names) == 0 {
		t.Fatal("found no args in the chart's Deployment template")
	}
	for _, name := range names {
		if fs.Lookup(name) == nil {
			t.Errorf("the chart's Deployment passes --%s, which is no flag of anthill operator", name)
		}
	}
	for name := range chartImages(t) {
		if fs.Lookup(imageFlag(name)) == nil {
			t.Errorf("the chart's images.%s becomes --%s, which is no flag of anthill operator", name, imageFlag(name))
		}
	}
}

// namespacedArgs are the arguments manifests/namespaced's JSON patches add
// to the operator container.
func namespacedArgs(t *testing.T) []string {
	t.Helper()
	raw, err := os.ReadFile(namespacedKustomize)
	if err != nil {
		t.Fatal(err)
	}
	var k struct {
		Patches []struct {
			Patch string `json:"patch"`
		} `json:"patches"`
	}
	if err := yaml.Unmarshal(raw, &k); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range k.Patches {
		var ops []struct {
			Op, Path string
			Value    any
		}
		if yaml.Unmarshal([]byte(p.Patch), &ops) != nil {
			continue // a strategic-merge patch, not a list of operations
		}
		for _, op := range ops {
			if strings.HasPrefix(op.Path, "/spec/template/spec/containers/0/args") {
				switch v := op.Value.(type) {
				case string:
					out = append(out, v)
				case []any:
					for _, a := range v {
						out = append(out, fmt.Sprint(a))
					}
				}
			}
		}
	}
	return out
}

// chartFlagNames are the flag names in the args list of the chart's
// Deployment template, literal or templated.
func chartFlagNames(t *testing.T, tmpl string) []string {
	t.Helper()
	_, after, ok := strings.Cut(tmpl, "\n          args:\n")
	if !ok {
		t.Fatal("the chart's Deployment template has no args")
	}
	var out []string
	flag := regexp.MustCompile(`^\s+- --([a-z0-9-]+)=`)
	for _, line := range strings.Split(after, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "{{") || strings.HasPrefix(trimmed, "- {{") {
			continue // the images range, checked through the values
		}
		if !strings.HasPrefix(trimmed, "- ") {
			break
		}
		m := flag.FindStringSubmatch(line)
		if m == nil {
			t.Errorf("chart arg %q is not --name=value", trimmed)
			continue
		}
		out = append(out, m[1])
	}
	return out
}

// chartImages are the chart's images values.
func chartImages(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(chartValues)
	if err != nil {
		t.Fatal(err)
	}
	var v struct {
		Images map[string]string `json:"images"`
	}
	if err := yaml.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.Images
}

// flagImages are the images kube/objects/images.go pins that the operator
// takes as flags: all but the GD2 image, which each cluster names.
func flagImages() map[string]string {
	out := map[string]string{}
	for _, n := range objects.DefaultImages.Named() {
		if n[0] != objects.NameGD2Image {
			out[n[0]] = n[1]
		}
	}
	return out
}

// Images in one place, listed everywhere: the operator Deployment's
// --<name>-image flags, the chart's images values, the OLM CSV's
// relatedImages and the table in docs/install.md all hold exactly the
// images kube/objects/images.go pins, and each flag defaults to its pin.
func TestImagesAreListedEverywhere(t *testing.T) {
	opImage, args := operatorContainer(t)
	want := flagImages()

	var o operatorOptions
	fs := operatorFlags(&o)
	for name, ref := range want {
		f := fs.Lookup(imageFlag(name))
		if f == nil || f.DefValue != ref {
			t.Errorf("flag --%s: %v, want one defaulting to %s", imageFlag(name), f, ref)
		}
	}

	deployment := map[string]string{}
	for _, a := range args {
		flag, ref, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if name, ok := strings.CutSuffix(flag, "-image"); ok {
			deployment[name] = ref
		}
	}
	if !maps.Equal(deployment, want) {
		t.Errorf("manifests/operator/deployment.yaml passes images %v, want %v (kube/objects/images.go)", deployment, want)
	}
	if got := chartImages(t); !maps.Equal(got, want) {
		t.Errorf("the chart's images are %v, want %v (kube/objects/images.go)", got, want)
	}

	all := map[string]string{"anthill": opImage}
	for _, n := range objects.DefaultImages.Named() {
		all[n[0]] = n[1]
	}
	raw, err := os.ReadFile(bundleCSV)
	if err != nil {
		t.Fatal(err)
	}
	var csv struct {
		Spec struct {
			RelatedImages []struct{ Name, Image string } `json:"relatedImages"`
		} `json:"spec"`
	}
	if err := yaml.Unmarshal(raw, &csv); err != nil {
		t.Fatal(err)
	}
	related := map[string]string{}
	for _, r := range csv.Spec.RelatedImages {
		related[r.Name] = r.Image
	}
	if !maps.Equal(related, all) {
		t.Errorf("the CSV's relatedImages are %v, want %v (make generate)", related, all)
	}

	doc, err := os.ReadFile(installDoc)
	if err != nil {
		t.Fatal(err)
	}
	table := docImages(t, string(doc))
	if !maps.Equal(table, all) {
		var rows strings.Builder
		for _, n := range append([][2]string{{"anthill", opImage}}, objects.DefaultImages.Named()...) {
			rows.WriteString("| `" + n[0] + "` | `" + n[1] + "` | … | … |\n")
		}
		t.Errorf("docs/install.md, Images anthill runs, lists %v; want the rows\n%s", table, rows.String())
	}
}

// docImages are the name and reference columns of the table under
// "## Images anthill runs".
func docImages(t *testing.T, doc string) map[string]string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Images anthill runs\n")
	if !ok {
		t.Fatal(`docs/install.md has no section "Images anthill runs"`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("^\\| `([^`]+)` \\| `([^`]+)` \\|")
	out := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		if m := row.FindStringSubmatch(line); m != nil {
			out[m[1]] = m[2]
		}
	}
	return out
}
