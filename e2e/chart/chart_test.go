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
	"runtime"
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

func repoRoot(t *testing.T) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// helm returns the path of the pinned helm, building it on first use.
func helm(t *testing.T) string {
	t.Helper()
	cmd := exec.Command(filepath.Join(repoRoot(t), "hack", "build-helm.sh"))
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hack/build-helm.sh: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	return lines[len(lines)-1]
}

func run(t *testing.T, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = repoRoot(t)
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

func TestChartLintsStrictly(t *testing.T) {
	run(t, helm(t), "lint", "--strict", "manifests/charts/anthill")
}

// TestChartDefaultsRenderManifestsDefault: with default values the chart
// renders the same objects, field for field, as `kubectl kustomize
// manifests/default` but the Namespace (helm install --create-namespace
// makes it), and with createNamespace=true exactly the same objects (the
// CRDs and rules in the chart are copies that make generate refreshes;
// this is what catches a stale copy).
func TestChartDefaultsRenderManifestsDefault(t *testing.T) {
	h := helm(t)
	kustomize := objects(t, run(t, "kubectl", "kustomize", "manifests/default"))
	t.Run("createNamespace=true renders manifests/default", func(t *testing.T) {
		sameObjects(t, render(t, h, "createNamespace=true"), kustomize)
	})
	t.Run("defaults render manifests/default but its Namespace", func(t *testing.T) {
		const ns = "Namespace/<nil>/anthill-system"
		if _, ok := kustomize[ns]; !ok {
			t.Fatalf("manifests/default has no %s", ns)
		}
		delete(kustomize, ns)
		sameObjects(t, render(t, h), kustomize)
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
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "VERSION"))
	if err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(raw))
	var chart struct{ Version, AppVersion string }
	c, err := os.ReadFile(filepath.Join(repoRoot(t), "manifests/charts/anthill/Chart.yaml"))
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
		{"rbac.create=false renders none of the operator's RBAC", []string{"rbac.create=false"}, func(t *testing.T, objs map[string]map[string]any) {
			for k := range objs {
				if strings.Contains(k, "Role") && strings.Contains(k, "anthill-") {
					t.Errorf("%s still rendered", k)
				}
			}
		}},
		{"rbac.personRoles=false drops the person roles", []string{"rbac.personRoles=false"}, func(t *testing.T, objs map[string]map[string]any) {
			for _, r := range []string{"gluster-view", "gluster-edit", "gluster-admin"} {
				if _, ok := objs["ClusterRole/<nil>/"+r]; ok {
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
// available, upgrades it to one replica, and uninstalls it: the CRDs stay
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
			if time.Now().After(deadline) {
				t.Fatalf("the operator Deployment never had %d available replicas: %+v, %v", replicas, d.Status, err)
			}
			time.Sleep(250 * time.Millisecond)
		}
	}

	helmRun("install", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--create-namespace", "--wait", "--timeout", "2m")
	available(2)
	helmRun("upgrade", "anthill", "manifests/charts/anthill", "--namespace", "anthill-system", "--set", "replicas=1", "--wait", "--timeout", "2m")
	available(1)
	helmRun("uninstall", "anthill", "--namespace", "anthill-system", "--wait", "--timeout", "2m")

	if _, err := cp.Client.AppsV1().Deployments("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("after uninstall the Deployment is still there (err %v)", err)
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
