package fsm

import (
	"flag"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./fsm/ -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run with -update if the change is intended)\n--- got ---\n%s", name, path, got)
	}
}

func TestMermaidMatchesGolden(t *testing.T)  { golden(t, "ticket.mermaid", Mermaid(sample())) }
func TestGraphvizMatchesGolden(t *testing.T) { golden(t, "ticket.dot", Graphviz(sample())) }
func TestMarkdownMatchesGolden(t *testing.T) { golden(t, "ticket.md", Markdown(sample())) }

func TestRenderingIgnoresDeclarationOrderOfTransitions(t *testing.T) {
	a := sample()
	b := sample()
	b.Transitions[0], b.Transitions[2] = b.Transitions[2], b.Transitions[0]
	b.Transitions[0].From[0], b.Transitions[0].From[1] = b.Transitions[0].From[1], b.Transitions[0].From[0]
	if Mermaid(a) != Mermaid(b) || Graphviz(a) != Graphviz(b) {
		t.Error("output depends on the order transitions are declared in")
	}
}
