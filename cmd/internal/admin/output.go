package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/yaml"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// The values of -o/--output. The default, "", is the human summary.
// outputJSONPath stands for kubectl's -o jsonpath=TEMPLATE.
const (
	outputJSON     = "json"
	outputYAML     = "yaml"
	outputWide     = "wide"
	outputName     = "name"
	outputJSONPath = "jsonpath"
)

// jsonPathPrefix starts a -o jsonpath=TEMPLATE value.
const jsonPathPrefix = outputJSONPath + "="

// outputFlag registers -o/--output on cmd, accepting the formats given,
// and returns where the value lands. A jsonpath template is parsed
// before the command runs: a bad one is a usage error.
func outputFlag(cmd *cobra.Command, formats ...string) *string {
	o := new(string)
	shown := make([]string, len(formats))
	for i, f := range formats {
		shown[i] = f
		if f == outputJSONPath {
			shown[i] = jsonPathPrefix + "TEMPLATE"
		}
	}
	cmd.Flags().StringVarP(o, "output", "o", "", "output format: "+strings.Join(shown, ", ")+"; default the human summary")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions(formats, cobra.ShellCompDirectiveNoFileComp))
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		jsonPath := strings.HasPrefix(*o, jsonPathPrefix) && slices.Contains(formats, outputJSONPath)
		if *o != "" && !jsonPath && (!slices.Contains(formats, *o) || *o == outputJSONPath) {
			return cli.UsageError(fmt.Errorf("unknown output format %q; valid: %s", *o, strings.Join(shown, ", ")))
		}
		if jsonPath {
			if _, err := printers.NewJSONPathPrinter(strings.TrimPrefix(*o, jsonPathPrefix)); err != nil {
				return cli.UsageError(fmt.Errorf("bad -o jsonpath template: %w", err))
			}
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
	return o
}

// machineReadable reports whether format is data for a program: json,
// yaml, name or a jsonpath template.
func machineReadable(format string) bool {
	return format == outputJSON || format == outputYAML || format == outputName || strings.HasPrefix(format, jsonPathPrefix)
}

// objectRef names an object for -o name: its apiVersion, kind and name.
type objectRef struct{ apiVersion, kind, name string }

// printData writes v in format (json, yaml, name or jsonpath=TEMPLATE) as
// kubectl would: -o name prints refs as KIND.GROUP/NAME, one a line;
// jsonpath runs cli-runtime's printer over v as JSON.
func printData(w io.Writer, format string, v any, refs ...objectRef) error {
	switch {
	case format == outputName:
		p := &printers.NamePrinter{}
		for _, r := range refs {
			u := &unstructured.Unstructured{}
			u.SetAPIVersion(r.apiVersion)
			u.SetKind(r.kind)
			u.SetName(r.name)
			if err := p.PrintObj(u, w); err != nil {
				return err
			}
		}
		return nil
	case strings.HasPrefix(format, jsonPathPrefix):
		p, err := printers.NewJSONPathPrinter(strings.TrimPrefix(format, jsonPathPrefix))
		if err != nil {
			return cli.UsageError(fmt.Errorf("bad -o jsonpath template: %w", err))
		}
		// kubectl's default (--allow-missing-template-keys): a field an
		// object leaves out prints as nothing.
		p.AllowMissingKeys(true)
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("encode json: %w", err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return fmt.Errorf("decode json: %w", err)
		}
		if err := p.PrintObj(&unstructured.Unstructured{Object: m}, w); err != nil {
			return fmt.Errorf("-o %s: %w", format, err)
		}
		return nil
	}
	return printDoc(w, format, v)
}

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
