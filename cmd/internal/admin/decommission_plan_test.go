package admin

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gluster/anthill/cmd/internal/cli"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines"
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
	writeBrickPlan(&b, machines.DrainPreview{PeerID: "p1", Staying: 1, Bricks: []machines.BrickPreview{
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
	writeBrickPlan(&b, machines.DrainPreview{}, errors.New("dial tcp: refused"), nodes)
	if !strings.HasPrefix(b.String(), "Bricks: GD2 is not reachable from here (dial tcp: refused);") {
		t.Errorf("unreachable GD2: %q", b.String())
	}
	b.Reset()
	writeBrickPlan(&b, machines.DrainPreview{PeerID: "p1"}, nil, nodes)
	if b.String() != "Bricks: none on this node\n" {
		t.Errorf("no bricks: %q", b.String())
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
