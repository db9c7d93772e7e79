package admin

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
		{[]string{"upgrade", "--format", "md"}, "## Events"},
	}
	for _, tt := range tests {
		out, errOut, code := execute(t, append([]string{"diagram"}, tt.args...)...)
		if code != 0 {
			t.Errorf("diagram %q exited %d: %s", tt.args, code, errOut)
			continue
		}
		if !strings.Contains(out, tt.want) {
			t.Errorf("diagram %q output lacks %q:\n%s", tt.args, tt.want, out)
		}
	}
}

func TestDiagramRejectsUnknownMachinesListingValidOnes(t *testing.T) {
	_, errOut, code := execute(t, "diagram", "volume")
	if code != 2 || !strings.Contains(errOut, "node, heal, upgrade, cluster") {
		t.Errorf("diagram volume = %d, %q; want exit 2 and an error listing the machines", code, errOut)
	}
	if _, _, code := execute(t, "diagram", "node", "--format", "svg"); code != 2 {
		t.Errorf("diagram with format svg exited %d, want 2", code)
	}
	if _, _, code := execute(t, "diagram"); code != 2 {
		t.Errorf("diagram without a machine exited %d, want 2", code)
	}
}

func TestWriteDocsWritesEveryMachineAndAnIndex(t *testing.T) {
	dir := t.TempDir()
	if _, errOut, code := execute(t, "diagram", "--write-docs", dir); code != 0 {
		t.Fatalf("diagram --write-docs exited %d: %s", code, errOut)
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
	if _, errOut, code := execute(t, "diagram", "--write-docs", dir); code != 0 {
		t.Fatalf("diagram --write-docs exited %d: %s", code, errOut)
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
