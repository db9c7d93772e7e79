package admin

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func (r *root) statusCommand() *cobra.Command {
	var history int
	cmd := &cobra.Command{
		Use:   "status CLUSTER",
		Short: "summarise a GlusterCluster: phase, conditions, nodes, volumes, upgrade, recent transitions",
		Long: "Summarises the GlusterCluster CLUSTER and its GlusterNodes: phase, conditions,\n" +
			"capacity, each node's zone and state, each volume's heal state, the upgrade\n" +
			"and the most recent transitions. -o json or -o yaml prints a v1 List of the\n" +
			"GlusterCluster and its GlusterNodes instead (-o name their names, -o jsonpath=...\n" +
			"a template over that List); -o wide adds columns to the node table.",
		Example:           "  " + r.name + " status gluster -n gluster\n  " + r.name + " status gluster -n gluster -o json | jq .items[0].status.phase",
		Args:              exactArgs("CLUSTER"),
		ValidArgsFunction: r.completeClusters,
	}
	cmd.Flags().IntVar(&history, "history", 10, "number of recent transitions to show (cluster, upgrade and nodes together)")
	output := outputFlag(cmd, outputJSON, outputYAML, outputWide, outputName, outputJSONPath)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if history < 0 {
			return cli.UsageError(fmt.Errorf("--history must not be negative, got %d", history))
		}
		_, ac, ns, err := r.kube.clients()
		if err != nil {
			return err
		}
		return printStatus(cmd.Context(), ac, ns, args[0], history, *output, r.out())
	}
	return cmd
}

// printStatus reads GlusterCluster ns/name and its GlusterNodes and writes
// the summary to w.
func printStatus(ctx context.Context, ac versioned.Interface, ns, name string, history int, format string, w io.Writer) error {
	c, err := ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("GlusterCluster %q not found in namespace %s (list them with: kubectl get glusterclusters -n %s)", name, ns, ns)
		}
		return fmt.Errorf("get GlusterCluster %s/%s: %w", ns, name, err)
	}
	nodes, err := glusterNodes(ctx, ac, ns, name)
	if err != nil {
		return err
	}
	if machineReadable(format) {
		l := statusList(c, nodes)
		refs := []objectRef{{operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterCluster, c.Name}}
		for _, item := range l.Items[1:] {
			refs = append(refs, objectRef{operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterNode, item.(*operatorv1alpha1.GlusterNode).Name})
		}
		return printData(w, format, l, refs...)
	}
	return writeStatus(w, c, nodes, history, format == outputWide)
}

// objectList is a v1 List, the shape `kubectl get -o json` prints for
// several objects.
type objectList struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Items      []any  `json:"items"`
}

// statusList is the machine-readable status: the cluster, then its nodes
// sorted by name, each with its apiVersion and kind set.
func statusList(c *operatorv1alpha1.GlusterCluster, nodes []operatorv1alpha1.GlusterNode) objectList {
	l := objectList{APIVersion: "v1", Kind: "List"}
	c = c.DeepCopy()
	c.APIVersion, c.Kind = operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterCluster
	l.Items = append(l.Items, c)
	sorted := append([]operatorv1alpha1.GlusterNode(nil), nodes...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	for i := range sorted {
		n := sorted[i].DeepCopy()
		n.APIVersion, n.Kind = operatorv1alpha1.SchemeGroupVersion.String(), kindGlusterNode
		l.Items = append(l.Items, n)
	}
	return l
}

// writeStatus renders the summary of c and its nodes. It reads nothing but
// its arguments, so tests pin its output.
// wide adds the nodes' version, address and peer ID in full.
func writeStatus(w io.Writer, c *operatorv1alpha1.GlusterCluster, nodes []operatorv1alpha1.GlusterNode, history int, wide bool) error {
	var b strings.Builder
	phase := string(c.Status.Phase)
	if phase == "" {
		phase = "(not yet reported)"
	}
	fmt.Fprintf(&b, "GlusterCluster %s/%s\n", c.Namespace, c.Name)
	fmt.Fprintf(&b, "Phase:    %s\n", phase)
	mode := string(c.Spec.Mode)
	if mode == "" {
		mode = string(operatorv1alpha1.ClusterModeManual)
	}
	fmt.Fprintf(&b, "Mode:     %s\n", mode)
	if c.Spec.Gluster != nil && c.Spec.Gluster.Version != "" {
		fmt.Fprintf(&b, "Version:  %s\n", c.Spec.Gluster.Version)
	}
	if c.Spec.Paused {
		writePaused(&b, nodes)
	}
	if cp := c.Status.Capacity; cp != nil && cp.Total != nil {
		// GD2 reports free space in bytes and specs say Gi: both sides
		// in the same binary units.
		fmt.Fprintf(&b, "Capacity: %s free of %s\n", humanBytes(cp.Free), humanBytes(cp.Total))
		for _, z := range cp.Zones {
			fmt.Fprintf(&b, "  zone %s: %s free of %s\n", z.Zone, humanBytes(&z.Free), humanBytes(&z.Total))
		}
	}
	if a := c.Status.Autoscaling; a != nil {
		writeAutoscaling(&b, a)
	}

	b.WriteString("\nConditions:\n")
	if len(c.Status.Conditions) == 0 {
		b.WriteString("  (none)\n")
	} else {
		table(&b, []string{"TYPE", "STATUS", "REASON", "MESSAGE"}, func(row func(...string)) {
			for _, cd := range c.Status.Conditions {
				row(cd.Type, string(cd.Status), cd.Reason, cd.Message)
			}
		})
	}

	counts := c.Status.Nodes
	fmt.Fprintf(&b, "\nNodes: %d online, %d total, %d desired\n", counts.Online, counts.Total, counts.Desired)
	if len(nodes) == 0 {
		b.WriteString("  (none)\n")
	} else {
		sorted := append([]operatorv1alpha1.GlusterNode(nil), nodes...)
		sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
		header := []string{"NAME", "ZONE", "STATE", "PEER", "GD2 VERSION", "MESSAGE"}
		if wide {
			header = []string{"NAME", "ZONE", "STATE", "PEER", "VERSION", "GD2 VERSION", "ADDRESS", "REQUEST", "MESSAGE"}
		}
		table(&b, header, func(row func(...string)) {
			for _, n := range sorted {
				state := orDash(n.Status.State)
				if n.DeletionTimestamp != nil {
					state += " (deleting)"
				}
				if wide {
					row(n.Name, n.Spec.Zone, state, orDash(n.Status.PeerID), orDash(n.Status.Version), gd2Version(n), orDash(n.Status.Address),
						orDash(n.Annotations[objects.AnnotationRequest]), n.Status.Message)
					continue
				}
				row(n.Name, n.Spec.Zone, state, orDash(n.Status.PeerID), gd2Version(n), n.Status.Message)
			}
		})
		writeVersionMismatches(&b, sorted)
	}

	b.WriteString("\nVolumes:\n")
	if len(c.Status.Volumes) == 0 {
		b.WriteString("  (none)\n")
	} else {
		table(&b, []string{"NAME", "STATE", "PENDING", "SPLIT-BRAIN", "MESSAGE"}, func(row func(...string)) {
			for _, v := range c.Status.Volumes {
				row(v.Name, orDash(v.State), fmt.Sprint(v.PendingEntries), fmt.Sprint(v.SplitBrainEntries), v.Message)
			}
		})
	}

	writeStorageClasses(&b, c)
	writeSnapshots(&b, c)

	if u := c.Status.Upgrade; u != nil && u.State != "" {
		fmt.Fprintf(&b, "\nUpgrade:  %s", u.State)
		if u.FromVersion != "" || u.ToVersion != "" {
			fmt.Fprintf(&b, " %s -> %s", orDash(u.FromVersion), orDash(u.ToVersion))
		}
		if len(u.CurrentNodes) > 0 {
			fmt.Fprintf(&b, ", upgrading %s", strings.Join(u.CurrentNodes, ", "))
		}
		if u.Message != "" {
			fmt.Fprintf(&b, ": %s", u.Message)
		}
		b.WriteString("\n")
	}

	if history > 0 {
		lines := recentHistory(c, nodes, history)
		fmt.Fprintf(&b, "\nRecent transitions:\n")
		if len(lines) == 0 {
			b.WriteString("  (none)\n")
		}
		for _, l := range lines {
			b.WriteString("  " + formatTransition(l, false) + "\n")
		}
	}
	if ledger := c.Status.Ledger; len(ledger) > 0 {
		b.WriteString("\nLedger (brick moves and other lasting changes, oldest first):\n")
		for _, e := range ledger[max(0, len(ledger)-max(history, 1)):] {
			b.WriteString("  " + formatLedgerEntry(e) + "\n")
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// recentHistory merges the status.history windows of the cluster, its
// upgrade and its nodes and returns the newest n, oldest first.
func recentHistory(c *operatorv1alpha1.GlusterCluster, nodes []operatorv1alpha1.GlusterNode, n int) []transitionLine {
	var lines []transitionLine
	for _, r := range c.Status.History {
		lines = append(lines, historyLine(kindGlusterCluster, c.Namespace, c.Name, states.ClusterMachine, r))
	}
	if c.Status.Upgrade != nil {
		for _, r := range c.Status.Upgrade.History {
			lines = append(lines, historyLine(kindGlusterCluster, c.Namespace, c.Name, states.UpgradeMachine, r))
		}
	}
	for _, node := range nodes {
		for _, r := range node.Status.History {
			lines = append(lines, historyLine(kindGlusterNode, node.Namespace, node.Name, states.NodeMachine, r))
		}
	}
	// Stable: entries of one list with equal (second-precision) times keep
	// their recorded order.
	sort.SliceStable(lines, func(i, j int) bool { return lines[i].Time.Before(lines[j].Time) })
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// table writes an indented, aligned table to b.
func table(b *strings.Builder, header []string, rows func(row func(...string))) {
	var tb strings.Builder
	tw := tabwriter.NewWriter(&tb, 0, 0, 2, ' ', 0)
	write := func(cells ...string) {
		fmt.Fprintf(tw, "  %s\n", strings.Join(cells, "\t"))
	}
	write(header...)
	rows(write)
	_ = tw.Flush() // writes to a strings.Builder cannot fail
	// tabwriter pads cells before an empty last column; drop that padding.
	for line := range strings.Lines(tb.String()) {
		b.WriteString(strings.TrimRight(line, " \n") + "\n")
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// writePaused says what spec.paused holds, as the machines decide it
// (states.DecideNode and states.DecideCluster), and names the nodes that
// wait on it.
func writePaused(b *strings.Builder, nodes []operatorv1alpha1.GlusterNode) {
	b.WriteString("Paused:   yes; until spec.paused is cleared: no scaling, no drain or brick move, no peer removed,\n" +
		"          no failure handling, no node stopped for upgrade, no cluster option set, no teardown. A brick move or an upgrade\n" +
		"          restart already under way finishes; health, heal and disruption budgets are still reconciled.\n")
	var held []string
	for _, n := range nodes {
		for _, cond := range n.Status.Conditions {
			if cond.Reason == states.ReasonPaused {
				held = append(held, n.Name+" ("+n.Status.State+")")
				break
			}
		}
	}
	if len(held) > 0 {
		sort.Strings(held)
		fmt.Fprintf(b, "Held:     %s\n", strings.Join(held, ", "))
	}
}

// writeAutoscaling says what the autoscaler last decided (automatic mode):
// the cluster's reason, the last step, and each template's desired count,
// free capacity and reason.
func writeAutoscaling(b *strings.Builder, a *operatorv1alpha1.AutoscalingStatus) {
	fmt.Fprintf(b, "Autoscaling: %s", orDash(a.Reason))
	if a.Message != "" {
		fmt.Fprintf(b, ": %s", a.Message)
	}
	b.WriteString("\n")
	if a.LastScaleTime != nil {
		fmt.Fprintf(b, "  last step: %s\n", a.LastScaleTime.UTC().Format(time.RFC3339))
	}
	for _, t := range a.Templates {
		line := fmt.Sprintf("  template %s: %d desired, %s free, %s", t.Name, t.Desired, humanBytes(t.Free), orDash(t.Reason))
		if t.Message != "" {
			line += ": " + t.Message
		}
		b.WriteString(line + "\n")
	}
}

// formatLedgerEntry renders one status.ledger entry as
// "TIME  replaceBrick  VOLUME:BRICK  off NODE (peer P) -> one of T1,T2  STATE  REASON"
// for a brick move and "TIME  ACTION  NODE (peer P) [at VERSION]  STATE  REASON" otherwise.
func formatLedgerEntry(e operatorv1alpha1.LedgerEntry) string {
	var b strings.Builder
	at := e.Time.UTC().Format(time.RFC3339)
	switch e.Action {
	case operatorv1alpha1.LedgerActionReplaceBrick:
		fmt.Fprintf(&b, "%s  %s  %s:%s  off %s", at, e.Action, e.Volume, e.Brick, e.Node)
	case operatorv1alpha1.LedgerActionCreateNodes:
		fmt.Fprintf(&b, "%s  %s  %d from template %s", at, e.Action, e.Count, e.Template)
	case operatorv1alpha1.LedgerActionEnsureCSIDrivers:
		fmt.Fprintf(&b, "%s  %s  %s", at, e.Action, strings.Join(e.Objects, ", "))
	case operatorv1alpha1.LedgerActionSetClusterOptions:
		fmt.Fprintf(&b, "%s  %s  %s", at, e.Action, strings.Join(e.Options, ", "))
	case operatorv1alpha1.LedgerActionRollCSIDrivers:
		fmt.Fprintf(&b, "%s  %s  CSI clients", at, e.Action)
	case operatorv1alpha1.LedgerActionForceStartBricks:
		fmt.Fprintf(&b, "%s  %s  %s on %s", at, e.Action, e.Volume, e.Node)
	default:
		fmt.Fprintf(&b, "%s  %s  %s", at, e.Action, e.Node)
		if e.Template != "" {
			fmt.Fprintf(&b, " of template %s", e.Template)
		}
	}
	if e.Version != "" {
		fmt.Fprintf(&b, " at %s", e.Version)
	}
	if e.Peer != "" {
		fmt.Fprintf(&b, " (peer %s)", e.Peer)
	}
	if len(e.TargetPeers) > 0 {
		fmt.Fprintf(&b, " -> one of %s", strings.Join(e.TargetPeers, ","))
	}
	if e.State != "" {
		b.WriteString("  " + e.State)
	}
	if e.Reason != "" {
		b.WriteString("  " + e.Reason)
	}
	if e.Cause != "" {
		b.WriteString(" (drain: " + e.Cause + ")")
	}
	return b.String()
}

// writeStorageClasses lists the StorageClasses the cluster keeps, as its
// spec asks for them (objects.DesiredStorageClasses): name, the parameters
// the driver gets (none: the driver's defaults, replicas 3 on lvm bricks),
// reclaim policy, binding mode and whether it is the default class.
func writeStorageClasses(b *strings.Builder, c *operatorv1alpha1.GlusterCluster) {
	classes := objects.DesiredStorageClasses(c)
	b.WriteString("\nStorageClasses:\n")
	if len(classes) == 0 {
		b.WriteString("  (none)\n")
		return
	}
	table(b, []string{"NAME", "PARAMETERS", "RECLAIM", "BINDING", "DEFAULT"}, func(row func(...string)) {
		for _, sc := range classes {
			params := "(driver defaults: replicas=3 brickType=lvm)"
			if len(sc.Parameters) > 0 {
				var kv []string
				for _, k := range objects.CSIFileParameters {
					if v, ok := sc.Parameters[k]; ok {
						kv = append(kv, k+"="+v)
					}
				}
				params = strings.Join(kv, " ")
			}
			dflt := "-"
			if sc.Annotations[objects.AnnotationDefaultStorageClass] == "true" {
				dflt = "yes"
			}
			row(sc.Name, params, string(ptr.Deref(sc.ReclaimPolicy, "")), string(ptr.Deref(sc.VolumeBindingMode, "")), dflt)
		}
	})
}

// writeSnapshots says, for a cluster with spec.csi.snapshots.enabled,
// the VolumeSnapshotClass it keeps and, while a condition says the
// snapshot API is not served (reason SnapshotAPIMissing), that it waits
// for it.
func writeSnapshots(b *strings.Builder, c *operatorv1alpha1.GlusterCluster) {
	if !objects.SnapshotsEnabled(c) {
		return
	}
	vsc := objects.VolumeSnapshotClassObject(c)
	fmt.Fprintf(b, "\nSnapshots: VolumeSnapshotClass %s (driver %s, deletionPolicy %s)\n", vsc.GetName(), vsc.Object["driver"], vsc.Object["deletionPolicy"])
	for _, cond := range c.Status.Conditions {
		if cond.Reason == states.ReasonSnapshotAPIMissing {
			fmt.Fprintf(b, "  not created yet: %s\n", cond.Message)
			return
		}
	}
}

// gd2Version is the node's GD2 VERSION cell: what its GD2 reports at
// /version ("-" while unread, "(none)" for a build without one), with the
// version anthill records when the two differ (VersionMatches False).
func gd2Version(n operatorv1alpha1.GlusterNode) string {
	r := n.Status.GD2Version
	if r == nil {
		return "-"
	}
	v := r.Reported
	if v == "" {
		v = "(none)"
	}
	if c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionVersionMatches); c != nil && c.Status == metav1.ConditionFalse {
		v += " (not " + n.Status.Version + ")"
	}
	return v
}

// writeVersionMismatches names the nodes whose GD2 reports another
// release than the version anthill records for them (their VersionMatches
// condition False), with that condition's message once.
func writeVersionMismatches(b *strings.Builder, nodes []operatorv1alpha1.GlusterNode) {
	var names []string
	var msg string
	for _, n := range nodes {
		if c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionVersionMatches); c != nil && c.Status == metav1.ConditionFalse {
			names = append(names, n.Name)
			msg = c.Message
		}
	}
	if len(names) == 0 {
		return
	}
	fmt.Fprintf(b, "  VersionMismatch on %d of %d: %s. %s\n", len(names), len(nodes), strings.Join(names, ", "), msg)
}
