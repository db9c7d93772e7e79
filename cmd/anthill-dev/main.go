// Command anthill-dev is the developer's companion to anthill: the local
// sandbox (a real control plane, the GD2 simulator, the operator and a
// sample cluster) and the GD2 simulator on its own. It carries the test
// control-plane launcher (e2e/framework) and the simulator (gd2/sim), which
// the shipped anthill binary leaves out; the sandbox runs the operator and
// its transition stream with the anthill binary.
package main

import "github.com/gluster/anthill/cmd/internal/cli"

// commands are anthill-dev's subcommands, filled by the init functions of
// the subcommand files.
var commands = cli.New("anthill-dev", "The operator and the admin commands (transitions, status, node) are in anthill.")

func main() { commands.Main() }
