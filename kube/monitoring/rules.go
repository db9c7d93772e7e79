package monitoring

import (
	"fmt"

	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// RunbookBase is where every alert's runbook_url points by default
// (Options.RunbookBaseURL): one page per alert, docs/runbooks/<alert>.md.
const RunbookBase = "https://github.com/gluster/anthill/blob/main/docs/runbooks/"

// OperatorJob is the Prometheus job of the operator's metrics Service
// (a ServiceMonitor names its job after the Service), the default of
// Options.OperatorJob.
const OperatorJob = "anthill-operator-metrics"

// Severity of an alert.
type Severity string

const (
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// Alert is one alerting rule.
type Alert struct {
	Name        string
	Expr        string
	For         string
	Severity    Severity
	Summary     string
	Description string
}

// Record is one recording rule.
type Record struct {
	Name string
	Expr string
}

// Group is one rule group.
type Group struct {
	Name    string
	Records []Record
	Alerts  []Alert
}

// stateIs selects the series of a one-per-state gauge that are in state s.
func stateIs(metric string, s fsm.State) string {
	return fmt.Sprintf("%s{state=%q}", metric, string(s))
}

// Groups are every rule with o's thresholds and job.
func (o Options) Groups() []Group { return groups(o.params()) }

// groups are every rule, with p's text for each parameter. The state
// gauges are served by every operator replica, so each expression
// aggregates with max by the object's labels. A percentage threshold P is
// compared as "ratio > P / 100", and a rate a minute R as "per-second
// rate > R / 60", so that the chart's template can put the value in as it
// is.
func groups(p params) []Group {
	return []Group{
		{
			Name: "anthill.rules",
			Records: []Record{
				{Name: "anthill:cluster_capacity_used:ratio",
					Expr: "1 - max by (namespace, cluster) (anthill_cluster_capacity_free_bytes) / max by (namespace, cluster) (anthill_cluster_capacity_total_bytes > 0)"},
				{Name: "anthill:zone_capacity_used:ratio",
					Expr: "1 - max by (namespace, cluster, zone) (anthill_zone_capacity_free_bytes) / max by (namespace, cluster, zone) (anthill_zone_capacity_total_bytes > 0)"},
				{Name: "anthill:volume_used:ratio",
					Expr: "max by (namespace, cluster, volume) (anthill_volume_used_bytes) / max by (namespace, cluster, volume) (anthill_volume_capacity_bytes > 0)"},
				{Name: "anthill:brick_used:ratio",
					Expr: "max by (namespace, cluster, volume, brick) (anthill_brick_used_bytes) / max by (namespace, cluster, volume, brick) (anthill_brick_capacity_bytes > 0)"},
			},
		},
		{
			Name: "anthill.alerts",
			Alerts: []Alert{
				{Name: "AnthillVolumeSplitBrain", Severity: Critical, For: "1m",
					Expr:        "max by (namespace, cluster, volume) (" + stateIs("anthill_volume_heal_state", states.HealSplitBrain) + ") == 1",
					Summary:     "Volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is in split-brain.",
					Description: "GD2 reports entries in split-brain on the volume; anthill does not resolve them and blocks upgrades and drains that need it healed. An administrator must pick the good copy."},
				{Name: "AnthillVolumeDown", Severity: Critical, For: "5m",
					Expr:        `max by (namespace, cluster, volume) (anthill_volume_up) == 0 and on (namespace, cluster, volume) max by (namespace, cluster, volume) (anthill_volume_info{state="Started"}) == 1`,
					Summary:     "Volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is started but not online.",
					Description: "GD2 could not report the started volume online (its status call, which mounts the volume, failed or said offline): clients of the volume are likely failing."},
				// The bricks of every started volume, from GD2's bricks
				// status (any volume type); it replaced the heal-info
				// count anthill_volume_bricks, which covers replica sets only.
				{Name: "AnthillBrickDown", Severity: Warning, For: "5m",
					Expr:        "count by (namespace, cluster, volume) (max by (namespace, cluster, volume, brick) (anthill_brick_up) == 0) > 0",
					Summary:     "{{ $value }} brick(s) of volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} are offline.",
					Description: "GD2 reports bricks of the started volume offline (their node unreachable or the brick process down): a replicated or dispersed volume runs with fewer copies and drains and upgrades that need them wait; a distribute volume has lost the files on those bricks until they return."},
				{Name: "AnthillNodeFailed", Severity: Critical, For: "1m",
					Expr:        "max by (namespace, cluster, node) (" + stateIs("anthill_node_state", states.NodeFailed) + ") == 1",
					Summary:     "Gluster node {{ $labels.node }} of {{ $labels.namespace }}/{{ $labels.cluster }} has failed.",
					Description: "The node's GD2 peer has been down longer than failurePolicy.permissibleDowntime. Its bricks cannot be rebuilt elsewhere by GD2; the node waits for its host or storage to return."},
				{Name: "AnthillNodeDrainStuck", Severity: Warning, For: "15m",
					Expr: "(time() - max by (namespace, cluster, node) (anthill_node_state_since_timestamp_seconds)) > " + p.t(NodeDrainStuckHours) + " * 3600" +
						" and on (namespace, cluster, node) max by (namespace, cluster, node) (" + stateIs("anthill_node_state", states.NodeDraining) + ") == 1",
					Summary:     "Gluster node {{ $labels.node }} of {{ $labels.namespace }}/{{ $labels.cluster }} has been draining for more than " + p.t(NodeDrainStuckHours) + " hour(s).",
					Description: "The drain waits for something (a down node of a volume, no room for a replacement brick, a pending heal); the node's status message and `anthill transitions` say what."},
				{Name: "AnthillUpgradeBlocked", Severity: Warning, For: "5m",
					Expr:        "max by (namespace, cluster) (" + stateIs("anthill_upgrade_state", states.UpgradeBlocked) + ") == 1",
					Summary:     "The upgrade of {{ $labels.namespace }}/{{ $labels.cluster }} is blocked.",
					Description: "Validation or a heal timeout stopped the rolling upgrade; the cluster's Upgrading condition says why."},
				{Name: "AnthillOperatorDown", Severity: Critical, For: "5m",
					Expr:        fmt.Sprintf("absent(up{job=%q} == 1)", p.operatorJob),
					Summary:     "No anthill operator is being scraped.",
					Description: "No replica of the operator answers on its metrics port: nothing reconciles Gluster clusters, drains or upgrades."},
				{Name: "AnthillReconcileErrors", Severity: Warning, For: "15m",
					Expr:        `sum by (machine) (rate(anthill_dispatcher_sync_errors_total{class!="conflict"}[10m])) > ` + p.t(ReconcileErrorsPerMinute) + " / 60",
					Summary:     "The anthill {{ $labels.machine }} machine keeps failing to reconcile.",
					Description: "Syncs of the machine have failed more than " + p.t(ReconcileErrorsPerMinute) + " times a minute for 15 minutes; the operator log's \"sync failed; retrying with backoff\" lines and Warning Events say why."},
				{Name: "AnthillCapacityHigh", Severity: Warning, For: "15m",
					Expr:        "anthill:cluster_capacity_used:ratio > " + p.t(CapacityHighPercent) + " / 100",
					Summary:     "{{ $labels.namespace }}/{{ $labels.cluster }} has used more than " + p.t(CapacityHighPercent) + " % of its raw capacity.",
					Description: "Add servers or devices; at " + p.t(CapacityCriticalPercent) + " % AnthillCapacityCritical fires, and a drain may find no room for a replacement brick."},
				{Name: "AnthillCapacityCritical", Severity: Critical, For: "5m",
					Expr:        "anthill:cluster_capacity_used:ratio > " + p.t(CapacityCriticalPercent) + " / 100",
					Summary:     "{{ $labels.namespace }}/{{ $labels.cluster }} has used more than " + p.t(CapacityCriticalPercent) + " % of its raw capacity.",
					Description: "New volumes and replacement bricks may not fit; add servers or devices now."},
				{Name: "AnthillVolumeUtilizationHigh", Severity: Warning, For: "15m",
					Expr:        "anthill:volume_used:ratio > " + p.t(VolumeUtilizationHighPercent) + " / 100",
					Summary:     "Volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is more than " + p.t(VolumeUtilizationHighPercent) + " % full.",
					Description: "Expand the volume or free space on it; at " + p.t(VolumeUtilizationCriticalPercent) + " % AnthillVolumeUtilizationCritical fires."},
				{Name: "AnthillVolumeUtilizationCritical", Severity: Critical, For: "5m",
					Expr:        "anthill:volume_used:ratio > " + p.t(VolumeUtilizationCriticalPercent) + " / 100",
					Summary:     "Volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is more than " + p.t(VolumeUtilizationCriticalPercent) + " % full.",
					Description: "Writes to the volume will soon fail with no space left; expand it or free space now."},
				{Name: "AnthillBrickUtilizationHigh", Severity: Warning, For: "15m",
					Expr:        "anthill:brick_used:ratio > " + p.t(BrickUtilizationHighPercent) + " / 100",
					Summary:     "Brick {{ $labels.brick }} of volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is more than " + p.t(BrickUtilizationHighPercent) + " % full.",
					Description: "One brick filling ahead of its volume means files are spread unevenly (a rebalance may help) or the volume is nearly full; at " + p.t(BrickUtilizationCriticalPercent) + " % AnthillBrickUtilizationCritical fires."},
				{Name: "AnthillBrickUtilizationCritical", Severity: Critical, For: "5m",
					Expr:        "anthill:brick_used:ratio > " + p.t(BrickUtilizationCriticalPercent) + " / 100",
					Summary:     "Brick {{ $labels.brick }} of volume {{ $labels.volume }} of {{ $labels.namespace }}/{{ $labels.cluster }} is more than " + p.t(BrickUtilizationCriticalPercent) + " % full.",
					Description: "Files that hash to this brick will soon fail to write; expand the volume, rebalance it or free space now."},
				// anthill renews a certificate RenewBefore (30 days) ahead
				// of its end; one this close to it was not renewed, or is
				// cut short by the end of the CA that signs it.
				{Name: "AnthillCertificateExpiring", Severity: Warning, For: "15m",
					Expr:        "min by (namespace, cluster, secret) (anthill_certificate_expiry_timestamp_seconds) - time() < " + p.t(CertificateExpiryDays) + " * 86400",
					Summary:     "The certificate in Secret {{ $labels.namespace }}/{{ $labels.secret }} of cluster {{ $labels.cluster }} expires in less than " + p.t(CertificateExpiryDays) + " days.",
					Description: "anthill renews the certificates it issues 30 days before they end; this one was not renewed (the CA secret unusable, or the cluster machine failing), or the CA that signs it ends first. When it ends, GD2, etcd and the CSI drivers of the cluster refuse each other's connections."},
			},
		},
		// Gluster's own exporter (spec.gluster.metricsExporter): its
		// profile figures are cumulative gauges per brick, reported by
		// the cluster's first online peer; a new first peer reports the
		// same series for the exporter's two-minute TTL, hence max by.
		{
			Name: "gluster.rules",
			Records: []Record{
				{Name: "anthill:gluster_brick_read_bytes:rate5m",
					Expr: "max by (namespace, cluster, volume, brick, host) (rate(gluster_volume_profile_total_reads[5m]))"},
				{Name: "anthill:gluster_brick_write_bytes:rate5m",
					Expr: "max by (namespace, cluster, volume, brick, host) (rate(gluster_volume_profile_total_writes[5m]))"},
				{Name: "anthill:gluster_brick_fops:rate5m",
					Expr: "max by (namespace, cluster, volume, brick, host, fop) (rate(gluster_volume_profile_fop_total_hits_on_aggregated_fops[5m]))"},
			},
		},
	}
}

// ruleYAML is one rule as Prometheus reads it.
type ruleYAML struct {
	Record      string            `json:"record,omitempty"`
	Alert       string            `json:"alert,omitempty"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type groupYAML struct {
	Name  string     `json:"name"`
	Rules []ruleYAML `json:"rules"`
}

func groupsYAML(p params) []groupYAML {
	var out []groupYAML
	for _, g := range groups(p) {
		gy := groupYAML{Name: g.Name}
		for _, r := range g.Records {
			gy.Rules = append(gy.Rules, ruleYAML{Record: r.Name, Expr: r.Expr})
		}
		for _, a := range g.Alerts {
			gy.Rules = append(gy.Rules, ruleYAML{
				Alert: a.Name, Expr: a.Expr, For: a.For,
				Labels: map[string]string{"severity": string(a.Severity)},
				Annotations: map[string]string{
					"summary": a.Summary, "description": a.Description, "runbook_url": p.runbookBase + a.Name + ".md",
				},
			})
		}
		out = append(out, gy)
	}
	return out
}

// RulesFile renders the groups with o as a Prometheus rules file.
func (o Options) RulesFile() ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return yaml.Marshal(map[string]any{"groups": groupsYAML(o.params())})
}

// Namespace and labels of the PrometheusRule in manifests/monitoring.
const (
	DefaultNamespace = "anthill-system"
	header           = "# Generated by `make generate` (anthill monitoring) from kube/monitoring/rules.go; do not edit.\n"
)

// ObjectMeta is where a generated monitoring object goes: its namespace
// and labels beyond anthill's own (e.g. the release label a
// kube-prometheus-stack selects rules by).
type ObjectMeta struct {
	Namespace string
	Labels    map[string]string
}

func (m ObjectMeta) metadata(name string) map[string]any {
	labels := map[string]string{}
	for k, v := range m.Labels {
		labels[k] = v
	}
	labels["app.kubernetes.io/name"] = "anthill"
	labels["app.kubernetes.io/component"] = "operator"
	ns := m.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	return map[string]any{"name": name, "namespace": ns, "labels": labels}
}

// PrometheusRule renders the groups with o as a PrometheusRule placed by m.
func (o Options) PrometheusRule(m ObjectMeta) ([]byte, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	body, err := yaml.Marshal(map[string]any{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "PrometheusRule",
		"metadata":   m.metadata("anthill"),
		"spec":       map[string]any{"groups": groupsYAML(o.params())},
	})
	if err != nil {
		return nil, err
	}
	return append([]byte(header), body...), nil
}
