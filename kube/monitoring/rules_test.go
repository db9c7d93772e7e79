package monitoring

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"text/template"

	"sigs.k8s.io/yaml"
)

// promtool is the promtool binary: $PROMTOOL (the Makefile builds it from
// the Go module proxy into the tool cache and sets it). Without it the
// test is skipped, except in CI, where it must run.
func promtool(t *testing.T) string {
	t.Helper()
	p := os.Getenv("PROMTOOL")
	if p == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("PROMTOOL is not set; run the tests through make test, which builds promtool")
		}
		t.Skip("PROMTOOL not set (make test sets it)")
	}
	return p
}

func TestRulesPassPromtool(t *testing.T) {
	bin := promtool(t)
	dir := t.TempDir()
	rules, err := DefaultOptions().RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if tests, err = withExpectedAnnotations(tests); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "alerts_test.yaml"), tests, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"check", "rules", "rules.yaml"}, {"test", "rules", "alerts_test.yaml"}} {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		t.Logf("promtool %s:\n%s", strings.Join(args, " "), out)
	}
}

// TestEveryAlertIsTestedAndHasARunbook: the promtool tests name every
// alert (firing cases), and docs/runbooks has a page per alert.
func TestEveryAlertIsTestedAndHasARunbook(t *testing.T) {
	tests, err := os.ReadFile(filepath.Join("testdata", "alerts_test.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range DefaultOptions().Groups() {
		for _, a := range g.Alerts {
			if !strings.Contains(string(tests), "alertname: "+a.Name+"\n") {
				t.Errorf("alert %s has no promtool test", a.Name)
			}
			if a.For == "" || a.Severity == "" || a.Summary == "" || a.Description == "" {
				t.Errorf("alert %s lacks for, severity, summary or description", a.Name)
			}
			if _, err := os.Stat(filepath.Join("..", "..", "docs", "runbooks", a.Name+".md")); err != nil {
				t.Errorf("alert %s has no runbook: %v", a.Name, err)
			}
		}
	}
}

// withExpectedAnnotations fills in, for every expected alert of the
// promtool tests that names none, the annotations the rule must produce
// for its labels: promtool compares annotations exactly, and writing each
// expanded summary by hand would only copy the rule. A test that spells
// its annotations out (the split-brain one) is left as it is, so the
// templating itself is checked against a hand-written expansion.
func withExpectedAnnotations(tests []byte) ([]byte, error) {
	alerts := map[string]Alert{}
	for _, g := range DefaultOptions().Groups() {
		for _, a := range g.Alerts {
			alerts[a.Name] = a
		}
	}
	var doc map[string]any
	if err := yaml.Unmarshal(tests, &doc); err != nil {
		return nil, err
	}
	cases, _ := doc["tests"].([]any)
	for _, c := range cases {
		rt, _ := c.(map[string]any)["alert_rule_test"].([]any)
		for _, r := range rt {
			r := r.(map[string]any)
			a, ok := alerts[fmt.Sprint(r["alertname"])]
			if !ok {
				return nil, fmt.Errorf("promtool test names unknown alert %v", r["alertname"])
			}
			exp, _ := r["exp_alerts"].([]any)
			for _, e := range exp {
				e := e.(map[string]any)
				if _, set := e["exp_annotations"]; set {
					continue
				}
				labels := map[string]string{}
				for k, v := range e["exp_labels"].(map[string]any) {
					labels[k] = fmt.Sprint(v)
				}
				summary, err := expand(a.Summary, labels)
				if err != nil {
					return nil, err
				}
				description, err := expand(a.Description, labels)
				if err != nil {
					return nil, err
				}
				e["exp_annotations"] = map[string]string{"summary": summary, "description": description, "runbook_url": RunbookBase + a.Name + ".md"}
			}
		}
	}
	return yaml.Marshal(doc)
}

// expand renders an annotation template as Prometheus does for labels.
func expand(text string, labels map[string]string) (string, error) {
	tmpl, err := template.New("a").Option("missingkey=zero").Parse("{{ $labels := .Labels }}" + text)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := tmpl.Execute(&b, struct{ Labels map[string]string }{labels}); err != nil {
		return "", err
	}
	return b.String(), nil
}

// TestRulesWithOptionsPassPromtool: rules rendered with every option
// changed (fractional percentages, another job and runbook URL) are still
// valid PromQL and YAML for promtool.
func TestRulesWithOptionsPassPromtool(t *testing.T) {
	bin := promtool(t)
	o := DefaultOptions()
	o.RunbookBaseURL, o.OperatorJob = "https://wiki.example/runbooks/", "ops/anthill"
	for i, th := range Thresholds {
		o.Thresholds[th.Name] = th.Default/2 + float64(i)/4
	}
	rules, err := o.RulesFile()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yaml"), rules, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check", "rules", "rules.yaml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules: %v\n%s\n%s", err, out, rules)
	}
}
