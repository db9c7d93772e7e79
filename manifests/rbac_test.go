package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// rbacRule is one rule of a Role or ClusterRole as the YAML spells it.
type rbacRule struct {
	APIGroups     []string `yaml:"apiGroups"`
	Resources     []string `yaml:"resources"`
	ResourceNames []string `yaml:"resourceNames"`
	Verbs         []string `yaml:"verbs"`
}

// grant is one verb on one resource: the unit the docs and the rules are
// compared in.
type grant struct {
	scope, group, resource, names, verb string
}

func (g grant) String() string {
	s := fmt.Sprintf("%s %s/%s %s", g.scope, g.group, g.resource, g.verb)
	if g.names != "" {
		s += " (names " + g.names + ")"
	}
	return s
}

// roleRules reads the rules of every Role and ClusterRole in file, keyed
// by kind/name, as YAML nodes so that each rule's head comment is kept.
func roleRules(t *testing.T, file string) map[string][]*yaml.Node {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]*yaml.Node{}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return out
		} else if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		var meta struct {
			Kind     string
			Metadata struct{ Name string }
		}
		if err := doc.Decode(&meta); err != nil {
			t.Fatal(err)
		}
		if meta.Kind != "Role" && meta.Kind != "ClusterRole" {
			continue
		}
		key := meta.Kind + "/" + meta.Metadata.Name
		root := doc.Content[0]
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "rules" {
				out[key] = append(out[key], root.Content[i+1].Content...)
			}
		}
	}
}

// decodeRule decodes n and fails on a rule without a comment or with a
// wildcard.
func decodeRule(t *testing.T, where string, n *yaml.Node) rbacRule {
	t.Helper()
	if strings.TrimSpace(n.HeadComment) == "" {
		t.Errorf("%s has no comment naming the code or the person that needs it", where)
	}
	var r rbacRule
	if err := n.Decode(&r); err != nil {
		t.Fatal(err)
	}
	for _, s := range slices.Concat(r.APIGroups, r.Resources, r.ResourceNames, r.Verbs) {
		if strings.Contains(s, "*") {
			t.Errorf("%s uses a wildcard (%q)", where, s)
		}
	}
	return r
}

// operatorGrants are the grants of the operator's ClusterRole and Role,
// checked for comments, wildcards and duplicates on the way.
func operatorGrants(t *testing.T) map[grant]bool {
	t.Helper()
	got := map[grant]bool{}
	for file, scope := range map[string]string{"rbac/cluster_role.yaml": "cluster", "rbac/leader_election_role.yaml": "namespace"} {
		for _, k := range expandGrants(t, file, scope) {
			if got[k] {
				t.Errorf("%s: %v is granted twice", file, k)
			}
			got[k] = true
		}
	}
	return got
}

// expandGrants lists, in scope, every verb on every resource that the
// Roles and ClusterRoles of file (a path below manifests) grant, checking
// each rule's comment and wildcards.
func expandGrants(t *testing.T, file, scope string) []grant {
	t.Helper()
	var out []grant
	for role, rules := range roleRules(t, file) {
		for i, n := range rules {
			r := decodeRule(t, fmt.Sprintf("%s %s rule %d", file, role, i), n)
			for _, g := range r.APIGroups {
				if g == "" {
					g = "core"
				}
				for _, res := range r.Resources {
					for _, v := range r.Verbs {
						out = append(out, grant{scope, g, res, strings.Join(r.ResourceNames, ","), v})
					}
				}
			}
		}
	}
	return out
}

// markdownTable returns the body rows of the table in doc whose header row
// starts with header, each row split into trimmed cells.
func markdownTable(t *testing.T, doc, header string) [][]string {
	t.Helper()
	var rows [][]string
	in := false
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case strings.HasPrefix(line, header):
			in = true
		case in && strings.HasPrefix(line, "|---"):
		case in && strings.HasPrefix(line, "|"):
			cells := strings.Split(strings.Trim(line, "|"), "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			rows = append(rows, cells)
		case in:
			return rows
		}
	}
	if !in {
		t.Fatalf("docs/rbac.md has no table starting %q", header)
	}
	return rows
}

// namedResource is a resources cell limited by resourceNames:
// "leases (`anthill-operator` only)".
var namedResource = regexp.MustCompile("^(\\S+) \\(`([^`]+)` only\\)$")

// cellList splits a table cell of comma-separated words; "—" is none.
func cellList(cell string) []string {
	if cell == "—" || cell == "" {
		return nil
	}
	return strings.Split(cell, ", ")
}

func readRBACDoc(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../docs/rbac.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(raw)
}

// TestRBACDocListsEveryOperatorPermission: docs/rbac.md's operator table
// and the shipped rules grant exactly the same verbs on the same
// resources, and every rule is commented, wildcard-free and not repeated.
func TestRBACDocListsEveryOperatorPermission(t *testing.T) {
	doc := map[grant]bool{}
	for _, row := range markdownTable(t, readRBACDoc(t), "| scope |") {
		if len(row) != 5 || row[4] == "" {
			t.Fatalf("docs/rbac.md row %q: want scope, group, resources, verbs and a reason", row)
		}
		for _, res := range cellList(row[2]) {
			names := ""
			if m := namedResource.FindStringSubmatch(res); m != nil {
				res, names = m[1], m[2]
			}
			for _, v := range cellList(row[3]) {
				doc[grant{row[0], row[1], res, names, v}] = true
			}
		}
	}
	shipped := operatorGrants(t)
	for _, g := range slices.SortedFunc(maps.Keys(shipped), compareGrants) {
		if !doc[g] {
			t.Errorf("manifests/rbac grants %v, which docs/rbac.md does not list", g)
		}
	}
	for _, g := range slices.SortedFunc(maps.Keys(doc), compareGrants) {
		if !shipped[g] {
			t.Errorf("docs/rbac.md lists %v, which manifests/rbac does not grant", g)
		}
	}
}

func compareGrants(a, b grant) int { return strings.Compare(a.String(), b.String()) }

// personTables are the headers of docs/rbac.md's people tables, each
// with the kind its roles are: the person ClusterRoles, and the Role in
// the operator's namespace.
var personTables = []struct{ header, kind string }{
	{"| resource | gluster-view |", "ClusterRole"},
	{"| resource | gluster-operator-health |", "Role"},
}

// TestPersonRolesMatchTheDoc: the person roles' rules grant exactly what
// docs/rbac.md's people tables say, each role of the kind its table is
// (e2e/integration asks the API server the same question, and runs the
// plugin as users bound to each role).
func TestPersonRolesMatchTheDoc(t *testing.T) {
	doc := readRBACDoc(t)
	want := map[string][]string{}
	kind := map[string]string{}
	for _, table := range personTables {
		roles := tableRoles(t, doc, table.header)
		for _, role := range roles {
			kind[role] = table.kind
			want[role] = []string{}
		}
		for _, row := range markdownTable(t, doc, table.header) {
			if len(row) != len(roles)+1 {
				t.Fatalf("docs/rbac.md row %q: want a resource and one cell per role", row)
			}
			res := row[0]
			if m := namedResource.FindStringSubmatch(res); m != nil {
				res = m[1] + "[" + m[2] + "]"
			}
			for i, role := range roles {
				for _, v := range cellList(row[i+1]) {
					want[role] = append(want[role], res+" "+v)
				}
			}
		}
	}
	defined := map[string]bool{}
	for role, rules := range roleRules(t, "rbac/person_roles.yaml") {
		k, name, _ := strings.Cut(role, "/")
		defined[name] = true
		if kind[name] != k {
			t.Errorf("manifests/rbac/person_roles.yaml defines %s; docs/rbac.md's people tables have it as a %q", role, kind[name])
		}
		var got []string
		for i, n := range rules {
			r := decodeRule(t, fmt.Sprintf("%s rule %d", role, i), n)
			for _, res := range r.Resources {
				if len(r.ResourceNames) > 0 {
					res += "[" + strings.Join(r.ResourceNames, ",") + "]"
				}
				for _, v := range r.Verbs {
					got = append(got, res+" "+v)
				}
			}
		}
		slices.Sort(got)
		if g := slices.Compact(slices.Clone(got)); len(g) != len(got) {
			t.Errorf("%s grants a verb twice: %v", name, got)
		}
		slices.Sort(want[name])
		if !slices.Equal(got, want[name]) {
			t.Errorf("%s grants %v;\ndocs/rbac.md says %v", name, got, want[name])
		}
	}
	for _, role := range slices.Sorted(maps.Keys(kind)) {
		if !defined[role] {
			t.Errorf("docs/rbac.md names %s, which manifests/rbac/person_roles.yaml does not define", role)
		}
	}
}

// tableRoles are the role names of a people table's header row, after
// its resource column.
func tableRoles(t *testing.T, doc, header string) []string {
	t.Helper()
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, header) {
			cells := strings.Split(strings.Trim(line, "|"), "|")
			var roles []string
			for _, c := range cells[1:] {
				roles = append(roles, strings.TrimSpace(c))
			}
			return roles
		}
	}
	t.Fatalf("docs/rbac.md has no table starting %q", header)
	return nil
}
