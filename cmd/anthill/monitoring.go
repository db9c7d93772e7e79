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
	"github.com/gluster/anthill/monitoring"
)

func init() {
	commands.Register("monitoring", cli.Command{
		Summary: "print anthill's Prometheus rules (--format rules|prometheusrule), or write manifests/monitoring",
		Run:     func(_ context.Context, args []string) error { return monitoringCmd(args, os.Stdout, os.Stderr) },
	})
}

// PrometheusRuleFile is the generated file in manifests/monitoring.
const PrometheusRuleFile = "prometheusrule.yaml"

// monitoringCmd implements `anthill monitoring [--format F]` and
// `anthill monitoring --write-manifests DIR`.
func monitoringCmd(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("monitoring", flag.ContinueOnError)
	fs.SetOutput(stderr)
	format := fs.String("format", "rules", "rules (a Prometheus rules file, for promtool) or prometheusrule (the Prometheus Operator's object)")
	write := fs.String("write-manifests", "", "write DIR/"+PrometheusRuleFile+" instead of printing")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *write != "" {
		out, err := monitoring.PrometheusRule()
		if err != nil {
			return err
		}
		if err := os.MkdirAll(*write, 0o755); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(*write, PrometheusRuleFile), out, 0o644)
	}
	var out []byte
	var err error
	switch *format {
	case "rules":
		out, err = monitoring.RulesFile()
	case "prometheusrule":
		out, err = monitoring.PrometheusRule()
	default:
		err = errors.New("--format must be rules or prometheusrule")
	}
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}
