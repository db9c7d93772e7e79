package admin

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	nodemachine "github.com/gluster/anthill/kube/machines/node"
	"github.com/gluster/anthill/kube/objects"
)

func TestDecommissionPlanText(t *testing.T) {
	mk := func(name, zone, state string) *operatorv1alpha1.GlusterNode {
		n := glusterNode("ns", name, "gluster")
		n.Spec.Zone, n.Status.State = zone, state
		return n
	}
	leaving := mk("a1", "zone-1", "Online")
	nodes := []*operatorv1alpha1.GlusterNode{leaving, mk("a2", "zone-1", "Online"), mk("b1", "zone-2", "Online"), mk("c1", "zone-3", "Offline")}
	var b strings.Builder
	writeDecommissionSummary(&b, leaving, nodes)
	writeBrickPlan(&b, nodemachine.DrainPreview{PeerID: "p1", Staying: 1, Bricks: []nodemachine.BrickPreview{
		{Volume: "v1", Path: "/b/1", Targets: []string{"p2"}, TargetNodes: []string{"ns/a2"}, SameZone: true},
		{Volume: "v2", Path: "/b/2", Blocked: "no room"},
	}}, nil, nodes)
	want := "Plan: decommission GlusterNode ns/a1 (cluster gluster, zone zone-1, state Online)\n" +
		"  1. Draining: each brick on the node is moved to another node by replace-brick and healed, one at a time\n" +
		"  2. Detaching: the GD2 peer is removed\n" +
		"  3. Deleting -> Deleted: the node's pod and PVCs are deleted, then the GlusterNode\n" +
		"Left in cluster gluster: 3 nodes, 2 Online (1 Online in zone zone-1)\n" +
		"Bricks, with the target the operator's placement policy picks now (each move is\n" +
		"planned again after the previous one has healed, so later targets may differ):\n" +
		"  VOLUME  BRICK  TO                          ZONE\n" +
		"  v1      /b/1   a2                          zone-1\n" +
		"  v2      /b/2   (cannot move now: no room)  -\n" +
		"  1 more brick(s) wait: the only healed copy of their data, or their replica set's quorum\n"
	if b.String() != want {
		t.Errorf("plan\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	writeBrickPlan(&b, nodemachine.DrainPreview{}, errors.New("dial tcp: refused"), nodes)
	if !strings.HasPrefix(b.String(), "Bricks: GD2 is not reachable from here (dial tcp: refused);") {
		t.Errorf("unreachable GD2: %q", b.String())
	}
	b.Reset()
	writeBrickPlan(&b, nodemachine.DrainPreview{PeerID: "p1"}, nil, nodes)
	if b.String() != "Bricks: none on this node\n" {
		t.Errorf("no bricks: %q", b.String())
	}
}

// TestDecommissionPlanShowsTheScaleDownOrder: the plan lists the nodes of
// the node's template in the order a shrink removes them (the scaling
// action's objects.ScaleDownOrder: never Online, then fewest bricks, then
// newest), and says when it could not read the brick counts; a node no
// shrink removes gets no list.
func TestDecommissionPlanShowsTheScaleDownOrder(t *testing.T) {
	c := &operatorv1alpha1.GlusterCluster{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "gluster"},
		Spec: operatorv1alpha1.GlusterClusterSpec{NodeTemplates: []operatorv1alpha1.NodeTemplate{{Name: "z1"}}}}
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	mk := func(name, state, peer string, age time.Duration) *operatorv1alpha1.GlusterNode {
		n := glusterNode("ns", name, "gluster")
		n.Spec.Template, n.Status.State, n.Status.PeerID = "z1", state, peer
		n.CreationTimestamp = metav1.NewTime(at.Add(-age))
		return n
	}
	old, young, joining := mk("old", "Online", "p-old", 3*time.Hour), mk("young", "Online", "p-young", time.Hour), mk("joining", "Joining", "", 0)
	leaving := mk("leaving", "Online", "p-leaving", 2*time.Hour)
	leaving.Annotations = map[string]string{objects.AnnotationRequest: objects.RequestDecommission}
	other := mk("other", "Online", "p-other", 0)
	other.Spec.Template = "z2"
	nodes := []*operatorv1alpha1.GlusterNode{old, young, joining, leaving, other}

	var b strings.Builder
	writeScaleDownOrder(&b, c, young, nodes, objects.BrickCounts{"p-old": 1, "p-young": 4, "p-leaving": 0})
	want := "Scale-down order of template z1 (a shrink removes the first: never Online, then fewest bricks, then newest):\n" +
		"  NODE     BRICKS  STATE\n" +
		"  joining  0       Joining\n" +
		"  old      1       Online\n" +
		"  young    4       Online   <- this node\n"
	if b.String() != want {
		t.Errorf("order\n%s\nwant\n%s", b.String(), want)
	}

	b.Reset()
	writeScaleDownOrder(&b, c, young, nodes, nil)
	if !strings.Contains(b.String(), "brick counts unknown") || !strings.Contains(b.String(), "  young    -       Online   <- this node\n  old") {
		t.Errorf("order without brick counts:\n%s", b.String())
	}

	b.Reset()
	writeScaleDownOrder(&b, c, other, nodes, nil)
	if b.String() != "" {
		t.Errorf("a node of a template no longer in the spec got an order:\n%s", b.String())
	}
}

// TestAnthillRunsTheSameCommands: anthill's admin subcommands are this
// package's, with the same exit codes.
func TestAnthillRunsTheSameCommands(t *testing.T) {
	p := cli.New("anthill", "")
	for _, name := range CommandNames {
		p.Register(name, Delegate(name))
	}
	var errOut strings.Builder
	if code := p.Run(context.Background(), []string{"status"}, &errOut); code != cli.ExitUsage || !strings.Contains(errOut.String(), "anthill status: missing CLUSTER (see 'anthill status --help')") {
		t.Errorf("anthill status = %d, %q; want 2 and the usage error", code, errOut.String())
	}
	errOut.Reset()
	if code := p.Run(context.Background(), []string{"node", "drain", "x"}, &errOut); code != cli.ExitUsage || !strings.Contains(errOut.String(), `unknown action "drain"`) {
		t.Errorf("anthill node drain = %d, %q", code, errOut.String())
	}
}
