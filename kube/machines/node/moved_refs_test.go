package node

import (
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/states"
)

// TestMovedRefsCountTheMovesOnRecordOfTheCurrentDrain: a move is on
// record in the ledger before its replace-brick runs, and in movedBricks
// only after; an operator killed in between must still watch its
// replacement heal, or it could start moves beyond the bound, or detach
// the node, while it heals.
func TestMovedRefsCountTheMovesOnRecordOfTheCurrentDrain(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	at := func(d time.Duration) metav1.Time { return metav1.Time{Time: t0.Add(d)} }
	move := func(d time.Duration, vol, brick string) operatorv1alpha1.LedgerEntry {
		return operatorv1alpha1.LedgerEntry{Time: at(d), Action: operatorv1alpha1.LedgerActionReplaceBrick, Volume: vol, Brick: brick}
	}
	since := at(0)
	node := &operatorv1alpha1.GlusterNode{Status: operatorv1alpha1.GlusterNodeStatus{
		State: string(states.NodeDraining), LastTransitionTime: &since,
		MovedBricks: []operatorv1alpha1.BrickRef{{Volume: "v1", Path: "/b/1"}},
		Ledger: []operatorv1alpha1.LedgerEntry{
			move(-time.Hour, "v0", "/b/0"), // a drain cancelled before this one
			move(time.Second, "v1", "/b/1"),
			{Time: at(2 * time.Second), Action: operatorv1alpha1.LedgerActionDisableDevices},
			move(3*time.Second, "v2", "/b/2"), // on record; the status write after it was lost
		},
	}}
	want := []states.BrickRef{{Volume: "v1", Path: "/b/1"}, {Volume: "v2", Path: "/b/2"}}
	if got := movedRefs(node); !slices.Equal(got, want) {
		t.Fatalf("moved refs of a draining node %v, want %v", got, want)
	}
	node.Status.State = string(states.NodeOnline)
	if got := movedRefs(node); !slices.Equal(got, want[:1]) {
		t.Fatalf("moved refs of a node not draining %v, want only movedBricks %v", got, want[:1])
	}
}
