package cluster

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// TestClusterSyncerScalesDownTheNodeHoldingTheFewestBricks: a scaleNodes
// step that removes a node names, in the ledger, the node whose removal
// moves the least data by the brick counts its sync gathered, and the
// action asks that same node, and only it, to decommission. Without
// counts (GD2 did not answer) the newest node goes, as before counts.
func TestClusterSyncerScalesDownTheNodeHoldingTheFewestBricks(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bricks objects.BrickCounts
		want   string
	}{
		{"the oldest node goes when it holds the fewest bricks", objects.BrickCounts{"peer-gc-z1-a": 1, "peer-gc-z1-b": 4, "peer-gc-z1-c": 2}, "gc-z1-a"},
		{"of nodes holding as many bricks the newer goes", objects.BrickCounts{"peer-gc-z1-a": 1, "peer-gc-z1-b": 1, "peer-gc-z1-c": 2}, "gc-z1-b"},
		{"without brick counts the newest goes", nil, "gc-z1-c"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			cs, a := clusterLedgerFixture(t, 2, "gc-z1-a", "gc-z1-b", "gc-z1-c")
			scale := states.Decision{Step: states.ClusterScaleNodes, Reason: states.ReasonScaling}
			facts := &clusterFacts{snap: states.ClusterSnapshot{DesiredNodes: 2}, bricks: tc.bricks}
			for _, noting := range []bool{true, false} {
				if noted, err := clusterStep(t, cs, a, states.ClusterScaling, facts, scale); noted != noting || err != nil {
					t.Fatalf("noted %t, %v; want %t", noted, err, noting)
				}
			}
			if got := ledgerLines(liveCluster(t, a).Status.Ledger); len(got) != 1 || liveCluster(t, a).Status.Ledger[0].Node != tc.want {
				t.Fatalf("ledger %v, want one entry naming %s", got, tc.want)
			}
			list, err := a.OperatorV1alpha1().GlusterNodes("ns").List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range list.Items {
				if asked := n.Annotations[objects.AnnotationRequest] == objects.RequestDecommission; asked != (n.Name == tc.want) {
					t.Errorf("%s asked to decommission: %v, want only %s", n.Name, asked, tc.want)
				}
			}
		})
	}
}
