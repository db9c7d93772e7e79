package admin

import (
	"context"
	"fmt"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// versionInfo is what `version -o json|yaml` prints: the plugin's own
// version and, unless --client, the operator's as its Deployment shows it.
type versionInfo struct {
	Version   string               `json:"version"`
	GoVersion string               `json:"goVersion"`
	Platform  string               `json:"platform"`
	Operator  *operatorVersionInfo `json:"operator,omitempty"`
}

// operatorVersionInfo is the operator's side of version. Version is
// empty when the operator does not run: nothing of that version acts.
type operatorVersionInfo struct {
	Running bool   `json:"running"`
	Version string `json:"version,omitempty"`
	Summary string `json:"summary"`
	// Checked is what the plugin read of the operator.
	Checked *operatorHealth `json:"checked,omitempty"`
}

// operatorVersionTimeout bounds version's look at the operator when
// --request-timeout does not: the plugin's own version prints regardless.
const operatorVersionTimeout = 10 * time.Second

func (r *root) versionCommand() *cobra.Command {
	var client bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the " + r.name + " version and the anthill operator's",
		Long: "Prints the version of " + r.name + " and of the anthill operator: the tag of the\n" +
			"image its Deployment runs (else its app.kubernetes.io/version label), with how\n" +
			"many replicas are ready and which holds the leader Lease. A stopped operator\n" +
			"has no version that acts: version says why it is not running instead.\n" +
			"--client prints the plugin's version alone, without a cluster.",
		Args: exactArgs(),
	}
	cmd.Flags().BoolVar(&client, "client", false, "print the plugin's version only; ask no cluster")
	output := outputFlag(cmd, outputJSON, outputYAML)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v := versionInfo{Version: cli.Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
		if !client {
			v.Operator = r.operatorVersion(cmd.Context())
		}
		if machineReadable(*output) {
			return printDoc(r.out(), *output, v)
		}
		if _, err := fmt.Fprintf(r.out(), "%s %s (%s, %s)\n", r.name, v.Version, v.GoVersion, v.Platform); err != nil {
			return err
		}
		if v.Operator == nil {
			return nil
		}
		_, err := fmt.Fprintf(r.out(), "anthill operator: %s\n", v.Operator.Summary)
		return err
	}
	return cmd
}

// operatorVersion reads the operator's version and state for version;
// what cannot be read is said in the summary.
func (r *root) operatorVersion(ctx context.Context) *operatorVersionInfo {
	if r.kube.noConfig() {
		return &operatorVersionInfo{Summary: "unknown (no kubeconfig and not in a cluster: no cluster to ask)"}
	}
	ctx, cancel := context.WithTimeout(ctx, operatorVersionTimeout)
	defer cancel()
	h, err := r.readOperatorHealth(ctx)
	if err != nil {
		return &operatorVersionInfo{Summary: "unknown (" + err.Error() + ")"}
	}
	now := time.Now()
	o := &operatorVersionInfo{Checked: &h, Summary: h.summary(now)}
	o.Running = h.known() && h.found() && len(h.stoppedBecause(now)) == 0
	if o.Running {
		o.Version = h.Version
	}
	return o
}
