package admin

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/client/clientset/versioned"
	"github.com/gluster/anthill/kube/effects"
	nodemachine "github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// planGD2Timeout bounds each GD2 read of the plan: an admin waits for it.
const planGD2Timeout = 10 * time.Second

// showDecommissionPlan prints what decommissioning GlusterNode ns/name
// would do: the states it goes through, what is left of its cluster, and
// where the operator's placement policy would move each brick now (read
// from GD2 when it is reachable from here) on w.
func showDecommissionPlan(ctx context.Context, kc kubernetes.Interface, ac versioned.Interface, ns, name string, w io.Writer) error {
	node, err := ac.OperatorV1alpha1().GlusterNodes(ns).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("GlusterNode %q not found in namespace %s (list them with: kubectl get glusternodes -n %s)", name, ns, ns)
	}
	if err != nil {
		return fmt.Errorf("get GlusterNode %s/%s: %w", ns, name, err)
	}
	list, err := ac.OperatorV1alpha1().GlusterNodes(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("list GlusterNodes in namespace %s: %w", ns, err)
	}
	nodes := make([]*operatorv1alpha1.GlusterNode, 0, len(list.Items))
	for i := range list.Items {
		nodes = append(nodes, &list.Items[i])
	}
	var b strings.Builder
	writeDecommissionSummary(&b, node, nodes)
	cluster, err := ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, node.Spec.Cluster, metav1.GetOptions{})
	if err != nil {
		fmt.Fprintf(&b, "Bricks: unknown; cannot read GlusterCluster %s/%s: %v\n", ns, node.Spec.Cluster, err)
	} else {
		preview, perr := previewDrain(ctx, kc, cluster, node, nodes)
		writeBrickPlan(&b, preview, perr, nodes)
		writeScaleDownOrder(&b, cluster, node, nodes, preview.PeerBricks)
	}
	_, err = fmt.Fprint(w, b.String())
	return err
}

// previewDrain reads GD2 the way the operator does (the same client, the
// cluster's endpoint and auth secret) and runs the drain policy on it.
func previewDrain(ctx context.Context, kc kubernetes.Interface, c *operatorv1alpha1.GlusterCluster, node *operatorv1alpha1.GlusterNode, nodes []*operatorv1alpha1.GlusterNode) (nodemachine.DrainPreview, error) {
	clients := &effects.GD2Clients{Secrets: kc.CoreV1(), Timeout: planGD2Timeout}
	gc, err := clients.For(ctx, c)
	if err != nil {
		return nodemachine.DrainPreview{}, err
	}
	return nodemachine.PreviewDrain(ctx, gc, node, nodes)
}

// writeDecommissionSummary writes what the decommission does and what it
// leaves, from the Kubernetes objects alone.
func writeDecommissionSummary(b *strings.Builder, node *operatorv1alpha1.GlusterNode, nodes []*operatorv1alpha1.GlusterNode) {
	state := orDash(node.Status.State)
	fmt.Fprintf(b, "Plan: decommission GlusterNode %s/%s (cluster %s, zone %s, state %s)\n", node.Namespace, node.Name, node.Spec.Cluster, node.Spec.Zone, state)
	fmt.Fprintf(b, "  1. %s: each brick on the node is moved to another node by replace-brick and healed, one at a time\n", states.NodeDraining)
	fmt.Fprintf(b, "  2. %s: the GD2 peer is removed\n", states.NodeDetaching)
	fmt.Fprintf(b, "  3. %s -> %s: the node's pod and PVCs are deleted, then the GlusterNode\n", states.NodeDeleting, states.NodeDeleted)
	var left, online, zoneOnline int
	for _, n := range nodes {
		if n.Spec.Cluster != node.Spec.Cluster || n.Name == node.Name {
			continue
		}
		left++
		if n.Status.State == string(states.NodeOnline) {
			online++
			if n.Spec.Zone == node.Spec.Zone {
				zoneOnline++
			}
		}
	}
	fmt.Fprintf(b, "Left in cluster %s: %d nodes, %d Online (%d Online in zone %s)\n", node.Spec.Cluster, left, online, zoneOnline, node.Spec.Zone)
}

// writeBrickPlan writes the brick moves of preview, or why there are none
// to show.
func writeBrickPlan(b *strings.Builder, preview nodemachine.DrainPreview, err error, nodes []*operatorv1alpha1.GlusterNode) {
	switch {
	case err != nil:
		fmt.Fprintf(b, "Bricks: GD2 is not reachable from here (%v);\n"+
			"  the operator picks each brick's target with its placement policy when it drains.\n", err)
		return
	case preview.PeerID == "":
		b.WriteString("Bricks: none (GD2 has no peer for this node)\n")
		return
	case len(preview.Bricks) == 0 && preview.Staying == 0:
		b.WriteString("Bricks: none on this node\n")
		return
	}
	b.WriteString("Bricks, with the target the operator's placement policy picks now (each move is\n" +
		"planned again after the previous one has healed, so later targets may differ):\n")
	zone := map[string]string{}
	for _, n := range nodes {
		zone[n.Namespace+"/"+n.Name] = n.Spec.Zone
	}
	table(b, []string{"VOLUME", "BRICK", "TO", "ZONE"}, func(row func(...string)) {
		for _, bp := range preview.Bricks {
			if bp.Blocked != "" {
				row(bp.Volume, bp.Path, "(cannot move now: "+bp.Blocked+")", "-")
				continue
			}
			to := bp.Targets[0]
			if n := bp.TargetNodes[0]; n != "" {
				to = n[strings.IndexByte(n, '/')+1:]
			}
			row(bp.Volume, bp.Path, to, orDash(zone[bp.TargetNodes[0]]))
		}
	})
	if preview.Staying > 0 {
		fmt.Fprintf(b, "  %d more brick(s) wait: the only healed copy of their data, or their replica set's quorum\n", preview.Staying)
	}
}

// writeScaleDownOrder writes the order in which the operator removes the
// nodes of node's template when the template shrinks (nodeTemplates[].nodes
// lowered, or the autoscaler): objects.ScaleDownOrder, the function the
// scaling action uses, over the nodes that count and the brick counts
// read from GD2 (nil when GD2 was not reachable from here: the order is
// then by age alone, which the operator's may not be). It writes nothing
// for a node that no shrink removes: one of an external cluster, added by
// hand, or of a template no longer in c's spec.
func writeScaleDownOrder(b *strings.Builder, c *operatorv1alpha1.GlusterCluster, node *operatorv1alpha1.GlusterNode, nodes []*operatorv1alpha1.GlusterNode, bricks objects.BrickCounts) {
	if objects.IsExternal(c) || !slices.ContainsFunc(c.Spec.NodeTemplates, func(t operatorv1alpha1.NodeTemplate) bool { return t.Name == node.Spec.Template }) {
		return
	}
	var members []*operatorv1alpha1.GlusterNode
	for _, n := range nodes {
		if n.Spec.Cluster == node.Spec.Cluster && n.Spec.Template == node.Spec.Template && states.NodeCounts(objects.NodeFacts(n)) {
			members = append(members, n)
		}
	}
	if len(members) == 0 {
		return
	}
	fmt.Fprintf(b, "Scale-down order of template %s (a shrink removes the first: never Online, then fewest bricks, then newest):\n", node.Spec.Template)
	if bricks == nil {
		b.WriteString("  brick counts unknown (GD2 is not reachable from here): by age alone, which the operator's order may not be\n")
	}
	table(b, []string{"NODE", "BRICKS", "STATE", ""}, func(row func(...string)) {
		for _, n := range objects.ScaleDownOrder(members, bricks) {
			count, mark := "-", ""
			if bricks != nil {
				count = fmt.Sprint(bricks.Of(n))
			}
			if n.Name == node.Name {
				mark = "<- this node"
			}
			row(n.Name, count, orDash(n.Status.State), mark)
		}
	})
}
