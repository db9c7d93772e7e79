package architecture

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// docToken matches a backticked word of docs/api.md and captures its
// leading name: `vdo: true` is vdo, `spec.nodeTemplates[]` is
// spec.nodeTemplates.
var docToken = regexp.MustCompile("`([A-Za-z][A-Za-z0-9.]*)")

// docTokens are the names of text's backticked words.
func docTokens(text string) map[string]bool {
	out := map[string]bool{}
	for _, m := range docToken.FindAllStringSubmatch(text, -1) {
		out[m[1]] = true
	}
	return out
}

// apiDocRow is one row of a kind's table in docs/api.md: the fields its
// first cell names and the words of the whole row.
type apiDocRow struct {
	heads []string
	words map[string]bool
}

// TestAPIDocsNameEveryField keeps docs/api.md the map of the API: each
// spec field has a row of its kind's table (spec.nodeTemplates[]), every
// field below it is named in that row, every status field is named in the
// status row, and the fields of a history entry in the conventions.
func TestAPIDocsNameEveryField(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(), "docs", "api.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{}
	var title string
	for _, line := range strings.Split(string(raw), "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			title, _, _ = strings.Cut(h, " ")
			continue
		}
		sections[title] += line + "\n"
	}
	conventions := docTokens(sections["Conventions"])

	var missing []string
	for _, k := range apiKinds {
		var rows []apiDocRow
		for _, line := range strings.Split(sections[k.kind], "\n") {
			cells := strings.Split(line, "|")
			if len(cells) < 3 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
				continue
			}
			rows = append(rows, apiDocRow{heads: keys(docTokens(cells[1])), words: docTokens(line)})
		}
		if len(rows) == 0 {
			t.Fatalf("docs/api.md has no field table under ## %s", k.kind)
		}
		for _, f := range goFields(t, k.kind, k.typ) {
			segs := strings.Split(strings.ReplaceAll(f.path, "[]", ""), ".")
			top := segs[0] + "." + segs[1]
			leaf := segs[len(segs)-1]
			if segs[0] == "status" {
				top = "status"
			}
			row := findDocRow(rows, top)
			switch {
			case row == nil:
				missing = append(missing, k.kind+" "+f.path+": no row for "+top)
			case len(segs) == 2 && segs[0] == "spec":
				// The row itself names it.
			case f.chain[len(f.chain)-1].typ == "TransitionRecord":
				if !conventions[leaf] {
					missing = append(missing, k.kind+" "+f.path+": not named in the conventions' history entries")
				}
			case !row.words[leaf] && !row.words[strings.Join(segs, ".")]:
				missing = append(missing, k.kind+" "+f.path+": not named in the row for "+top)
			}
		}
	}
	if len(missing) > 0 {
		sort.Strings(missing)
		t.Errorf("docs/api.md does not describe every API field:\n  %s", strings.Join(missing, "\n  "))
	}
}

// findDocRow is the row whose first cell names top or a field below it.
func findDocRow(rows []apiDocRow, top string) *apiDocRow {
	for i, r := range rows {
		for _, h := range r.heads {
			if h == top || strings.HasPrefix(h, top+".") {
				return &rows[i]
			}
		}
	}
	return nil
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}
