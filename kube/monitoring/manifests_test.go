package monitoring

import (
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A monitoring directory puts its objects where ObjectMeta says, with
// anthill's labels beside the extra ones, and the ServiceMonitor selects
// the operator's namespace wherever it is.
func TestManifestsPlaceTheObjects(t *testing.T) {
	files, err := DefaultOptions().Manifests(ObjectMeta{Namespace: "monitoring", Labels: map[string]string{"release": "kps"}}, "storage")
	if err != nil {
		t.Fatal(err)
	}
	var sm, pm, pr, k struct {
		Metadata struct {
			Namespace string            `json:"namespace"`
			Labels    map[string]string `json:"labels"`
		} `json:"metadata"`
		Namespace string   `json:"namespace"`
		Resources []string `json:"resources"`
		Spec      struct {
			NamespaceSelector struct {
				MatchNames []string `json:"matchNames"`
			} `json:"namespaceSelector"`
		} `json:"spec"`
	}
	for name, into := range map[string]any{ServiceMonitorFile: &sm, PodMonitorFile: &pm, PrometheusRuleFile: &pr, KustomizationFile: &k} {
		if err := yaml.Unmarshal(files[name], into); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, o := range map[string]struct {
		ns     string
		labels map[string]string
	}{ServiceMonitorFile: {sm.Metadata.Namespace, sm.Metadata.Labels}, PodMonitorFile: {pm.Metadata.Namespace, pm.Metadata.Labels}, PrometheusRuleFile: {pr.Metadata.Namespace, pr.Metadata.Labels}} {
		if o.ns != "monitoring" || o.labels["release"] != "kps" || o.labels["app.kubernetes.io/name"] != "anthill" {
			t.Errorf("%s: namespace %q labels %v", name, o.ns, o.labels)
		}
	}
	if got := sm.Spec.NamespaceSelector.MatchNames; len(got) != 1 || got[0] != "storage" {
		t.Errorf("the ServiceMonitor selects namespaces %v, want [storage]", got)
	}
	if k.Namespace != "monitoring" || strings.Join(k.Resources, ",") != "servicemonitor.yaml,podmonitor.yaml,prometheusrule.yaml,dashboards.yaml" {
		t.Errorf("kustomization namespace %q resources %v", k.Namespace, k.Resources)
	}
	if !strings.Contains(string(files[DashboardsFile]), "grafana_dashboard") {
		t.Error("no dashboards ConfigMap")
	}

	def, err := DefaultOptions().Manifests(ObjectMeta{}, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{ServiceMonitorFile, PodMonitorFile, PrometheusRuleFile, KustomizationFile} {
		if !strings.Contains(string(def[f]), "namespace: "+DefaultNamespace) {
			t.Errorf("%s does not default to %s:\n%s", f, DefaultNamespace, def[f])
		}
	}
	if _, err := (Options{}).Manifests(ObjectMeta{}, ""); err == nil {
		t.Error("invalid options rendered")
	}
}
