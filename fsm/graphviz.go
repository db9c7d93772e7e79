package fsm

import (
	"fmt"
	"strings"
)

// Graphviz renders d as a dot digraph: an invisible start point leading to
// the initial state, every state in declaration order (so that dot lays the
// happy path out first), terminal states drawn as double octagons, and edges
// ordered by source state, event and target for stable output.
func Graphviz(d *Definition) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %q {\n", d.Machine)
	b.WriteString("    rankdir=LR;\n")
	b.WriteString("    node [shape=box, style=rounded, fontname=\"Helvetica\"];\n")
	b.WriteString("    edge [fontname=\"Helvetica\", fontsize=10];\n")
	b.WriteString("    \"__start\" [shape=point, label=\"\"];\n")
	for _, s := range d.States {
		if d.IsTerminal(s.Name) {
			fmt.Fprintf(&b, "    %q [shape=doubleoctagon, style=\"\"];\n", s.Name)
		} else {
			fmt.Fprintf(&b, "    %q;\n", s.Name)
		}
	}
	fmt.Fprintf(&b, "    \"__start\" -> %q;\n", d.Initial)
	for _, e := range d.edges() {
		fmt.Fprintf(&b, "    %q -> %q [label=%q];\n", e.From, e.To, e.Event)
	}
	b.WriteString("}\n")
	return b.String()
}
