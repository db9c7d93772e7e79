// Command anthill is the binary the operator image ships: the operator
// itself, and the admin commands (status, transitions, node, diagram),
// which are cmd/internal/admin's — the same as `kubectl gluster`'s, the
// plugin admins use day to day. The sandbox and the GD2 simulator, which
// need test code, are in cmd/anthill-dev.
package main

import (
	"github.com/gluster/anthill/cmd/internal/admin"
	"github.com/gluster/anthill/cmd/internal/cli"
)

// commands are anthill's subcommands: operator (registered by its file),
// version, and the admin commands.
var commands = cli.New("anthill", "For day-2 work, kubectl gluster (bin/kubectl-gluster) has the admin commands with kubectl's flags.\n"+
	"The sandbox and the GD2 simulator are in anthill-dev (make build puts it next to anthill).")

func init() {
	for _, name := range admin.CommandNames {
		commands.Register(name, admin.Delegate(name))
	}
}

func main() { commands.Main() }
