package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/monitoring"
)

func init() {
	commands.Register("monitoring", cli.Command{
		Summary: "print anthill's Prometheus rules or Grafana dashboards (--format rules|prometheusrule|servicemonitor|dashboards), or write a monitoring directory for kustomize (--write-manifests)",
		Run:     func(_ context.Context, args []string) error { return monitoringCmd(args, os.Stdout, os.Stderr) },
	})
}

// Where --write-chart puts the chart's rule groups and its dashboards.
const (
	ChartGroupsFile    = "templates/_prometheusrule_groups.tpl"
	ChartDashboardsDir = "files/dashboards"
)

// keyValues is a repeatable NAME=VALUE flag.
type keyValues map[string]string

func (kv keyValues) String() string {
	var out []string
	for k, v := range kv {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func (kv keyValues) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || k == "" {
		return fmt.Errorf("%q is not NAME=VALUE", s)
	}
	kv[k] = v
	return nil
}

// monitoringCmd implements `anthill monitoring [--format F] [options]`,
// `anthill monitoring --write-manifests DIR [options]` and
// `anthill monitoring --write-chart CHART`.
func monitoringCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("monitoring", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "rules", "rules (a Prometheus rules file, for promtool), prometheusrule (the Prometheus Operator's object), servicemonitor or dashboards (a ConfigMap of Grafana dashboards)")
	write := fs.String("write-manifests", "", "write a monitoring directory for kustomize (DIR/"+monitoring.KustomizationFile+" and its objects, as manifests/monitoring) instead of printing")
	chart := fs.String("write-chart", "", "write the chart's rule groups, read from its values, to CHART/"+ChartGroupsFile+" and its dashboards to CHART/"+ChartDashboardsDir)
	o := monitoring.DefaultOptions()
	fs.StringVar(&o.RunbookBaseURL, "runbook-base-url", o.RunbookBaseURL, "each alert's runbook_url is this followed by <alert>.md")
	fs.StringVar(&o.OperatorJob, "operator-job", o.OperatorJob, "the Prometheus job the operator is scraped as (AnthillOperatorDown)")
	thresholds := keyValues{}
	fs.Var(thresholds, "threshold", "NAME=VALUE, repeatable: an alert threshold ("+strings.Join(monitoring.ThresholdNames(), ", ")+")")
	var m monitoring.ObjectMeta
	fs.StringVar(&m.Namespace, "namespace", monitoring.DefaultNamespace, "the namespace of the ServiceMonitor, PodMonitor, PrometheusRule and dashboards")
	labels := keyValues{}
	fs.Var(labels, "label", "KEY=VALUE, repeatable: a label of the ServiceMonitor, PodMonitor and PrometheusRule (e.g. release=kube-prometheus-stack, for its selectors)")
	operatorNS := fs.String("operator-namespace", monitoring.OperatorNamespace, "the namespace the operator runs in (the ServiceMonitor selects its Service there)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for name, s := range thresholds {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("--threshold %s=%s: not a number", name, s)
		}
		o.Thresholds[name] = v
	}
	if len(labels) > 0 {
		m.Labels = labels
	}
	if err := o.Validate(); err != nil {
		return err
	}
	switch {
	case *chart != "":
		return writeChart(*chart)
	case *write != "":
		files, err := o.Manifests(m, *operatorNS)
		if err != nil {
			return err
		}
		if err := os.MkdirAll(*write, 0o755); err != nil {
			return err
		}
		for file, out := range files {
			if err := os.WriteFile(filepath.Join(*write, file), out, 0o644); err != nil {
				return err
			}
		}
		return nil
	}
	var out []byte
	var err error
	switch *format {
	case "rules":
		out, err = o.RulesFile()
	case "prometheusrule":
		out, err = o.PrometheusRule(m)
	case "servicemonitor":
		out, err = monitoring.ServiceMonitor(m, *operatorNS)
	case "dashboards":
		out, err = monitoring.DashboardsConfigMap()
	default:
		err = errors.New("--format must be rules, prometheusrule, servicemonitor or dashboards")
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// writeChart writes the chart's generated files: the rule groups template
// and one file per dashboard (files/dashboards holds nothing else).
func writeChart(chart string) error {
	out, err := monitoring.HelmRuleGroups()
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(chart, ChartGroupsFile), out, 0o644); err != nil {
		return err
	}
	files, err := monitoring.DashboardFiles()
	if err != nil {
		return err
	}
	dir := filepath.Join(chart, ChartDashboardsDir)
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}
