// Package cli is what the two anthill binaries (cmd/anthill, the shipped
// operator and admin tool, and cmd/anthill-dev, the sandbox and the GD2
// simulator) share: a registry of subcommands, the usage text listing them,
// the main loop that runs one of them until SIGINT or SIGTERM, and the
// version both report.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"sort"
	"syscall"
)

// Version is set at link time:
// -ldflags "-X github.com/gluster/anthill/cmd/internal/cli.Version=v0.1.0".
var Version = "dev"

// Command is one subcommand of a binary.
type Command struct {
	// Summary is the one line the usage text shows for the command.
	Summary string
	// Run parses args itself (with its own flag.FlagSet) and returns when
	// done or when ctx is cancelled by SIGINT/SIGTERM. A returned
	// flag.ErrHelp means the flag set has already printed the help.
	Run func(ctx context.Context, args []string) error
}

// Program is one binary: its name and its subcommands, each registered by
// the init function of the file that holds it.
type Program struct {
	name     string
	note     string
	commands map[string]Command
}

// New returns the program called name, with its version subcommand
// registered. note, when not empty, ends the usage text (say, where the
// commands of the other binary are).
func New(name, note string) *Program {
	p := &Program{name: name, note: note, commands: map[string]Command{}}
	p.Register("version", Command{Summary: "print the " + name + " version", Run: p.runVersion})
	return p
}

// Register adds the subcommand name; a name registered twice panics.
func (p *Program) Register(name string, c Command) {
	if _, dup := p.commands[name]; dup {
		panic(p.name + ": duplicate subcommand " + name)
	}
	p.commands[name] = c
}

// Usage writes the program's usage: its subcommands, sorted by name, with
// their summaries.
func (p *Program) Usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s COMMAND [flags]\n\ncommands:\n", p.name)
	names := make([]string, 0, len(p.commands))
	for n := range p.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, p.commands[n].Summary)
	}
	fmt.Fprintf(w, "\nRun '%s COMMAND -h' for the flags of one command.\n", p.name)
	if p.note != "" {
		fmt.Fprintln(w, p.note)
	}
}

// Exit codes every anthill binary uses, so that scripts can tell a
// failure from a mistake in the command line and from a wait that ran out.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
	// ExitTimeout is what timeout(1) returns: a --wait ran out.
	ExitTimeout = 124
)

// ExitError is an error with the exit code it should end the process with.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string { return e.Err.Error() }
func (e *ExitError) Unwrap() error { return e.Err }

// UsageError wraps err as a usage error (exit code 2).
func UsageError(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// Code is the exit code of err: 0 for nil, the code of an ExitError in its
// chain, else ExitFailure.
func Code(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	return ExitFailure
}

// Run runs the subcommand args[0] with the rest of args, reporting errors
// and usage on stderr, and returns the exit code: 0 on success and for a
// help request, 1 when the command failed, 2 for a usage error, or the
// code an ExitError carries.
func (p *Program) Run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		p.Usage(stderr)
		return ExitOK
	}
	if len(args) == 0 {
		p.Usage(stderr)
		return ExitUsage
	}
	c, ok := p.commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", p.name, args[0])
		p.Usage(stderr)
		return ExitUsage
	}
	if err := c.Run(ctx, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		fmt.Fprintf(stderr, "%s %s: %v\n", p.name, args[0], err)
		return Code(err)
	}
	return ExitOK
}

// Main runs the subcommand named by the process's arguments, with a
// context that SIGINT and SIGTERM cancel, and exits with its code.
func (p *Program) Main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := p.Run(ctx, os.Args[1:], os.Stderr)
	stop()
	os.Exit(code)
}

func (p *Program) runVersion(_ context.Context, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Printf("%s %s (%s, %s/%s)\n", p.name, Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
