package admin

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// transitionRecord is one transition as -o json and -o yaml print it: the
// fields of the text line, named.
type transitionRecord struct {
	Time      time.Time `json:"time"`
	Namespace string    `json:"namespace"`
	Kind      string    `json:"kind"`
	Name      string    `json:"name"`
	Machine   string    `json:"machine"`
	Subject   string    `json:"subject,omitempty"`
	From      string    `json:"from,omitempty"`
	To        string    `json:"to,omitempty"`
	Event     string    `json:"event,omitempty"`
	Reason    string    `json:"reason,omitempty"`
	Message   string    `json:"message,omitempty"`
	Warning   bool      `json:"warning,omitempty"`
	Count     int32     `json:"count,omitempty"`
}

func recordOf(l transitionLine) transitionRecord {
	return transitionRecord{
		Time: l.Time.UTC(), Namespace: l.Namespace, Kind: l.Kind, Name: l.Name, Machine: l.Machine, Subject: l.Subject,
		From: l.From, To: l.To, Event: l.Event, Reason: l.Reason, Message: l.Message, Warning: l.Warning, Count: l.Count,
	}
}

// transitionPrinter is how the stream writes one line in format: nil for
// the text line, a record per line (JSON) or document (YAML), or the text
// line always with the namespace (wide).
func transitionPrinter(format string) func(io.Writer, transitionLine) error {
	switch format {
	case outputJSON, outputYAML:
		return func(w io.Writer, l transitionLine) error { return printStreamDoc(w, format, recordOf(l)) }
	case outputWide:
		return func(w io.Writer, l transitionLine) error {
			_, err := fmt.Fprintln(w, formatTransition(l, true))
			return err
		}
	}
	return nil
}

func (r *root) transitionsCommand() *cobra.Command {
	var opts transitionsOptions
	var all bool
	cmd := &cobra.Command{
		Use:   "transitions [CLUSTER]",
		Short: "print the state-machine transition log from Kubernetes Events (-f to follow)",
		Long: "Prints one line per state-machine transition, oldest first:\n" +
			"  TIME  KIND/NAME  [MACHINE[ SUBJECT]: ]FROM -> TO  (event)  reason: message\n" +
			"MACHINE is shown when it is not the object's own machine (heal, upgrade on a cluster).\n" +
			"Warning Events of the operator (a failed or blocked step) are printed as\n" +
			"  TIME  KIND/NAME  WARNING  reason: message\n" +
			"With -A (or -o wide) the namespace follows the time. CLUSTER limits the log to\n" +
			"that GlusterCluster and its GlusterNodes (--cluster is kubectl's: the kubeconfig\n" +
			"cluster). -o json prints one JSON object per transition and line, -o yaml one\n" +
			"YAML document per transition, so a follow stream can be read record by record.",
		Example: "  " + r.name + " transitions -f -n gluster\n  " + r.name + " transitions gluster -n gluster --since 30m -o json",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cli.UsageError(fmt.Errorf("unexpected arguments %q after CLUSTER %q", args[1:], args[0]))
			}
			return nil
		},
		ValidArgsFunction: r.completeClusters,
	}
	cmd.Flags().BoolVarP(&opts.Follow, "follow", "f", false, "keep watching for new transitions until interrupted")
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "transitions of all namespaces")
	cmd.Flags().DurationVar(&opts.Since, "since", 0, "only transitions newer than this, such as 30m; default all the API server holds")
	output := outputFlag(cmd, outputJSON, outputYAML, outputWide)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if opts.Since < 0 {
			return cli.UsageError(fmt.Errorf("--since must not be negative, got %s", opts.Since))
		}
		if all && r.kube.namespaceSet() {
			return cli.UsageError(errors.New("-A (all namespaces) and -n/--namespace exclude each other"))
		}
		if len(args) == 1 {
			opts.Cluster = args[0]
		}
		kc, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		if !all {
			opts.Namespace = ns
		}
		opts.Errors = r.streams.ErrOut
		opts.Print = transitionPrinter(*output)
		return streamTransitions(cmd.Context(), kc, ac, opts, r.out())
	}
	return cmd
}
