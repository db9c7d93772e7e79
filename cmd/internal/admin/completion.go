package admin

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/cmd/internal/cli"
)

// completeClusters completes the first argument with the GlusterClusters
// of the namespace the flags select.
func (r *root) completeClusters(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	_, ac, ns, err := r.kube.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := ac.OperatorV1alpha1().GlusterClusters(ns).List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(list.Items))
	for _, c := range list.Items {
		names = append(names, c.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// completeNodes completes the first argument with the GlusterNodes of the
// namespace the flags select.
func (r *root) completeNodes(cmd *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	_, ac, ns, err := r.kube.clients()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	list, err := ac.OperatorV1alpha1().GlusterNodes(ns).List(cmd.Context(), metav1.ListOptions{})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names := make([]string, 0, len(list.Items))
	for _, n := range list.Items {
		names = append(names, n.Name)
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}

// initCompletionCommand adds cobra's completion command to root, with a
// shell it does not know (or none) a usage error naming the valid ones,
// rather than its help and exit code 0.
func initCompletionCommand(root *cobra.Command) {
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() != "completion" {
			continue
		}
		var shells []string
		for _, s := range c.Commands() {
			shells = append(shells, s.Name())
		}
		c.Args = cobra.ArbitraryArgs
		c.RunE = func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.UsageError(fmt.Errorf("missing SHELL; valid shells: %s", strings.Join(shells, ", ")))
			}
			return cli.UsageError(fmt.Errorf("unknown shell %q; valid shells: %s", args[0], strings.Join(shells, ", ")))
		}
	}
}
