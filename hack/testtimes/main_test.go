package main

import (
	"bytes"
	"strings"
	"testing"
	"time"
)

// The summary lists the slowest top-level tests first, leaves subtests
// out, and counts failures; quiet output keeps only failing tests' lines.
func TestSummaryListsTheSlowestTestsAndKeepsFailingOutput(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"output","Package":"p","Test":"TestFast","Output":"fast line\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestFast","Elapsed":1.5}`,
		`{"Action":"output","Package":"p","Test":"TestSlow","Output":"slow line\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestSlow/sub","Elapsed":90}`,
		`{"Action":"fail","Package":"p","Test":"TestSlow","Elapsed":100}`,
		`{"Action":"output","Package":"p","Output":"FAIL\tp\t101s\n"}`,
		`{"Action":"fail","Package":"p","Elapsed":101}`,
		`# p: a build error`,
	}, "\n")
	var out bytes.Buffer
	tests, pkgs, err := read(strings.NewReader(in), &out, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "slow line\n--- FAIL TestSlow (100s)\nFAIL\tp\t101s\n# p: a build error\n" {
		t.Errorf("quiet output %q", got)
	}
	var sum bytes.Buffer
	report(&sum, tests, pkgs, 1, 2*time.Minute)
	for _, want := range []string{"the 1 slowest tests:\n     1m40s  fail  p.TestSlow\n", "wall time: 2m0s (2 tests in 1 packages, 2 failed)"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary %q lacks %q", sum.String(), want)
		}
	}
}

// A test's wait for a place among those that run side by side is not its
// own time: the summary takes it off, and a test whose subtests take the
// places loses the wait of the first of them to start.
func TestSummaryLeavesOutTheWaitForAPlace(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"output","Package":"p","Test":"TestLong","Output":"    sets_e2e_test.go:1: waited 2m0s for one of the 6 places\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestLong","Elapsed":180}`,
		`{"Action":"output","Package":"p","Test":"TestSubs/runs/a","Output":"    x.go:1: waited 30s for one of the 6 places\n"}`,
		`{"Action":"output","Package":"p","Test":"TestSubs/runs/b","Output":"    x.go:1: waited 50s for one of the 6 places\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestSubs/runs/a","Elapsed":70}`,
		`{"Action":"pass","Package":"p","Test":"TestSubs/runs/b","Elapsed":70}`,
		`{"Action":"pass","Package":"p","Test":"TestSubs/runs","Elapsed":120}`,
		`{"Action":"pass","Package":"p","Test":"TestSubs","Elapsed":120}`,
	}, "\n")
	var out bytes.Buffer
	tests, _, err := read(strings.NewReader(in), &out, true)
	if err != nil {
		t.Fatal(err)
	}
	// TestSubs holds no place: it waited until its first subtest had one.
	if len(tests) != 2 || tests[0].elapsed != time.Minute || tests[1].elapsed != 90*time.Second {
		t.Errorf("tests %+v, want TestLong taking 1m0s and TestSubs 1m30s", tests)
	}
	if got := out.String(); got != "--- PASS TestLong (60s)\n--- PASS TestSubs (90s)\n" {
		t.Errorf("quiet output %q", got)
	}
}
