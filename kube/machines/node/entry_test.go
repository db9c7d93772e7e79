package node

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/gluster/anthill/gd2"
	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/engine"
	"github.com/gluster/anthill/kube/internal/fixtures"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/states"
)

// Entering each node state applies exactly its meaning's entry effects:
// the cursors it resets are cleared, those it stamps are set when unset,
// every other cursor is kept, and the version is recorded where the table
// says so.
func TestNodeEntryEffectsFollowTheStateMeaning(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	earlier := metav1.NewTime(now.Add(-time.Hour))
	ref := operatorv1alpha1.BrickRef{Volume: "v", Path: "/b"}
	set := func(st *operatorv1alpha1.GlusterNodeStatus) map[states.NodeCursor]bool {
		return map[states.NodeCursor]bool{
			states.CursorDownSince: st.DownSince != nil, states.CursorAliveSince: st.AliveSince != nil,
			states.CursorMovedBricks: st.MovedBricks != nil, states.CursorRefusedPeers: st.RefusedPeers != nil,
		}
	}
	s := &Syncer{}
	for _, sd := range states.NodeDefinition().States {
		meaning := states.NodeMeaning(sd.Name)
		for _, startSet := range []bool{true, false} {
			node := &operatorv1alpha1.GlusterNode{}
			if startSet {
				node.Status = operatorv1alpha1.GlusterNodeStatus{
					DownSince: &earlier, AliveSince: &earlier, MovedBricks: []operatorv1alpha1.BrickRef{ref}, RefusedPeers: []string{"p"},
				}
			}
			out := &engine.Outcome[*nodeFacts]{
				Kind: engine.Fired, To: sd.Name,
				Instance:  engine.Instance[*nodeFacts]{Facts: &nodeFacts{snap: states.NodeSnapshot{PodReady: true, RunningVersion: "11.2", RunningRevision: "r2"}}},
				Committed: &engine.Committed{Machine: states.NodeMachine, To: sd.Name, Time: now},
			}
			s.enter(node, out, now)
			got := set(&node.Status)
			for c, was := range map[states.NodeCursor]bool{states.CursorDownSince: startSet, states.CursorAliveSince: startSet, states.CursorMovedBricks: startSet, states.CursorRefusedPeers: startSet} {
				want := was
				switch {
				case slices.Contains(meaning.ResetOnEntry, c):
					want = false
				case slices.Contains(meaning.StampOnEntry, c):
					want = true
				}
				if got[c] != want {
					t.Errorf("entering %s (cursors set before: %t): %s set = %t, want %t", sd.Name, startSet, c, got[c], want)
				}
			}
			if startSet && slices.Contains(meaning.StampOnEntry, states.CursorDownSince) && !node.Status.DownSince.Equal(&earlier) {
				t.Errorf("entering %s restamped a set downSince", sd.Name)
			}
			if recorded := node.Status.Version == "11.2"; recorded != meaning.RecordsVersion {
				t.Errorf("entering %s recorded the running version: %t, meaning says %t", sd.Name, recorded, meaning.RecordsVersion)
			}
			if recorded := node.Status.Revision == "r2"; recorded != meaning.RecordsVersion {
				t.Errorf("entering %s recorded the running template revision: %t, meaning says %t", sd.Name, recorded, meaning.RecordsVersion)
			}
		}
	}
}

// TestLivenessWindowsAllowForGD2sDetectionDelay holds the numbers of
// docs/design/machines-and-dispatch.md: a killed GD2 (the simulator at its
// default timing) is still listed online just short of GD2's lease and
// offline after it; a recovery window outlasts the lease and the offline
// grace (a GD2 killed right after it came back is seen dead before its
// node is Online again); the downtime deadline dwarfs both.
func TestLivenessWindowsAllowForGD2sDetectionDelay(t *testing.T) {
	clk := clocktesting.NewFakeClock(time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC))
	s, err := sim.New(sim.Config{Secret: fixtures.GD2Secret, Peers: 3, Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(func() { srv.Close(); _ = s.Close() })
	g, err := gd2.New(gd2.Options{Endpoint: srv.URL, Secret: fixtures.GD2Secret, Retry: &gd2.RetryPolicy{MaxAttempts: 1}})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	peers, err := g.ListPeers(ctx, gd2.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	victim := peers[len(peers)-1].ID
	if err := s.CrashPeer(victim); err != nil {
		t.Fatal(err)
	}
	online := func() bool {
		t.Helper()
		ps, err := g.ListPeers(ctx, gd2.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ps {
			if p.ID == victim {
				return p.Online
			}
		}
		t.Fatalf("peer %s is gone from the list", victim)
		return false
	}
	clk.Step(gather.GD2LivenessLease - time.Second)
	if !online() {
		t.Fatalf("a killed GD2 is listed offline before GD2's %s lease lapsed", gather.GD2LivenessLease)
	}
	clk.Step(2 * time.Second)
	if online() {
		t.Fatalf("a killed GD2 is still listed online after GD2's %s lease", gather.GD2LivenessLease)
	}
	if gather.DefaultRecoveryWindow <= gather.GD2LivenessLease+gather.DefaultOfflineGrace {
		t.Errorf("recovery window %s does not outlast GD2's lease %s and the offline grace %s", gather.DefaultRecoveryWindow, gather.GD2LivenessLease, gather.DefaultOfflineGrace)
	}
	if gather.DefaultPermissibleDowntime < 10*(gather.GD2LivenessLease+gather.DefaultOfflineGrace) {
		t.Errorf("permissible downtime %s is not far above the detection delay %s", gather.DefaultPermissibleDowntime, gather.GD2LivenessLease+gather.DefaultOfflineGrace)
	}
}
