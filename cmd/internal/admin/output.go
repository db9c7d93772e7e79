package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// The values of -o/--output. The default, "", is the human summary.
const (
	outputJSON = "json"
	outputYAML = "yaml"
	outputWide = "wide"
)

// outputFlag registers -o/--output on cmd, accepting the formats given,
// and returns where the value lands.
func outputFlag(cmd *cobra.Command, formats ...string) *string {
	o := new(string)
	cmd.Flags().StringVarP(o, "output", "o", "", "output format: "+strings.Join(formats, ", ")+"; default the human summary")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if *o != "" && !slices.Contains(formats, *o) {
			return cli.UsageError(fmt.Errorf("unknown output format %q; valid: %s", *o, strings.Join(formats, ", ")))
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	return o
}

// machineReadable reports whether format is json or yaml.
func machineReadable(format string) bool { return format == outputJSON || format == outputYAML }

// printDoc writes v as one JSON document (indented, as kubectl does) or one
// YAML document.
func printDoc(w io.Writer, format string, v any) error {
	b, err := json.MarshalIndent(v, "", "    ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", format, err)
	}
	if format == outputYAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encode yaml: %w", err)
		}
		_, err = w.Write(b)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}

// printStreamDoc writes v as one record of a stream: one JSON object per
// line (what `jq` and json.Decoder read one by one), or one YAML document
// after a "---" separator.
func printStreamDoc(w io.Writer, format string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", format, err)
	}
	if format == outputYAML {
		if b, err = yaml.JSONToYAML(b); err != nil {
			return fmt.Errorf("encode yaml: %w", err)
		}
		_, err = fmt.Fprintf(w, "---\n%s", b)
		return err
	}
	_, err = fmt.Fprintf(w, "%s\n", b)
	return err
}
