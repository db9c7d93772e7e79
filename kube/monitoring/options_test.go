package monitoring

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

func alertByName(t *testing.T, gs []Group, name string) Alert {
	t.Helper()
	for _, g := range gs {
		for _, a := range g.Alerts {
			if a.Name == name {
				return a
			}
		}
	}
	t.Fatalf("no alert %s", name)
	return Alert{}
}

// Each option reaches the rule it names, in its expression and in the
// text that quotes it.
func TestOptionsChangeTheRulesTheyName(t *testing.T) {
	o := DefaultOptions()
	o.RunbookBaseURL = "https://wiki.example/runbooks/"
	o.OperatorJob = "storage/anthill"
	o.Thresholds = map[string]float64{
		CapacityHighPercent: 70, CapacityCriticalPercent: 85.5, VolumeUtilizationHighPercent: 75,
		VolumeUtilizationCriticalPercent: 95, BrickUtilizationHighPercent: 60, BrickUtilizationCriticalPercent: 99,
		NodeDrainStuckHours: 6, CertificateExpiryDays: 21, ReconcileErrorsPerMinute: 12,
	}
	gs := o.Groups()
	for _, tc := range []struct{ alert, expr, text string }{
		{"AnthillCapacityHigh", "> 70 / 100", "more than 70 %"},
		{"AnthillCapacityCritical", "> 85.5 / 100", "more than 85.5 %"},
		{"AnthillVolumeUtilizationHigh", "> 75 / 100", "more than 75 %"},
		{"AnthillVolumeUtilizationCritical", "> 95 / 100", "more than 95 %"},
		{"AnthillBrickUtilizationHigh", "> 60 / 100", "more than 60 %"},
		{"AnthillBrickUtilizationCritical", "> 99 / 100", "more than 99 %"},
		{"AnthillNodeDrainStuck", "> 6 * 3600", "more than 6 hour(s)"},
		{"AnthillCertificateExpiring", "< 21 * 86400", "less than 21 days"},
		{"AnthillReconcileErrors", "[10m])) > 12 / 60", ""},
		{"AnthillOperatorDown", `up{job="storage/anthill"}`, ""},
	} {
		a := alertByName(t, gs, tc.alert)
		if !strings.Contains(a.Expr, tc.expr) {
			t.Errorf("%s: expr %q lacks %q", tc.alert, a.Expr, tc.expr)
		}
		if !strings.Contains(a.Summary, tc.text) {
			t.Errorf("%s: summary %q lacks %q", tc.alert, a.Summary, tc.text)
		}
	}
	if d := alertByName(t, gs, "AnthillCapacityHigh").Description; !strings.Contains(d, "at 85.5 % AnthillCapacityCritical") {
		t.Errorf("AnthillCapacityHigh's description does not quote the critical threshold: %q", d)
	}
	if d := alertByName(t, gs, "AnthillReconcileErrors").Description; !strings.Contains(d, "more than 12 times a minute") {
		t.Errorf("AnthillReconcileErrors' description does not quote its threshold: %q", d)
	}
	rules, err := o.RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(rules), "runbook_url: https://wiki.example/runbooks/AnthillCertificateExpiring.md") {
		t.Errorf("the runbook base URL is not used:\n%s", rules)
	}
	def, err := DefaultOptions().RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(def), "wiki.example") || bytes.Equal(def, rules) {
		t.Error("options leaked into the default rules")
	}
}

func TestOptionsRejectUnknownOrOutOfRangeValues(t *testing.T) {
	for name, o := range map[string]Options{
		"an unknown threshold":      {RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{"capacityHigh": 80}},
		"a percentage above 100":    {RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{CapacityHighPercent: 120}},
		"a zero threshold":          {RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{CertificateExpiryDays: 0}},
		"a negative threshold":      {RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{NodeDrainStuckHours: -1}},
		"an error rate above 600":   {RunbookBaseURL: RunbookBase, OperatorJob: OperatorJob, Thresholds: map[string]float64{ReconcileErrorsPerMinute: 601}},
		"an empty runbook base URL": {OperatorJob: OperatorJob},
		"an empty operator job":     {RunbookBaseURL: RunbookBase},
	} {
		if err := o.Validate(); err == nil {
			t.Errorf("%s was accepted", name)
		}
		if _, err := o.RulesFile(); err == nil {
			t.Errorf("%s rendered", name)
		}
	}
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
}

// chartValues are the rule values as the chart's values.yaml has them,
// as Helm hands them to a template (numbers as float64).
func chartValues(o Options) map[string]any {
	th := map[string]any{}
	for _, t := range Thresholds {
		v, ok := o.Thresholds[t.Name]
		if !ok {
			v = t.Default
		}
		th[t.Name] = v
	}
	return map[string]any{"Values": map[string]any{"monitoring": map[string]any{"prometheusRule": map[string]any{
		"runbookBaseURL": o.RunbookBaseURL, "operatorJob": o.OperatorJob, "thresholds": th,
	}}}}
}

// The chart's named template, executed over values as Helm would, renders
// the very rules the Go options do: defaults and changed values alike.
func TestHelmRuleGroupsRenderTheRulesOfTheValues(t *testing.T) {
	tpl, err := HelmRuleGroups()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := template.New("chart").Option("missingkey=error").Parse(string(tpl))
	if err != nil {
		t.Fatal(err)
	}
	changed := DefaultOptions()
	changed.RunbookBaseURL, changed.OperatorJob = "https://wiki.example/rb/", "anthill"
	changed.Thresholds = map[string]float64{CapacityHighPercent: 72.5, CertificateExpiryDays: 7, NodeDrainStuckHours: 3, ReconcileErrorsPerMinute: 0.5}
	for name, o := range map[string]Options{"defaults": DefaultOptions(), "changed values": changed} {
		var b bytes.Buffer
		if err := tmpl.ExecuteTemplate(&b, HelmGroupsName, chartValues(o)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := o.RulesFile()
		if err != nil {
			t.Fatal(err)
		}
		var got, exp any
		if err := yaml.Unmarshal(b.Bytes(), &got); err != nil {
			t.Fatalf("%s: the template renders no YAML: %v\n%s", name, err, b.Bytes())
		}
		if err := yaml.Unmarshal(want, &exp); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s: the chart's rules differ from the generator's\nchart:\n%s\ngenerator:\n%s", name, b.Bytes(), want)
		}
	}
}

// The chart's defaults are the generator's, and its schema bounds each
// threshold as Validate does.
func TestChartValuesAreTheDefaultOptions(t *testing.T) {
	chart := filepath.Join("..", "..", "manifests", "charts", "anthill")
	raw, err := os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var values struct {
		Monitoring struct {
			PrometheusRule struct {
				RunbookBaseURL string             `json:"runbookBaseURL"`
				OperatorJob    string             `json:"operatorJob"`
				Thresholds     map[string]float64 `json:"thresholds"`
			} `json:"prometheusRule"`
		} `json:"monitoring"`
	}
	if err := yaml.Unmarshal(raw, &values); err != nil {
		t.Fatal(err)
	}
	pr := values.Monitoring.PrometheusRule
	if pr.RunbookBaseURL != RunbookBase || pr.OperatorJob != OperatorJob {
		t.Errorf("values.yaml runbookBaseURL %q operatorJob %q, want %q and %q", pr.RunbookBaseURL, pr.OperatorJob, RunbookBase, OperatorJob)
	}
	want := map[string]float64{}
	for _, th := range Thresholds {
		want[th.Name] = th.Default
	}
	if !reflect.DeepEqual(pr.Thresholds, want) {
		t.Errorf("values.yaml thresholds %v, want %v", pr.Thresholds, want)
	}

	raw, err = os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		t.Fatal(err)
	}
	var schema struct {
		Properties struct {
			Monitoring struct {
				Properties struct {
					PrometheusRule struct {
						Properties struct {
							Thresholds struct {
								Properties map[string]struct {
									Type             string   `json:"type"`
									ExclusiveMinimum *float64 `json:"exclusiveMinimum"`
									Maximum          *float64 `json:"maximum"`
								} `json:"properties"`
							} `json:"thresholds"`
						} `json:"properties"`
					} `json:"prometheusRule"`
				} `json:"properties"`
			} `json:"monitoring"`
		} `json:"properties"`
	}
	if err := yaml.Unmarshal(raw, &schema); err != nil {
		t.Fatal(err)
	}
	props := schema.Properties.Monitoring.Properties.PrometheusRule.Properties.Thresholds.Properties
	if len(props) != len(Thresholds) {
		t.Errorf("the schema has %d thresholds, the generator %d", len(props), len(Thresholds))
	}
	for _, th := range Thresholds {
		p, ok := props[th.Name]
		switch {
		case !ok:
			t.Errorf("the schema lacks threshold %s", th.Name)
		case p.Type != "number" || p.ExclusiveMinimum == nil || *p.ExclusiveMinimum != 0 || p.Maximum == nil || *p.Maximum != th.Max:
			t.Errorf("the schema bounds %s as %+v, want a number in (0, %v]", th.Name, p, th.Max)
		}
	}
}
