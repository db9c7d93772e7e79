package integration

import (
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/e2e/framework"
)

// TestKustomizeDefaultApplies runs what the README tells users to run,
// `kubectl apply -k manifests/default`, against the real API server, and
// checks the operator's Deployment, RBAC and CRDs were accepted.
func TestKustomizeDefaultApplies(t *testing.T) {
	kubectl, err := exec.LookPath("kubectl")
	if err != nil {
		t.Fatalf("kubectl is required on PATH: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectl, "--kubeconfig", env.Kubeconfig, "apply", "-k", filepath.Join(framework.RepoRoot(), "manifests", "default"))
	out, err := cmd.CombinedOutput()
	t.Logf("kubectl apply -k manifests/default:\n%s", out)
	if err != nil {
		t.Fatalf("kubectl apply failed: %v", err)
	}
	for _, want := range []string{"namespace/anthill-system", "deployment.apps/anthill-operator", "clusterrole.rbac.authorization.k8s.io/anthill-operator", "customresourcedefinition.apiextensions.k8s.io/glusterclusters.operator.gluster.org"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("kubectl output does not mention %s", want)
		}
	}
	dep, err := env.Client.AppsV1().Deployments("anthill-system").Get(ctx, "anthill-operator", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the operator Deployment was not created: %v", err)
	}
	if got := dep.Spec.Template.Spec.ServiceAccountName; got != "anthill-operator" {
		t.Errorf("Deployment runs as %q, want the anthill-operator service account", got)
	}
	if _, err := env.Client.RbacV1().ClusterRoleBindings().Get(ctx, "anthill-operator", metav1.GetOptions{}); err != nil {
		t.Errorf("ClusterRoleBinding missing: %v", err)
	}
	svc, err := env.Client.CoreV1().Services("anthill-system").Get(ctx, "anthill-operator-metrics", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the metrics Service was not created: %v", err)
	}
	if !labels.SelectorFromSet(svc.Spec.Selector).Matches(labels.Set(dep.Spec.Template.Labels)) || len(svc.Spec.Ports) != 1 || svc.Spec.Ports[0].TargetPort.String() != "metrics" {
		t.Errorf("the metrics Service does not reach the operator's metrics port: selector %v, ports %+v", svc.Spec.Selector, svc.Spec.Ports)
	}
	// The ServiceMonitor needs the Prometheus Operator's CRDs, which this
	// control plane lacks: check that it builds and selects the Service.
	mon, err := exec.CommandContext(ctx, kubectl, "kustomize", filepath.Join(framework.RepoRoot(), "manifests", "monitoring")).CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl kustomize manifests/monitoring: %v\n%s", err, mon)
	}
	type monitor struct {
		Kind string `json:"kind"`
		Spec struct {
			Selector  metav1.LabelSelector `json:"selector"`
			Endpoints []struct {
				Port string `json:"port"`
				Path string `json:"path"`
			} `json:"endpoints"`
		} `json:"spec"`
	}
	var sm monitor
	for _, doc := range strings.Split(string(mon), "\n---\n") {
		// Each document into an empty value: Unmarshal merges into what
		// an earlier one (the PodMonitor's selector) left.
		sm = monitor{}
		if err := yaml.Unmarshal([]byte(doc), &sm); err != nil {
			t.Fatal(err)
		}
		if sm.Kind == "ServiceMonitor" {
			break
		}
	}
	sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
	if err != nil || sm.Kind != "ServiceMonitor" || !sel.Matches(labels.Set(svc.Labels)) || len(sm.Spec.Endpoints) != 1 ||
		sm.Spec.Endpoints[0].Port != "metrics" || sm.Spec.Endpoints[0].Path != "/metrics" {
		t.Errorf("the ServiceMonitor does not scrape the metrics Service (selector error %v):\n%s", err, mon)
	}
}
