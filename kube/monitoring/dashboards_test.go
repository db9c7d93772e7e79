package monitoring

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestDashboardsHaveUniqueIDsAndUseTheDatasourceVariable(t *testing.T) {
	uids := map[string]bool{}
	for _, d := range Dashboards() {
		if uids[d.UID] || d.UID == "" {
			t.Errorf("dashboard uid %q is empty or not unique", d.UID)
		}
		uids[d.UID] = true
		raw, err := d.JSON()
		if err != nil {
			t.Fatal(err)
		}
		var model struct {
			Templating struct {
				List []struct{ Name, Type, Query any }
			}
			Panels []struct {
				ID         int
				Datasource struct{ UID string }
				Targets    []struct {
					Datasource struct{ UID string }
					Expr       string
				}
			}
		}
		if err := json.Unmarshal(raw, &model); err != nil {
			t.Fatalf("dashboard %s: %v", d.UID, err)
		}
		hasDS := false
		for _, v := range model.Templating.List {
			hasDS = hasDS || (v.Name == "datasource" && v.Type == "datasource" && v.Query == "prometheus")
		}
		if !hasDS {
			t.Errorf("dashboard %s has no Prometheus datasource variable", d.UID)
		}
		ids := map[int]bool{}
		for _, p := range model.Panels {
			if ids[p.ID] {
				t.Errorf("dashboard %s: panel id %d is not unique", d.UID, p.ID)
			}
			ids[p.ID] = true
			if p.Datasource.UID != "${datasource}" || len(p.Targets) == 0 {
				t.Errorf("dashboard %s: panel %d does not query ${datasource}", d.UID, p.ID)
			}
			for _, q := range p.Targets {
				if q.Datasource.UID != "${datasource}" || q.Expr == "" {
					t.Errorf("dashboard %s: panel %d has a target without ${datasource} or query", d.UID, p.ID)
				}
			}
		}
	}
}

// TestDashboardQueriesParse hands every dashboard query, its variables
// filled in, to promtool as a recording rule: promtool check rules parses
// each expression with Prometheus's own parser.
func TestDashboardQueriesParse(t *testing.T) {
	bin := promtool(t)
	var rules []map[string]string
	for _, d := range Dashboards() {
		for i, p := range d.Panels {
			for j, q := range p.Queries {
				expr := strings.NewReplacer("$namespace", "ns", "$cluster", "c").Replace(q.Expr)
				rules = append(rules, map[string]string{"record": fmt.Sprintf("dashboard:%s_%d_%d", strings.ReplaceAll(d.UID, "-", "_"), i, j), "expr": expr})
			}
		}
	}
	out, err := yaml.Marshal(map[string]any{"groups": []any{map[string]any{"name": "dashboards", "rules": rules}}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "queries.yaml"), out, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "check", "rules", "queries.yaml")
	cmd.Dir = dir
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check rules on the dashboard queries: %v\n%s", err, b)
	}
}
