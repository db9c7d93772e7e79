package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiagramPrintsEachFormat(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"node"}, "stateDiagram-v2\n    [*] --> Pending\n"},
		{[]string{"node", "--format", "dot"}, `digraph "node" {`},
		{[]string{"--format=markdown", "heal"}, "# The heal machine"},
		{[]string{"upgrade", "-format", "md"}, "## Events"},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		if err := diagram(tt.args, &out, &errOut); err != nil {
			t.Errorf("diagram(%q) = %v", tt.args, err)
			continue
		}
		if !strings.Contains(out.String(), tt.want) {
			t.Errorf("diagram(%q) output lacks %q:\n%s", tt.args, tt.want, out.String())
		}
	}
}

func TestDiagramRejectsUnknownMachinesListingValidOnes(t *testing.T) {
	var out, errOut bytes.Buffer
	err := diagram([]string{"volume"}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "node, heal, upgrade, cluster") {
		t.Errorf("diagram(volume) = %v, want an error listing the machines", err)
	}
	if err := diagram([]string{"node", "--format", "svg"}, &out, &errOut); err == nil {
		t.Error("diagram with format svg should fail")
	}
	if err := diagram(nil, &out, &errOut); err == nil {
		t.Error("diagram without a machine should fail")
	}
}

func TestWriteDocsWritesEveryMachineAndAnIndex(t *testing.T) {
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := diagram([]string{"--write-docs", dir}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"README.md", "node.md", "heal.md", "upgrade.md", "cluster.md"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || len(b) == 0 {
			t.Errorf("%s: %v (%d bytes)", f, err, len(b))
		}
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "README.md"))
	if !strings.Contains(string(idx), "[node](node.md)") || !strings.Contains(string(idx), "`GlusterNode.status.state`") {
		t.Errorf("index:\n%s", idx)
	}
}

// The committed docs must be what the code generates; the shell script in
// hack does the same check for CI without a Go test run.
func TestCommittedFSMDocsAreCurrent(t *testing.T) {
	committed := filepath.Join("..", "..", "docs", "fsm")
	if _, err := os.Stat(committed); err != nil {
		t.Skipf("no committed docs: %v", err)
	}
	dir := t.TempDir()
	var out, errOut bytes.Buffer
	if err := diagram([]string{"--write-docs", dir}, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		want, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		got, err := os.ReadFile(filepath.Join(committed, e.Name()))
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("docs/fsm/%s is stale; run: go run ./cmd/anthill diagram --write-docs docs/fsm", e.Name())
		}
	}
}
