// Command anthill is the binary the operator image ships: the operator
// itself and the tools an admin uses around it. Each subcommand lives in
// its own file and registers itself in commands. The sandbox and the GD2
// simulator, which need test code, are in cmd/anthill-dev.
package main

import "github.com/gluster/anthill/cmd/internal/cli"

// commands are anthill's subcommands, filled by the init functions of the
// subcommand files.
var commands = cli.New("anthill", "The sandbox and the GD2 simulator are in anthill-dev (make build puts it next to anthill).")

func main() { commands.Main() }
