package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/gluster/anthill/cmd/internal/cli"
	"github.com/gluster/anthill/kube/monitoring"
)

func init() {
	commands.Register("monitoring", cli.Command{
		Summary: "print anthill's Prometheus rules or Grafana dashboards (--format rules|prometheusrule|dashboards), or write manifests/monitoring",
		Run:     func(_ context.Context, args []string) error { return monitoringCmd(args, os.Stdout, os.Stderr) },
	})
}

// The generated files in manifests/monitoring.
const (
	PrometheusRuleFile = "prometheusrule.yaml"
	DashboardsFile     = "dashboards.yaml"
)

// monitoringCmd implements `anthill monitoring [--format F]` and
// `anthill monitoring --write-manifests DIR`.
func monitoringCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("monitoring", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "rules", "rules (a Prometheus rules file, for promtool), prometheusrule (the Prometheus Operator's object) or dashboards (a ConfigMap of Grafana dashboards)")
	write := fs.String("write-manifests", "", "write DIR/"+PrometheusRuleFile+" and DIR/"+DashboardsFile+" instead of printing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *write != "" {
		if err := os.MkdirAll(*write, 0o755); err != nil {
			return err
		}
		for file, render := range map[string]func() ([]byte, error){PrometheusRuleFile: monitoring.PrometheusRule, DashboardsFile: monitoring.DashboardsConfigMap} {
			out, err := render()
			if err != nil {
				return err
			}
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
		out, err = monitoring.RulesFile()
	case "prometheusrule":
		out, err = monitoring.PrometheusRule()
	case "dashboards":
		out, err = monitoring.DashboardsConfigMap()
	default:
		err = errors.New("--format must be rules, prometheusrule or dashboards")
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
