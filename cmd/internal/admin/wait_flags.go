package admin

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// waitFlags are a command's --wait and --timeout: whether it waits until
// what it asked for has happened, and for how long at most.
type waitFlags struct {
	wait    bool
	timeout time.Duration
}

// addWaitFlags adds --wait (waiting until until) and --timeout to cmd.
func addWaitFlags(cmd *cobra.Command, until string) *waitFlags {
	w := &waitFlags{}
	cmd.Flags().BoolVar(&w.wait, "wait", false, "wait until "+until)
	cmd.Flags().DurationVar(&w.timeout, "timeout", 30*time.Minute, "how long --wait waits")
	return w
}

// check refuses a --timeout that is not positive, as a usage error.
func (w *waitFlags) check() error {
	if w.timeout <= 0 {
		return cli.UsageError(fmt.Errorf("--timeout must be positive, got %s", w.timeout))
	}
	return nil
}
