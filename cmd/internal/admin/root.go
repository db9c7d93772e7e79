// Package admin is the admin's command line: status, transitions, node
// requests, diagrams, version, and a cluster's guided creation and safe
// deletion, on cobra with kubectl's connection flags.
// cmd/kubectl-gluster runs it as the kubectl plugin `kubectl gluster`;
// cmd/anthill runs the same commands as `anthill status`, `anthill
// transitions` and so on, so there is one implementation of each.
package admin

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// PluginName is the name kubectl runs the plugin by: an executable
// kubectl-gluster on the PATH is `kubectl gluster`.
const PluginName = "kubectl gluster"

// CommandNames are the admin commands cmd/anthill also offers, each run
// through this package's command tree.
var CommandNames = []string{"status", "transitions", "node", "explain", "diagram"}

// root is one command tree with what its commands share.
type root struct {
	// name is how the user invokes the program ("kubectl gluster" or
	// "anthill"); it prefixes usage lines and the commands it suggests.
	name    string
	streams genericiooptions.IOStreams
	kube    *kubeFlags
	// operatorNamespace is where the operator's Deployment and Lease are
	// looked for (--operator-namespace); operatorNamespaceSet says it was
	// given, so the Deployment is not looked for in other namespaces.
	operatorNamespace    string
	operatorNamespaceSet bool
	// started is set once a command's own code runs; an error before
	// that is an error in the command line (exit code 2).
	started bool
}

// newRoot is the root of the command tree called name, reading and
// writing streams.
func newRoot(name string, streams genericiooptions.IOStreams) *root {
	return &root{name: name, streams: streams, kube: newKubeFlags()}
}

func (r *root) command() *cobra.Command {
	cmd := &cobra.Command{
		Use:   strings.ReplaceAll(r.name, " ", "-"),
		Short: "Day-2 administration of anthill's Gluster clusters",
		Long: "Day-2 administration of anthill's Gluster clusters: cluster status, the\n" +
			"state-machine transition log, node decommission, maintenance and resume,\n" +
			"the state diagrams, and a cluster's guided creation (init) and safe\n" +
			"deletion (delete). Connection flags are kubectl's.",
		Annotations:   map[string]string{cobra.CommandDisplayNameAnnotation: r.name},
		SilenceErrors: true,
		SilenceUsage:  true,
		// The commands' own code starts here: any error before is the
		// command line's. What reads the clusters first says whether
		// anything acts on them.
		PersistentPreRun: func(c *cobra.Command, _ []string) {
			r.started = true
			r.operatorNamespaceSet = c.Flags().Changed(flagOperatorNamespace)
			if checksOperator(c) {
				r.warnIfOperatorStopped(c.Context())
			}
		},
	}
	cmd.SetIn(r.streams.In)
	cmd.SetOut(r.streams.Out)
	cmd.SetErr(r.streams.ErrOut)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return cli.UsageError(err) })
	r.kube.config.AddFlags(cmd.PersistentFlags())
	cmd.PersistentFlags().StringVar(&r.operatorNamespace, flagOperatorNamespace, defaultOperatorNamespace,
		"namespace of the anthill operator's Deployment, whose readiness and leader Lease each command checks before it reports; when not given and this namespace has none, the namespace that has one")
	cmd.AddCommand(r.statusCommand(), r.transitionsCommand(), r.nodeCommand(), r.explainCommand(), r.diagramCommand(), r.versionCommand(), r.initCommand(), r.deleteCommand(), r.migrateStorageCommand(), r.toolboxCommand())
	initCompletionCommand(cmd)
	return cmd
}

// Execute runs the command tree called name with args and returns the
// exit code, writing an error as one line on streams.ErrOut: 0 on success
// and for --help, 1 when a command failed, 2 for a mistake in the command
// line, 124 when a --wait ran out.
func Execute(ctx context.Context, name string, args []string, streams genericiooptions.IOStreams) int {
	r := newRoot(name, streams)
	cmd := r.command()
	cmd.SetArgs(args)
	sub, err := cmd.ExecuteContextC(ctx)
	if err == nil {
		return cli.ExitOK
	}
	code := cli.Code(err)
	if !r.started && code == cli.ExitFailure {
		// Cobra's own errors (an unknown command, a missing argument)
		// are not typed: before the command ran, they are usage errors.
		code = cli.ExitUsage
	}
	msg := err.Error()
	// Cobra appends "Did you mean this?" suggestions on further lines;
	// one line says it.
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	if code == cli.ExitUsage {
		msg += fmt.Sprintf(" (see '%s --help')", sub.CommandPath())
	}
	fmt.Fprintf(streams.ErrOut, "error: %s\n", msg)
	return code
}

// Main runs the command tree called name on the process's arguments, with
// a context SIGINT and SIGTERM cancel, and exits with its code.
func Main(name string) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Execute(ctx, name, os.Args[1:], genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	stop()
	os.Exit(code)
}

// Delegate is cmd/anthill's subcommand name run through the command tree
// called "anthill", so `anthill status` is `kubectl gluster status`.
func Delegate(name string) cli.Command {
	summaries := map[string]string{}
	for _, c := range (&root{name: "anthill", kube: newKubeFlags()}).command().Commands() {
		summaries[c.Name()] = c.Short
	}
	return cli.Command{
		Summary: summaries[name] + " (as kubectl gluster " + name + ")",
		Run: func(ctx context.Context, args []string) error {
			var errOut strings.Builder
			code := Execute(ctx, "anthill", append([]string{name}, args...), genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: &errOut})
			if code == cli.ExitOK {
				return nil
			}
			return &cli.ExitError{Code: code, Err: errors.New(strings.TrimPrefix(strings.TrimSpace(errOut.String()), "error: "))}
		},
	}
}

// exactArgs accepts exactly the named positional arguments, naming what is
// missing or extra; a mismatch is a usage error.
func exactArgs(names ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		switch {
		case len(args) < len(names):
			return cli.UsageError(fmt.Errorf("missing %s", strings.Join(names[len(args):], " and ")))
		case len(args) > len(names):
			return cli.UsageError(fmt.Errorf("unexpected arguments %q", args[len(names):]))
		}
		return nil
	}
}

// out is where a command prints its result.
func (r *root) out() io.Writer { return r.streams.Out }
