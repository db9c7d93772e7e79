package monitoring

import (
	"encoding/json"
	"fmt"

	"sigs.k8s.io/yaml"
)

// Panel is one dashboard panel: a time series (or a stat) of PromQL
// queries. Queries may use $namespace and $cluster, the dashboard's
// variables.
type Panel struct {
	Title string
	// Kind is "timeseries" or "stat".
	Kind    string
	Unit    string
	Queries []Query
}

// Query is one PromQL target of a panel.
type Query struct {
	Expr   string
	Legend string
}

// Dashboard is one Grafana dashboard.
type Dashboard struct {
	UID    string
	Title  string
	Panels []Panel
}

// sel is the label selector of the dashboard's cluster.
const sel = `namespace="$namespace", cluster="$cluster"`

// Dashboards are the Grafana dashboards anthill ships. The state gauges
// are served by every operator replica, hence the max by.
func Dashboards() []Dashboard {
	return []Dashboard{
		{
			UID: "anthill-cluster", Title: "anthill / Gluster cluster",
			Panels: []Panel{
				{Title: "Nodes by state", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "max by (state) (anthill_cluster_nodes{" + sel + "}) > 0", Legend: "{{state}}"}}},
				{Title: "Volumes by heal state", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "max by (state) (anthill_cluster_volumes{" + sel + "}) > 0", Legend: "{{state}}"}}},
				{Title: "Heal pending entries", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "max by (volume) (anthill_volume_heal_pending_entries{" + sel + "})", Legend: "{{volume}}"}}},
				{Title: "Split-brain entries", Kind: "stat", Unit: "short", Queries: []Query{
					{Expr: "sum(max by (volume) (anthill_volume_split_brain_entries{" + sel + "}))", Legend: "split-brain"}}},
				{Title: "Raw capacity used", Kind: "timeseries", Unit: "percentunit", Queries: []Query{
					{Expr: "anthill:cluster_capacity_used:ratio{" + sel + "}", Legend: "cluster"},
					{Expr: "anthill:zone_capacity_used:ratio{" + sel + "}", Legend: "{{zone}}"}}},
				{Title: "Free raw capacity by zone", Kind: "timeseries", Unit: "bytes", Queries: []Query{
					{Expr: "max by (zone) (anthill_zone_capacity_free_bytes{" + sel + "})", Legend: "{{zone}}"}}},
				{Title: "Time in state (nodes)", Kind: "timeseries", Unit: "s", Queries: []Query{
					{Expr: "time() - max by (node) (anthill_node_state_since_timestamp_seconds{" + sel + "})", Legend: "{{node}}"}}},
				{Title: "Upgrade state", Kind: "stat", Unit: "short", Queries: []Query{
					{Expr: "max by (state) (anthill_upgrade_state{" + sel + "}) == 1", Legend: "{{state}}"}}},
				{Title: "Volumes up", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "max by (volume) (anthill_volume_up{" + sel + "})", Legend: "{{volume}}"}}},
				{Title: "Bricks offline", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "count by (volume) (max by (volume, brick) (anthill_brick_up{" + sel + "}) == 0)", Legend: "{{volume}}"}}},
				{Title: "Volume utilization", Kind: "timeseries", Unit: "percentunit", Queries: []Query{
					{Expr: "anthill:volume_used:ratio{" + sel + "}", Legend: "{{volume}}"}}},
				{Title: "Brick utilization (fullest 10)", Kind: "timeseries", Unit: "percentunit", Queries: []Query{
					{Expr: "topk(10, anthill:brick_used:ratio{" + sel + "})", Legend: "{{volume}} {{brick}}"}}},
				{Title: "Volume capacity and used", Kind: "timeseries", Unit: "bytes", Queries: []Query{
					{Expr: "max by (volume) (anthill_volume_capacity_bytes{" + sel + "})", Legend: "{{volume}} capacity"},
					{Expr: "max by (volume) (anthill_volume_used_bytes{" + sel + "})", Legend: "{{volume}} used"}}},
				{Title: "GD2 uptime (nodes)", Kind: "timeseries", Unit: "s", Queries: []Query{
					{Expr: "time() - max by (node) (anthill_node_up_since_timestamp_seconds{" + sel + "})", Legend: "{{node}}"}}},
			},
		},
		// From gluster-exporter beside each GD2 (spec.gluster.metricsExporter):
		// GD2's volume profile, brick status and process figures.
		{
			UID: "anthill-gluster-data-path", Title: "anthill / Gluster data path",
			Panels: []Panel{
				{Title: "Brick reads", Kind: "timeseries", Unit: "Bps", Queries: []Query{
					{Expr: "anthill:gluster_brick_read_bytes:rate5m{" + sel + "}", Legend: "{{volume}} {{host}}:{{brick}}"}}},
				{Title: "Brick writes", Kind: "timeseries", Unit: "Bps", Queries: []Query{
					{Expr: "anthill:gluster_brick_write_bytes:rate5m{" + sel + "}", Legend: "{{volume}} {{host}}:{{brick}}"}}},
				{Title: "Volume operations by kind", Kind: "timeseries", Unit: "ops", Queries: []Query{
					{Expr: "sum by (volume, fop) (anthill:gluster_brick_fops:rate5m{" + sel + "})", Legend: "{{volume}} {{fop}}"}}},
				{Title: "Average latency since brick start (slowest 10)", Kind: "timeseries", Unit: "µs", Queries: []Query{
					{Expr: "topk(10, max by (volume, brick, fop) (gluster_volume_profile_fop_avg_latency{" + sel + "}))", Legend: "{{volume}} {{brick}} {{fop}}"}}},
				{Title: "Bricks down (exporter)", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "count by (volume) (max by (volume, hostname, brick_path) (gluster_brick_up{" + sel + "}) == 0)", Legend: "{{volume}}"}}},
				{Title: "Gluster process CPU", Kind: "timeseries", Unit: "percent", Queries: []Query{
					{Expr: "max by (pod, name, volume, brick_path) (gluster_cpu_percentage{" + sel + "})", Legend: "{{pod}} {{name}} {{brick_path}}"}}},
				{Title: "Gluster process resident memory", Kind: "timeseries", Unit: "bytes", Queries: []Query{
					{Expr: "max by (pod, name, volume, brick_path) (gluster_resident_memory_bytes{" + sel + "})", Legend: "{{pod}} {{name}} {{brick_path}}"}}},
			},
		},
		{
			UID: "anthill-operator", Title: "anthill / operator",
			Panels: []Panel{
				{Title: "Transitions", Kind: "timeseries", Unit: "ops", Queries: []Query{
					{Expr: "sum by (machine) (rate(anthill_fsm_transitions_total[5m]))", Legend: "{{machine}}"}}},
				{Title: "Sync errors by class", Kind: "timeseries", Unit: "ops", Queries: []Query{
					{Expr: "sum by (machine, class) (rate(anthill_dispatcher_sync_errors_total[5m]))", Legend: "{{machine}} {{class}}"}}},
				{Title: "Sync duration (p99)", Kind: "timeseries", Unit: "s", Queries: []Query{
					{Expr: "histogram_quantile(0.99, sum by (le, machine) (rate(anthill_dispatcher_sync_duration_seconds_bucket[5m])))", Legend: "{{machine}}"}}},
				{Title: "GD2 requests by code", Kind: "timeseries", Unit: "reqps", Queries: []Query{
					{Expr: "sum by (code) (rate(anthill_gd2_requests_total[5m]))", Legend: "{{code}}"}}},
				{Title: "GD2 errors by class", Kind: "timeseries", Unit: "reqps", Queries: []Query{
					{Expr: "sum by (class) (rate(anthill_gd2_errors_total[5m]))", Legend: "{{class}}"}}},
				{Title: "GD2 request latency (p99)", Kind: "timeseries", Unit: "s", Queries: []Query{
					{Expr: "histogram_quantile(0.99, sum by (le, operation) (rate(anthill_gd2_request_duration_seconds_bucket[5m])))", Legend: "{{operation}}"}}},
				{Title: "Transitions not recorded as Events", Kind: "timeseries", Unit: "short", Queries: []Query{
					{Expr: "sum by (machine) (increase(anthill_transitionlog_suppressed_total[1h]))", Legend: "rate-limited {{machine}}"},
					{Expr: "sum by (machine) (increase(anthill_transitionlog_write_errors_total[1h]))", Legend: "refused {{machine}}"}}},
			},
		},
	}
}

// datasource is how every panel and variable names the Prometheus data
// source: the dashboard's datasource variable.
var datasource = map[string]string{"type": "prometheus", "uid": "${datasource}"}

// JSON renders d as a Grafana dashboard model.
func (d Dashboard) JSON() ([]byte, error) {
	var panels []map[string]any
	for i, p := range d.Panels {
		var targets []map[string]any
		for j, q := range p.Queries {
			targets = append(targets, map[string]any{
				"datasource": datasource, "expr": q.Expr, "legendFormat": q.Legend, "refId": string(rune('A' + j)),
			})
		}
		panels = append(panels, map[string]any{
			"id": i + 1, "type": p.Kind, "title": p.Title, "datasource": datasource, "targets": targets,
			"gridPos":     map[string]int{"h": 8, "w": 12, "x": (i % 2) * 12, "y": (i / 2) * 8},
			"fieldConfig": map[string]any{"defaults": map[string]any{"unit": p.Unit}, "overrides": []any{}},
		})
	}
	labelVar := func(name, query string) map[string]any {
		return map[string]any{
			"name": name, "label": name, "type": "query", "datasource": datasource,
			"query": map[string]any{"query": query, "refId": name}, "refresh": 2, "sort": 1,
		}
	}
	model := map[string]any{
		"uid": d.UID, "title": d.Title, "schemaVersion": 39, "editable": false, "tags": []string{"anthill", "gluster"},
		"time":     map[string]string{"from": "now-6h", "to": "now"},
		"panels":   panels,
		"timezone": "browser",
		"templating": map[string]any{"list": []map[string]any{
			{"name": "datasource", "label": "Data source", "type": "datasource", "query": "prometheus"},
			labelVar("namespace", "label_values(anthill_cluster_phase, namespace)"),
			labelVar("cluster", `label_values(anthill_cluster_phase{namespace="$namespace"}, cluster)`),
		}},
	}
	return json.MarshalIndent(model, "", "  ")
}

// DashboardFiles are the dashboards' JSON models by file name
// (<uid>.json): the keys of DashboardsConfigMap, and the chart's
// files/dashboards.
func DashboardFiles() (map[string]string, error) {
	data := map[string]string{}
	for _, d := range Dashboards() {
		j, err := d.JSON()
		if err != nil {
			return nil, fmt.Errorf("dashboard %s: %w", d.UID, err)
		}
		data[d.UID+".json"] = string(j) + "\n"
	}
	return data, nil
}

// DashboardsConfigMap renders the dashboards as one ConfigMap, a key per
// dashboard, labelled for Grafana's dashboard sidecar (grafana_dashboard).
func DashboardsConfigMap() ([]byte, error) {
	data, err := DashboardFiles()
	if err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{
			"name": "anthill-dashboards", "namespace": "anthill-system",
			"labels": map[string]string{"app.kubernetes.io/name": "anthill", "grafana_dashboard": "1"},
		},
		"data": data,
	})
	if err != nil {
		return nil, err
	}
	return append([]byte("# Generated by `make generate` (anthill monitoring) from kube/monitoring/dashboards.go; do not edit.\n"), body...), nil
}
