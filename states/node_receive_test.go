package states

import (
	"testing"

	"github.com/gluster/anthill/fsm"
)

// TestNodeStateMayReceiveBricks lists every node state: a state added to
// the machine without deciding whether its peer may receive bricks fails.
func TestNodeStateMayReceiveBricks(t *testing.T) {
	want := map[fsm.State]bool{
		NodePending: true, NodeProvisioning: true, NodeJoining: true, NodeOnline: true,
		NodeQuiescing: true, NodeRestarting: true, NodeRejoining: true, NodeHealWait: true,
		NodeDeleted: true,
		// Leaving, held by an admin, or down: a disable of its devices
		// that has not happened yet must not let a brick land there.
		NodeOffline: false, NodeMaintenance: false, NodeFailed: false, NodeDraining: false,
		NodeAbandoned: false, NodeDetaching: false, NodeDeleting: false,
	}
	for _, st := range NodeDefinition().States {
		w, ok := want[st.Name]
		if !ok {
			t.Errorf("node state %s: the table does not say whether it may receive bricks", st.Name)
			continue
		}
		if got := NodeStateMayReceiveBricks(st.Name); got != w {
			t.Errorf("NodeStateMayReceiveBricks(%s) = %t, want %t", st.Name, got, w)
		}
		delete(want, st.Name)
	}
	for st := range want {
		t.Errorf("the table lists %s, which is no node state", st)
	}
	// A peer with no mirrored state (new, or not anthill's) may receive.
	if !NodeStateMayReceiveBricks("") {
		t.Error("a peer without a recorded node state may not receive bricks")
	}
}
