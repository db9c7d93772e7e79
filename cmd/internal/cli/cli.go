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

// Run runs the subcommand args[0] with the rest of args, reporting errors
// and usage on stderr, and returns the exit code: 0 on success, 1 when the
// command failed, 2 for a usage error or a help request.
func (p *Program) Run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		p.Usage(stderr)
		return 2
	}
	c, ok := p.commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n\n", p.name, args[0])
		p.Usage(stderr)
		return 2
	}
	if err := c.Run(ctx, args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 2
		}
		fmt.Fprintf(stderr, "%s %s: %v\n", p.name, args[0], err)
		return 1
	}
	return 0
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
