// Command kubectl-gluster is the admin's command line as a kubectl plugin:
// on the PATH, `kubectl gluster status`, `kubectl gluster transitions -f`,
// `kubectl gluster node decommission NODE` and the rest, with kubectl's
// connection flags. The commands are cmd/internal/admin's, which
// `anthill` runs too.
package main

import "github.com/gluster/anthill/cmd/internal/admin"

func main() { admin.Main(admin.PluginName) }
