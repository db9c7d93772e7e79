package monitoring

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
	rules, err := RulesFile()
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
	for _, g := range Groups() {
		for _, a := range g.Alerts {
			if !strings.Contains(string(tests), "alertname: "+a.Name+"\n") {
				t.Errorf("alert %s has no promtool test", a.Name)
			}
			if a.For == "" || a.Severity == "" || a.Summary == "" || a.Description == "" {
				t.Errorf("alert %s lacks for, severity, summary or description", a.Name)
			}
			if _, err := os.Stat(filepath.Join("..", "docs", "runbooks", a.Name+".md")); err != nil {
				t.Errorf("alert %s has no runbook: %v", a.Name, err)
			}
		}
	}
}
