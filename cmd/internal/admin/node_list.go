package admin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
)

func (r *root) nodeListCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list [CLUSTER]",
		Short: "list the GlusterNodes (of CLUSTER): zone, state, peer, age",
		Long: "Lists the GlusterNodes of the namespace, or of the GlusterCluster CLUSTER (by\n" +
			"spec.cluster), sorted by name: cluster, zone, the node machine's state, GD2\n" +
			"peer and age. -o wide adds the version, address and pending request; -o json\n" +
			"or -o yaml prints a v1 List of them, -o name their names, -o jsonpath=... a\n" +
			"template over that List.",
		Example:           "  " + r.name + " node list gluster -n gluster\n  " + r.name + " node list -n gluster -o jsonpath='{range .items[*]}{.metadata.name}={.status.state}{\"\\n\"}{end}'",
		ValidArgsFunction: r.completeClusters,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 1 {
				return cli.UsageError(fmt.Errorf("unexpected arguments %q", args[1:]))
			}
			return nil
		},
	}
	output := outputFlag(cmd, outputJSON, outputYAML, outputWide, outputName, outputJSONPath)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		_, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		cluster := ""
		if len(args) == 1 {
			cluster = args[0]
		}
		return listNodes(cmd.Context(), ac, ns, cluster, *output, r.out(), time.Now())
	}
	return cmd
}

// glusterNodes lists the GlusterNodes of ns that belong to cluster, every
// one for "". They are selected by spec.cluster, not by label: a node
// added by hand carries no operator labels but is as much part of the
// cluster.
func glusterNodes(ctx context.Context, ac versioned.Interface, ns, cluster string) ([]operatorv1alpha1.GlusterNode, error) {
	list, err := ac.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("list GlusterNodes in namespace %s: %w", ns, err)
	}
	var nodes []operatorv1alpha1.GlusterNode
	for _, n := range list.Items {
		if cluster == "" || n.Spec.Cluster == cluster {
			nodes = append(nodes, n)
		}
	}
	return nodes, nil
}

// listNodes writes the GlusterNodes of ns (of cluster, when not empty)
// in format; now dates their age.
func listNodes(ctx context.Context, ac versioned.Interface, ns, cluster, format string, w io.Writer, now time.Time) error {
	nodes, err := glusterNodes(ctx, ac, ns, cluster)
	if err != nil {
		return err
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	if machineReadable(format) {
		l := objectList{APIVersion: "v1", Kind: "List", Items: []any{}}
		var refs []objectRef
		for i := range nodes {
			n := nodes[i].DeepCopy()
			n.APIVersion, n.Kind = operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterNode
			l.Items = append(l.Items, n)
			refs = append(refs, objectRef{n.APIVersion, n.Kind, n.Name})
		}
		return printData(w, format, l, refs...)
	}
	if len(nodes) == 0 {
		where := "namespace " + ns
		if cluster != "" {
			where = "GlusterCluster " + ns + "/" + cluster
		}
		_, err := fmt.Fprintf(w, "No GlusterNodes in %s.\n", where)
		return err
	}
	header := []string{"NAME", "CLUSTER", "ZONE", "STATE", "PEER", "AGE"}
	if format == outputWide {
		header = append(header, "VERSION", "ADDRESS", "REQUEST")
	}
	var b strings.Builder
	table(&b, header, func(row func(...string)) {
		for _, n := range nodes {
			state := orDash(n.Status.State)
			if n.DeletionTimestamp != nil {
				state += " (deleting)"
			}
			cells := []string{n.Name, n.Spec.Cluster, orDash(n.Spec.Zone), state, orDash(n.Status.PeerID), duration.HumanDuration(now.Sub(n.CreationTimestamp.Time))}
			if format == outputWide {
				cells = append(cells, orDash(n.Status.Version), orDash(n.Status.Address), orDash(n.Annotations[objects.AnnotationRequest]))
			}
			row(cells...)
		}
	})
	// The table is indented for status; a list reads as kubectl get's.
	for line := range strings.Lines(b.String()) {
		if _, err := io.WriteString(w, strings.TrimPrefix(line, "  ")); err != nil {
			return err
		}
	}
	return nil
}
