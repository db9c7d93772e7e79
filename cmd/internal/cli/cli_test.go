package cli

import (
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
)

func testProgram(ran *[]string) *Program {
	p := New("tool", "See also: other-tool.")
	p.Register("zeta", Command{Summary: "the last one", Run: func(_ context.Context, args []string) error {
		*ran = append(*ran, "zeta "+strings.Join(args, " "))
		return nil
	}})
	p.Register("alpha", Command{Summary: "fails", Run: func(context.Context, []string) error {
		return errors.New("boom")
	}})
	p.Register("help-me", Command{Summary: "asks for help", Run: func(context.Context, []string) error {
		return flag.ErrHelp
	}})
	p.Register("timeout", Command{Summary: "waits too long", Run: func(context.Context, []string) error {
		return &ExitError{Code: ExitTimeout, Err: errors.New("ran out")}
	}})
	p.Register("bad-usage", Command{Summary: "is misused", Run: func(context.Context, []string) error {
		return UsageError(errors.New("no"))
	}})
	return p
}

func TestUsageListsEveryCommandSortedWithTheNote(t *testing.T) {
	var out strings.Builder
	testProgram(new([]string)).Usage(&out)
	got := out.String()
	var order []int
	for _, want := range []string{"usage: tool COMMAND", "  alpha ", "  help-me ", "  version      print the tool version", "  zeta         the last one", "Run 'tool COMMAND -h'", "See also: other-tool."} {
		i := strings.Index(got, want)
		if i < 0 {
			t.Fatalf("usage lacks %q:\n%s", want, got)
		}
		order = append(order, i)
	}
	for i := 1; i < len(order); i++ {
		if order[i] < order[i-1] {
			t.Fatalf("usage is out of order:\n%s", got)
		}
	}
}

func TestRunReturnsTheExitCode(t *testing.T) {
	tests := []struct {
		args      []string
		code      int
		stderrHas string
	}{
		{args: []string{"zeta", "a", "b"}, code: 0},
		{args: nil, code: 2, stderrHas: "usage: tool"},
		{args: []string{"-h"}, code: 0, stderrHas: "usage: tool"},
		{args: []string{"--help"}, code: 0, stderrHas: "usage: tool"},
		{args: []string{"timeout"}, code: 124, stderrHas: "tool timeout: ran out"},
		{args: []string{"bad-usage"}, code: 2, stderrHas: "tool bad-usage: no"},
		{args: []string{"nope"}, code: 2, stderrHas: `tool: unknown command "nope"`},
		{args: []string{"alpha"}, code: 1, stderrHas: "tool alpha: boom"},
		{args: []string{"help-me"}, code: 0},
	}
	for _, tt := range tests {
		var ran []string
		var stderr strings.Builder
		code := testProgram(&ran).Run(context.Background(), tt.args, &stderr)
		if code != tt.code || !strings.Contains(stderr.String(), tt.stderrHas) {
			t.Errorf("Run(%q) = %d, stderr %q; want %d and %q", tt.args, code, stderr.String(), tt.code, tt.stderrHas)
		}
		if tt.args != nil && tt.args[0] == "zeta" && (len(ran) != 1 || ran[0] != "zeta a b") {
			t.Errorf("Run(%q) ran %q, want zeta with its arguments", tt.args, ran)
		}
	}
}

func TestRegisterRefusesADuplicate(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("registering version twice did not panic")
		}
	}()
	New("tool", "").Register("version", Command{})
}
