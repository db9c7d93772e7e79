package transitions

import (
	"context"
	"errors"
	"testing"

	"github.com/gluster/anthill/states"
)

func nodeTarget() NodeTarget {
	return NodeTarget{
		Namespace: "storage", Name: "gluster-a-0", Cluster: "gluster",
		Address: "gluster-a-0.gluster.storage.svc", Zone: "a",
		Devices: []string{"/dev/vdb", "/dev/vdc"}, PeerAlive: true, TargetVersion: "11.1",
	}
}

// joined returns a world in which the node has joined, registered its
// devices and holds one brick, and the target pointing at it.
func joined(t *testing.T) (*world, NodeTarget) {
	t.Helper()
	w := newWorld()
	n := nodeTarget()
	res, err := joinNode(context.Background(), w.ops(), n)
	if err != nil {
		t.Fatal(err)
	}
	n.PeerID = res.PeerID
	if _, err := activateNode(context.Background(), w.ops(), n); err != nil {
		t.Fatal(err)
	}
	w.bricks["vol1:/bricks/vol1/b1"] = n.PeerID
	n.MoveVolume, n.MovePath = "vol1", "/bricks/vol1/b1"
	n.MoveTo = MoveTo{Peers: []string{"peer-b"}}
	n.HealVolume, n.HealBrick = "vol1", "/bricks/vol1/b0"
	n.LostPodUID = "pod-uid-1"
	w.lostPods[n.NodeKey()] = n.LostPodUID
	return w, n
}

// Every node action is run twice, as after a crash between the action and
// the status write; the second run must change nothing.
func TestEveryNodeActionIsIdempotent(t *testing.T) {
	for e, act := range every(NodeActions) {
		t.Run(e, func(t *testing.T) {
			w, n := joined(t)
			if e == string(states.NodeDeletePeer) {
				delete(w.bricks, "vol1:/bricks/vol1/b1")
			}
			first, err := act(context.Background(), w.ops(), n)
			if err != nil {
				t.Fatalf("first run: %v", err)
			}
			after := w.snapshot()
			second, err := act(context.Background(), w.ops(), n)
			if err != nil {
				t.Fatalf("second run: %v", err)
			}
			if w.snapshot() != after {
				t.Errorf("second run changed the world:\n%s\n%s", after, w.snapshot())
			}
			if first != second {
				t.Errorf("results differ: %+v vs %+v", first, second)
			}
		})
	}
}

func TestJoinTagsThePeerAndReturnsItsNewID(t *testing.T) {
	w := newWorld()
	res, err := joinNode(context.Background(), w.ops(), nodeTarget())
	if err != nil {
		t.Fatal(err)
	}
	md := w.peers[res.PeerID]
	if md == nil || md[MetaNode] != "storage/gluster-a-0" || md[MetaCluster] != "gluster" || md["_zone"] != "a" {
		t.Errorf("peer %q metadata = %v", res.PeerID, md)
	}
}

func TestMoveBrickNeverReplacesABrickThatAlreadyMoved(t *testing.T) {
	w, n := joined(t)
	w.bricks["vol1:/bricks/vol1/b1"] = "peer-elsewhere"
	if _, err := moveBrick(context.Background(), w.ops(), n); err != nil {
		t.Fatal(err)
	}
	for _, c := range w.calls {
		if c == "ReplaceBrick" {
			t.Fatal("replace-brick was called for a brick no longer on the node; GD2 would have moved another brick")
		}
	}
}

// TestHealReplacementIsSafeToRepeat: the step runs again until the
// replacement shows its data (and after a crash between its record and
// its status write); each run makes GD2 heal the volume once more and
// changes nothing else.
func TestHealReplacementIsSafeToRepeat(t *testing.T) {
	w, n := joined(t)
	n.HealVolume, n.HealBrick = "vol1", "/bricks/vol1/b1"
	w.calls = nil
	for range 2 {
		if _, err := healReplacement(context.Background(), w.ops(), n); err != nil {
			t.Fatal(err)
		}
	}
	if w.replacementHeals["vol1"] != 2 || len(w.calls) != 2 {
		t.Fatalf("calls %v, heals %v; want two heals of vol1 and nothing else", w.calls, w.replacementHeals)
	}
	n.HealVolume = ""
	if _, err := healReplacement(context.Background(), w.ops(), n); err == nil {
		t.Fatal("a heal naming no volume succeeded")
	}
	w.fail["HealReplacement"] = ErrHealNotDelivered
	n.HealVolume = "vol1"
	if _, err := healReplacement(context.Background(), w.ops(), n); !errors.Is(err, ErrHealNotDelivered) {
		t.Fatalf("a full heal GD2 could not deliver returned %v; the step must fail and be retried", err)
	}
}

func TestDisablingDevicesSkipsADeadPeer(t *testing.T) {
	w, n := joined(t)
	n.PeerAlive = false
	w.calls = nil
	if _, err := disableNodeDevices(context.Background(), w.ops(), n); err != nil {
		t.Fatal(err)
	}
	if len(w.calls) != 0 {
		t.Errorf("calls = %v, want none for a dead peer", w.calls)
	}
}

func TestActionsNeedingAPeerRefuseWithoutOne(t *testing.T) {
	for _, e := range []string{string(states.NodeActivate), string(states.NodeMoveBrick), string(states.NodeDeletePeer), string(states.NodeResume)} {
		act := named(t, NodeActions, e)
		n := nodeTarget()
		n.MoveVolume, n.MovePath = "vol1", "/b"
		n.MoveTo = MoveTo{Peers: []string{"peer-b"}}
		if _, err := act(context.Background(), newWorld().ops(), n); !errors.Is(err, ErrNoPeerID) {
			t.Errorf("%s without a peer id: error = %v, want ErrNoPeerID", e, err)
		}
	}
}

func TestNodeActionErrorsAreWrappedWithContext(t *testing.T) {
	boom := errors.New("boom")
	tests := []struct {
		action string
		method string
	}{
		{string(states.NodeProvision), "EnsureNodeWorkload"},
		{string(states.NodeJoin), "AddPeer"},
		{string(states.NodeActivate), "RegisterDevice"},
		{string(states.NodeDrain), "SetDeviceEnabled"},
		{string(states.NodeRollWorkload), "RollNodeWorkload"},
		{string(states.NodeMoveBrick), "ReplaceBrick"},
		{string(states.NodeMoveBrick), "BrickOnPeer"},
		{string(states.NodeDeleteWorkload), "DeleteNodeWorkload"},
		{string(states.NodeEvictLostPod), "ForceDeleteLostPod"},
	}
	for _, tt := range tests {
		t.Run(tt.action+" "+tt.method, func(t *testing.T) {
			w, n := joined(t)
			w.fail[tt.method] = boom
			act := named(t, NodeActions, tt.action)
			_, err := act(context.Background(), w.ops(), n)
			if !errors.Is(err, boom) || err.Error() == boom.Error() {
				t.Errorf("error = %v, want boom wrapped with context", err)
			}
		})
	}
}

func TestMirrorNodeStateWritesTheStateKey(t *testing.T) {
	w, n := joined(t)
	if err := MirrorNodeState(context.Background(), w, n.PeerID, states.NodeOnline); err != nil {
		t.Fatal(err)
	}
	if got := w.peers[n.PeerID][MetaState]; got != "Online" {
		t.Errorf("%s = %q, want Online", MetaState, got)
	}
	if err := MirrorNodeState(context.Background(), w, "", states.NodeOnline); err != nil {
		t.Errorf("mirroring without a peer should be a no-op, got %v", err)
	}
}

// A node an older release joined has its devices registered in GD2 under
// the names of that release's paths; after its claims move to new paths,
// maintenance and resume still address the devices by the names GD2 has.
func TestDevicesAreEnabledAndDisabledByTheirRegisteredNames(t *testing.T) {
	w, n := joined(t)
	legacy := map[string]bool{"/dev/sdb": true, "/dev/sdc": true}
	w.devices[n.PeerID] = legacy
	n.Devices = []string{"/dev/anthill/brick-0", "/dev/anthill/brick-1"}
	n.RegisteredDevices = []string{"/dev/sdb", "/dev/sdc"}
	if err := setNodeDevices(context.Background(), w.ops(), n, false); err != nil {
		t.Fatalf("disable by registered names: %v", err)
	}
	for d, on := range w.devices[n.PeerID] {
		if on {
			t.Errorf("device %s still enabled", d)
		}
	}
	if _, err := enableNodeDevices(context.Background(), w.ops(), n); err != nil {
		t.Fatalf("enable by registered names: %v", err)
	}
	for d, on := range w.devices[n.PeerID] {
		if !on {
			t.Errorf("device %s still disabled", d)
		}
	}
	n.RegisteredDevices = nil
	if _, err := enableNodeDevices(context.Background(), w.ops(), n); err == nil {
		t.Error("enabling by the new paths, which GD2 does not have, succeeded")
	}
}

// GD2's volume-create planner reads device states only, so the restart of
// an upgrade closes the node's devices before its pod is stopped.
func TestRestartDisablesEveryDeviceOfTheNode(t *testing.T) {
	w, n := joined(t)
	act, ok := NodeActions.Events[states.NodeRestart]
	if !ok {
		t.Fatal("restart has no action")
	}
	if _, err := act(context.Background(), w.ops(), n); err != nil {
		t.Fatal(err)
	}
	if len(w.devices[n.PeerID]) == 0 {
		t.Fatal("the node has no devices to check")
	}
	for d, on := range w.devices[n.PeerID] {
		if on {
			t.Errorf("device %s still enabled after restart's action", d)
		}
	}
}
