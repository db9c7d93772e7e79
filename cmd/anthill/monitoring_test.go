package main

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/machines"
	"github.com/gluster/anthill/kube/machines/heal"
	"github.com/gluster/anthill/kube/monitoring"
)

// TestRulesUseOnlyExportedMetrics: every anthill_ metric an alert or
// recording rule reads is one the operator registers.
func TestRulesUseOnlyExportedMetrics(t *testing.T) {
	ch := make(chan *prometheus.Desc, 256)
	engine.NewMetrics().Registry.Describe(ch)
	machines.NewStateCollector(nil, nil).Describe(ch)
	heal.NewVolumeMetrics().Describe(ch)
	machines.NewCertificateCollector(nil).Describe(ch)
	close(ch)
	fqName := regexp.MustCompile(`fqName: "([^"]+)"`)
	exported := map[string]bool{}
	for d := range ch {
		if m := fqName.FindStringSubmatch(d.String()); m != nil {
			exported[m[1]] = true
		}
	}
	used := regexp.MustCompile(`\banthill_[a-z0-9_]+`)
	n := 0
	for _, g := range monitoring.DefaultOptions().Groups() {
		var exprs []string
		for _, r := range g.Records {
			exprs = append(exprs, r.Expr)
		}
		for _, a := range g.Alerts {
			exprs = append(exprs, a.Expr)
		}
		for _, e := range exprs {
			for _, m := range used.FindAllString(e, -1) {
				n++
				if !exported[m] {
					t.Errorf("a rule reads %s, which the operator does not export (expr %q)", m, e)
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("no rule reads an anthill metric")
	}

	// The dashboards read exported metrics (a histogram's _bucket series
	// included) and recording rules anthill defines.
	records := map[string]bool{}
	for _, g := range monitoring.DefaultOptions().Groups() {
		for _, r := range g.Records {
			records[r.Name] = true
		}
	}
	recorded := regexp.MustCompile(`\banthill:[a-z0-9_:]+`)
	for _, d := range monitoring.Dashboards() {
		for _, p := range d.Panels {
			for _, q := range p.Queries {
				for _, m := range used.FindAllString(q.Expr, -1) {
					if !exported[strings.TrimSuffix(m, "_bucket")] {
						t.Errorf("dashboard %s panel %q reads %s, which the operator does not export", d.UID, p.Title, m)
					}
				}
				for _, m := range recorded.FindAllString(q.Expr, -1) {
					if !records[m] {
						t.Errorf("dashboard %s panel %q reads %s, which no recording rule defines", d.UID, p.Title, m)
					}
				}
			}
		}
	}
}

func TestMonitoringPrintsTheRules(t *testing.T) {
	var out, errOut bytes.Buffer
	if err := monitoringCmd([]string{"--format", "prometheusrule"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	want, err := monitoring.DefaultOptions().PrometheusRule(monitoring.ObjectMeta{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("anthill monitoring --format prometheusrule printed something else than the generated manifest")
	}
	if err := monitoringCmd([]string{"--format", "nope"}, &out, &errOut); err == nil {
		t.Error("an unknown format was accepted")
	}
}

// The generator's options, as a kustomize user passes them: thresholds,
// runbook URL, job, namespace and labels reach the printed objects and the
// written directory; a wrong option is refused.
func TestMonitoringOptions(t *testing.T) {
	var out, errOut bytes.Buffer
	args := []string{"--format", "prometheusrule", "--threshold", "capacityHighPercent=85", "--threshold", "reconcileErrorsPerMinute=6", "--runbook-base-url", "https://wiki.example/rb/",
		"--operator-job", "ops/anthill", "--namespace", "monitoring", "--label", "release=kube-prometheus-stack"}
	if err := monitoringCmd(args, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"anthill:cluster_capacity_used:ratio > 85 / 100", "> 6 / 60", "runbook_url: https://wiki.example/rb/AnthillCapacityHigh.md",
		`up{job="ops/anthill"}`, "namespace: monitoring", "release: kube-prometheus-stack"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the PrometheusRule lacks %q:\n%s", want, out.String())
		}
	}

	dir := t.TempDir()
	if err := monitoringCmd([]string{"--write-manifests", dir, "--namespace", "monitoring", "--operator-namespace", "storage", "--label", "release=kps"}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for file, wants := range map[string][]string{
		monitoring.KustomizationFile:  {"namespace: monitoring"},
		monitoring.ServiceMonitorFile: {"namespace: monitoring", "release: kps", "matchNames:\n    - storage"},
		monitoring.PrometheusRuleFile: {"namespace: monitoring", "release: kps"},
		monitoring.DashboardsFile:     {"grafana_dashboard"},
	} {
		raw, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range wants {
			if !strings.Contains(string(raw), want) {
				t.Errorf("%s lacks %q:\n%s", file, want, raw)
			}
		}
	}

	for _, bad := range [][]string{
		{"--threshold", "capacityHigh=85"}, {"--threshold", "capacityHighPercent=eighty"}, {"--threshold", "capacityHighPercent=120"},
		{"--threshold", "capacityHighPercent"}, {"--threshold", "reconcileErrorsPerMinute=0"}, {"--label", "=x"}, {"--runbook-base-url", ""},
	} {
		if err := monitoringCmd(bad, &out, &errOut); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}
