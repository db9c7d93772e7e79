// Command anthill is the single anthill binary: the operator itself and the
// tools an admin or a test uses around it. Each subcommand lives in its own
// file and registers itself in commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"sort"
	"syscall"
)

// command is one subcommand of the anthill binary.
type command struct {
	summary string
	// run parses args itself (with its own flag.FlagSet) and returns when
	// done or when ctx is cancelled by SIGINT/SIGTERM.
	run func(ctx context.Context, args []string) error
}

// commands is filled by the init functions of the subcommand files.
var commands = map[string]command{}

func register(name string, c command) {
	if _, dup := commands[name]; dup {
		panic("anthill: duplicate subcommand " + name)
	}
	commands[name] = c
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: anthill COMMAND [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(os.Stderr, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(os.Stderr, "\nRun 'anthill COMMAND -h' for the flags of one command.")
}

func main() {
	if len(os.Args) < 2 || os.Args[1] == "-h" || os.Args[1] == "--help" || os.Args[1] == "help" {
		usage()
		os.Exit(2)
	}
	c, ok := commands[os.Args[1]]
	if !ok {
		fmt.Fprintf(os.Stderr, "anthill: unknown command %q\n\n", os.Args[1])
		usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := c.run(ctx, os.Args[2:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(2)
		}
		fmt.Fprintf(os.Stderr, "anthill %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}
