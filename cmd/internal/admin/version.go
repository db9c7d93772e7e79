package admin

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// versionInfo is what `version -o json|yaml` prints.
type versionInfo struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
}

func (r *root) versionCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the " + r.name + " version",
		Args:  exactArgs(),
	}
	output := outputFlag(cmd, outputJSON, outputYAML)
	cmd.RunE = func(*cobra.Command, []string) error {
		v := versionInfo{Version: cli.Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
		if machineReadable(*output) {
			return printDoc(r.out(), *output, v)
		}
		_, err := fmt.Fprintf(r.out(), "%s %s (%s, %s)\n", r.name, v.Version, v.GoVersion, v.Platform)
		return err
	}
	return cmd
}
