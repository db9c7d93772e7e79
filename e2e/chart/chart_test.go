//go:build e2e

// Package chart tests the Helm chart in manifests/charts/anthill with the
// helm that hack/build-helm.sh builds: it lints strictly, its defaults
// render exactly manifests/default, and each value changes what it says.
package chart

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
)

// helm returns the path of the pinned helm, building it on first use.
func helm(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(framework.RepoRoot(), "hack", "build-helm.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-helm.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

// anthill returns the path of the anthill binary make test built from
// this tree (the helm test's `anthill check`, the rules generator).
func anthill(t *testing.T) string {
	t.Helper()
	return framework.AnthillBinary.For(t)
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = framework.RepoRoot()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s%s", filepath.Base(name), strings.Join(args, " "), err, out, stderr.Bytes())
	}
	return out
}

// objects decodes a multi-document YAML stream into objects keyed by
// kind/namespace/name, each normalised through JSON.
func objects(t *testing.T, raw []byte) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		j, err := yaml.YAMLToJSON(doc)
		if err != nil {
			t.Fatal(err)
		}
		var o map[string]any
		if err := json.Unmarshal(j, &o); err != nil {
			t.Fatal(err)
		}
		if o == nil {
			continue
		}
		meta, _ := o["metadata"].(map[string]any)
		key := fmt.Sprintf("%v/%v/%v", o["kind"], meta["namespace"], meta["name"])
		if _, dup := out[key]; dup {
			t.Fatalf("%s rendered twice", key)
		}
		out[key] = o
	}
}

func render(t *testing.T, h string, set ...string) map[string]map[string]any {
	t.Helper()
	args := []string{"template", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--include-crds"}
	for _, s := range set {
		args = append(args, "--set", s)
	}
	return objects(t, run(t, h, args...))
}

// helmLabels are the standard labels the chart adds to what it renders
// (templates/_helpers.tpl) beyond manifests/default's.
var helmLabels = []string{
	"app.kubernetes.io/instance", "app.kubernetes.io/version", "app.kubernetes.io/part-of",
	"app.kubernetes.io/managed-by", "helm.sh/chart",
}

// installed are the objects `helm install` keeps, as manifests/default
// has them: without the helm test hooks (created by `helm test` only) and
// without helmLabels on the objects and their pod templates.
func installed(objs map[string]map[string]any) map[string]map[string]any {
	out := map[string]map[string]any{}
	for k, o := range objs {
		meta, _ := o["metadata"].(map[string]any)
		if ann, _ := meta["annotations"].(map[string]any); ann["helm.sh/hook"] == "test" {
			continue
		}
		dropLabels(meta)
		if spec, _ := o["spec"].(map[string]any); spec != nil {
			if tmpl, _ := spec["template"].(map[string]any); tmpl != nil {
				dropLabels(tmpl["metadata"].(map[string]any))
			}
		}
		out[k] = o
	}
	return out
}

func dropLabels(meta map[string]any) {
	labels, _ := meta["labels"].(map[string]any)
	for _, l := range helmLabels {
		delete(labels, l)
	}
	if labels != nil && len(labels) == 0 {
		delete(meta, "labels")
	}
}

func TestChartLintsStrictly(t *testing.T) {
	run(t, helm(t), "lint", "--strict", "manifests/charts/anthill")
}

// TestChartDefaultsRenderManifestsDefault: with default values the chart
// renders the same objects, field for field, as `kubectl kustomize
// manifests/default` but the Namespace (helm install --create-namespace
// makes it), and with createNamespace=true exactly the same objects (the
// CRDs and rules in the chart are copies that make generate refreshes;
// this is what catches a stale copy), the chart's standard labels and its
// helm test hooks aside.
func TestChartDefaultsRenderManifestsDefault(t *testing.T) {
	h := helm(t)
	kustomize := objects(t, run(t, "kubectl", "kustomize", "manifests/default"))
	t.Run("createNamespace=true renders manifests/default", func(t *testing.T) {
		sameObjects(t, installed(render(t, h, "createNamespace=true")), installed(kustomize))
	})
	t.Run("defaults render manifests/default but its Namespace", func(t *testing.T) {
		const ns = "Namespace/<nil>/anthill-system"
		if _, ok := kustomize[ns]; !ok {
			t.Fatalf("manifests/default has no %s", ns)
		}
		delete(kustomize, ns)
		sameObjects(t, installed(render(t, h)), installed(kustomize))
	})
}

func sameObjects(t *testing.T, chart, kustomize map[string]map[string]any) {
	t.Helper()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range kustomize {
			if !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		c, ok := chart[k]
		if !ok {
			t.Errorf("manifests/default has %s; the chart does not render it", k)
			continue
		}
		if !reflect.DeepEqual(c, kustomize[k]) {
			cj, _ := json.MarshalIndent(c, "", " ")
			kj, _ := json.MarshalIndent(kustomize[k], "", " ")
			t.Errorf("%s differs (run make generate if the CRDs or rules changed)\nchart:\n%s\nmanifests/default:\n%s", k, cj, kj)
		}
	}
	for k := range chart {
		if _, ok := kustomize[k]; !ok {
			t.Errorf("the chart renders %s, which manifests/default does not have", k)
		}
	}
}

// TestChartVersionIsTheProjectVersion: the chart's appVersion (the image
// tag it defaults to) and version follow VERSION.
func TestChartVersionIsTheProjectVersion(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	var chart struct{ Version, AppVersion string }
	c, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests/charts/anthill/Chart.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(c, &chart); err != nil {
		t.Fatal(err)
	}
	if chart.AppVersion != version || "v"+chart.Version != version {
		t.Errorf("Chart.yaml version %q appVersion %q, want %q and %q (VERSION)", chart.Version, chart.AppVersion, strings.TrimPrefix(version, "v"), version)
	}
}

// TestChartValues: each value changes the objects it documents, and only
// those.
func TestChartValues(t *testing.T) {
	h := helm(t)
	base := render(t, h)
	const dep = "Deployment/anthill-system/anthill-operator"
	container := func(objs map[string]map[string]any) map[string]any {
		spec := objs[dep]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
		return spec["containers"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name  string
		set   []string
		check func(t *testing.T, objs map[string]map[string]any)
	}{
		{"image.repository and image.tag set the operator image", []string{"image.repository=registry.example/anthill", "image.tag=v9.9.9"}, func(t *testing.T, objs map[string]map[string]any) {
			if got := container(objs)["image"]; got != "registry.example/anthill:v9.9.9" {
				t.Errorf("image %v", got)
			}
		}},
		{"replicas sets the Deployment's replicas", []string{"replicas=1"}, func(t *testing.T, objs map[string]map[string]any) {
			if got := objs[dep]["spec"].(map[string]any)["replicas"]; got != float64(1) {
				t.Errorf("replicas %v", got)
			}
		}},
		{"leaderElection.enabled=false drops the Role and the flag", []string{"leaderElection.enabled=false", "replicas=1"}, func(t *testing.T, objs map[string]map[string]any) {
			if _, ok := objs["Role/anthill-system/anthill-leader-election"]; ok {
				t.Error("the leader-election Role is still rendered")
			}
			if args := container(objs)["args"].([]any); args[0] != "--leader-elect=false" {
				t.Errorf("args %v", args)
			}
		}},
		{"rbac.create=false renders none of the operator's RBAC (the helm test's own Role is test.enabled's)", []string{"rbac.create=false"}, func(t *testing.T, objs map[string]map[string]any) {
			for k := range installed(objs) {
				// Kind/namespace/name: the operator's are named anthill-*,
				// the person roles (rbac.personRoles) gluster-*.
				if name := k[strings.LastIndex(k, "/")+1:]; strings.Contains(k, "Role") && strings.HasPrefix(name, "anthill-") {
					t.Errorf("%s still rendered", k)
				}
			}
		}},
		{"rbac.personRoles=false drops the person roles", []string{"rbac.personRoles=false"}, func(t *testing.T, objs map[string]map[string]any) {
			for _, r := range []string{"ClusterRole/<nil>/gluster-view", "ClusterRole/<nil>/gluster-edit", "ClusterRole/<nil>/gluster-admin",
				"ClusterRole/<nil>/gluster-toolbox", "Role/anthill-system/gluster-operator-health"} {
				if _, ok := objs[r]; ok {
					t.Errorf("%s still rendered", r)
				}
			}
		}},
		{"createNamespace=true renders the Namespace", []string{"createNamespace=true"}, func(t *testing.T, objs map[string]map[string]any) {
			if _, ok := objs["Namespace/<nil>/anthill-system"]; !ok {
				t.Error("no Namespace rendered")
			}
		}},
		{"images.<name> sets the operator's --<name>-image flag", []string{"images.etcd=mirror.example/etcd:v3.5.17"}, func(t *testing.T, objs map[string]map[string]any) {
			args := container(objs)["args"].([]any)
			if !slices.Contains(args, any("--etcd-image=mirror.example/etcd:v3.5.17")) {
				t.Errorf("args %v", args)
			}
		}},
		{"resources sets the container's resources", []string{"resources.limits.memory=1Gi"}, func(t *testing.T, objs map[string]map[string]any) {
			if got := container(objs)["resources"].(map[string]any)["limits"].(map[string]any)["memory"]; got != "1Gi" {
				t.Errorf("memory limit %v", got)
			}
		}},
		{"extraArgs are passed after the chart's flags", []string{"extraArgs={--log-level=debug}"}, func(t *testing.T, objs map[string]map[string]any) {
			args := container(objs)["args"].([]any)
			if args[len(args)-1] != "--log-level=debug" {
				t.Errorf("args %v", args)
			}
		}},
		{"affinity and imagePullSecrets reach the pod", []string{"imagePullSecrets[0].name=regcred", "affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight=1",
			"affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey=kubernetes.io/hostname"}, func(t *testing.T, objs map[string]map[string]any) {
			spec := objs[dep]["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)
			if spec["imagePullSecrets"] == nil || spec["affinity"] == nil {
				t.Errorf("pod spec %v", spec)
			}
		}},
		{"monitoring renders a ServiceMonitor and a PrometheusRule where it says, with its labels", []string{"monitoring.serviceMonitor.enabled=true", "monitoring.prometheusRule.enabled=true",
			"monitoring.namespace=monitoring", "monitoring.labels.release=kube-prometheus-stack"}, func(t *testing.T, objs map[string]map[string]any) {
			for _, k := range []string{"ServiceMonitor/monitoring/anthill-operator", "PrometheusRule/monitoring/anthill"} {
				o, ok := objs[k]
				if !ok {
					t.Errorf("%s not rendered", k)
					continue
				}
				if l := o["metadata"].(map[string]any)["labels"].(map[string]any); l["release"] != "kube-prometheus-stack" {
					t.Errorf("%s labels %v", k, l)
				}
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := render(t, h, tc.set...)
			if reflect.DeepEqual(objs, base) {
				t.Fatal("the value changed nothing")
			}
			tc.check(t, objs)
		})
	}
}

// TestChartInstallUpgradeUninstall installs the chart with helm on a real
// control plane of its own, waits for the operator Deployment to be
// available (and `anthill check`, the helm test's command, to pass),
// upgrades it to one replica, and uninstalls it (the check then fails): the CRDs stay
// (Helm never deletes what its crds/ directory installed) and everything
// else goes. kwok runs the pods, not the image: "available" here means
// scheduled onto a fake node and reported Ready by kwok.
func TestChartInstallUpgradeUninstall(t *testing.T) {
	h := helm(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := framework.Start(ctx, framework.Options{Zones: 1, NodesPerZone: 2})
	if err != nil {
		t.Fatalf("start the control plane: %v", err)
	}
	t.Cleanup(cp.Stop)
	helmRun := func(args ...string) {
		t.Helper()
		run(t, h, append(args, "--kubeconfig", cp.Kubeconfig)...)
	}
	available := func(replicas int32) {
		t.Helper()
		deadline := time.Now().Add(2 * time.Minute)
		for {
			d, err := cp.Client.AppsV1().Deployments("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{})
			if err == nil && d.Status.ObservedGeneration == d.Generation && d.Status.AvailableReplicas == replicas && d.Status.Replicas == replicas {
				return
			}
			// A Deployment gets its status from the controller manager:
			// if a component of the control plane is gone, say which.
			if herr := cp.Healthy(); herr != nil {
				t.Fatalf("the operator Deployment has %+v, and the control plane is not whole: %v", d.Status, herr)
			}
			if time.Now().After(deadline) {
				t.Fatalf("the operator Deployment never had %d available replicas: %+v, %v", replicas, d.Status, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	// check is what the chart's helm test pod runs, `anthill check`, here
	// from the test with the control plane's kubeconfig.
	check := func() (string, error) {
		t.Helper()
		cmd := exec.Command(anthill(t), "check", "--kubeconfig", cp.Kubeconfig, "--namespace", "anthill-system")
		cmd.Dir = framework.RepoRoot()
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	helmRun("install", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--create-namespace", "--wait", "--timeout", "2m")
	available(2)
	if out, err := check(); err != nil || !strings.Contains(out, "glusterclusters, glusternodes served") {
		t.Errorf("anthill check after install: %v\n%s", err, out)
	}
	helmRun("upgrade", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--set", "replicas=1", "--wait", "--timeout", "2m")
	available(1)
	helmRun("uninstall", "anthill", "--namespace", "anthill-system", "--wait", "--timeout", "2m")

	if _, err := cp.Client.AppsV1().Deployments("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after uninstall the Deployment is still there (err %v)", err)
	}
	if out, err := check(); err == nil || !strings.Contains(out, "anthill-system/anthill-operator does not exist") {
		t.Errorf("anthill check after uninstall passed or said something else (%v):\n%s", err, out)
	}
	if _, err := cp.Client.RbacV1().ClusterRoles().Get(ctx, "anthill-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after uninstall the ClusterRole is still there (err %v)", err)
	}
	rc, err := clientcmd.BuildConfigFromFlags("", cp.Kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	for _, crd := range []string{"glusterclusters.operator.gluster.org", "glusternodes.operator.gluster.org"} {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, crd, metav1.GetOptions{}); err != nil {
			t.Errorf("the CRD %s did not survive uninstall: %v", crd, err)
		}
	}
}

// TestChartSchemaRefuses: values.schema.json (and the leader-election
// guard) refuse what would render a broken or unsafe install, each with a
// message naming the value.
func TestChartSchemaRefuses(t *testing.T) {
	h := helm(t)
	for _, tc := range []struct{ name, set, want string }{
		{"a replicas that is not a number", "replicas=two", "/replicas"},
		{"an unknown key", "replica=2", "additional properties 'replica' not allowed"},
		{"an unknown key under monitoring", "monitoring.prometheusRule.thresholds.capacityHigh=70", "capacityHigh"},
		{"two replicas without leader election", "leaderElection.enabled=false", "/replicas"},
		{"a percentage above 100", "monitoring.prometheusRule.thresholds.capacityHighPercent=120", "capacityHighPercent"},
		{"an image name the operator has no flag for", "images.gd2=example/gd2:v1", "'gd2' not allowed"},
		{"an extra argument that is not a flag", "extraArgs={debug}", "/extraArgs/0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(h, "template", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--set", tc.set)
			cmd.Dir = framework.RepoRoot()
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("--set %s rendered", tc.set)
			}
			if !strings.Contains(string(out), tc.want) {
				t.Errorf("--set %s failed without naming %q:\n%s", tc.set, tc.want, out)
			}
		})
	}
}

// TestChartPrometheusRuleIsTheGenerated: the chart's PrometheusRule holds
// the rules `anthill monitoring` generates, at the defaults
// (manifests/monitoring/prometheusrule.yaml) and with changed values
// (the same options as flags).
func TestChartPrometheusRuleIsTheGenerated(t *testing.T) {
	h := helm(t)
	spec := func(objs map[string]map[string]any) any {
		t.Helper()
		for k, o := range objs {
			if strings.HasPrefix(k, "PrometheusRule/") {
				return o["spec"]
			}
		}
		t.Fatal("no PrometheusRule")
		return nil
	}
	generated := func(args ...string) any {
		t.Helper()
		return spec(objects(t, run(t, anthill(t), append([]string{"monitoring", "--format", "prometheusrule"}, args...)...)))
	}
	if got, want := spec(render(t, h, "monitoring.prometheusRule.enabled=true")), generated(); !reflect.DeepEqual(got, want) {
		t.Errorf("with default values the chart's rules are not manifests/monitoring's:\nchart %v\ngenerated %v", got, want)
	}
	got := spec(render(t, h, "monitoring.prometheusRule.enabled=true", "monitoring.prometheusRule.thresholds.capacityHighPercent=72",
		"monitoring.prometheusRule.thresholds.certificateExpiryDays=7", "monitoring.prometheusRule.thresholds.reconcileErrorsPerMinute=10",
		"monitoring.prometheusRule.runbookBaseURL=https://wiki.example/rb/",
		"monitoring.prometheusRule.operatorJob=ops/anthill"))
	want := generated("--threshold", "capacityHighPercent=72", "--threshold", "certificateExpiryDays=7", "--threshold", "reconcileErrorsPerMinute=10",
		"--runbook-base-url", "https://wiki.example/rb/", "--operator-job", "ops/anthill")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("with changed values the chart's rules are not the generator's with the same options:\nchart %v\ngenerated %v", got, want)
	}
}

// TestChartDashboardsAreManifestsMonitorings: the chart's dashboards
// ConfigMap holds the same dashboards as manifests/monitoring's.
func TestChartDashboardsAreManifestsMonitorings(t *testing.T) {
	h := helm(t)
	chart := render(t, h, "monitoring.dashboards.enabled=true")["ConfigMap/anthill-system/anthill-dashboards"]
	raw, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "manifests", "monitoring", "dashboards.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var kustomize map[string]map[string]any
	for _, o := range objects(t, raw) {
		kustomize = map[string]map[string]any{"": o}
	}
	if chart == nil {
		t.Fatal("the chart renders no anthill-dashboards ConfigMap")
	}
	if got, want := chart["data"], kustomize[""]["data"]; !reflect.DeepEqual(got, want) {
		t.Errorf("the chart's dashboards differ from manifests/monitoring/dashboards.yaml (run make generate)")
	}
}

// TestChartHelmTestRunsTheImagesBinary: the helm test pod runs anthill
// where the operator image has it (tools/image), from the operator image.
func TestChartHelmTestRunsTheImagesBinary(t *testing.T) {
	src, err := os.ReadFile(filepath.Join(framework.RepoRoot(), "tools", "image", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`binPath\s*=\s*"([^"]+)"`).FindSubmatch(src)
	if m == nil {
		t.Fatal("tools/image/main.go no longer says binPath = \"...\"")
	}
	objs := render(t, helm(t), "image.tag=v9.9.9")
	pod := objs["Pod/anthill-system/anthill-test"]
	if pod == nil {
		t.Fatal("no helm test pod rendered")
	}
	c := pod["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)
	if cmd := c["command"].([]any); cmd[0] != "/"+string(m[1]) || cmd[1] != "check" {
		t.Errorf("the helm test runs %v; the image has anthill at /%s", cmd, m[1])
	}
	if c["image"] != "quay.io/gluster/anthill:v9.9.9" {
		t.Errorf("the helm test runs image %v, not the operator's", c["image"])
	}
}
