package fsm

import (
	"fmt"
	"strings"
)

// Mermaid renders d as a Mermaid stateDiagram-v2. The start marker points at
// the initial state (not at some machine's current state), terminal states
// point at the end marker, and edges are ordered by source state (in
// declaration order), event and target so the output is byte-for-byte
// stable and can be compared as a golden file.
// State and event names cannot contain spaces (Validate enforces this),
// which Mermaid would otherwise misparse.
func Mermaid(d *Definition) string {
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	fmt.Fprintf(&b, "    [*] --> %s\n", d.Initial)
	for _, e := range d.edges() {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", e.From, e.To, e.Event)
	}
	for _, s := range sortedStates(d.Terminal) {
		fmt.Fprintf(&b, "    %s --> [*]\n", s)
	}
	return b.String()
}
