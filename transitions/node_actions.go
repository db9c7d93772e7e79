package transitions

import (
	"context"
	"errors"
	"fmt"

	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// NodeAction runs the side effect of one node event or step.
type NodeAction func(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error)

// ErrNoPeerID means an action that needs the node's GD2 peer ran before
// status recorded one. The dispatcher should re-gather: the snapshot
// builder finds the peer by its MetaNode tag.
var ErrNoPeerID = errors.New("node has no recorded GD2 peer id")

// NodeActions are the node machine's actions. Events without an action
// only change the state.
var NodeActions = register(Actions[NodeAction]{
	Machine: states.NodeMachine,
	Events: map[fsm.Event]NodeAction{
		states.NodeProvision:        provisionNode,
		states.NodeJoin:             joinNode,
		states.NodeActivate:         activateNode,
		states.NodeEnterMaintenance: disableNodeDevices,
		states.NodeDrain:            disableNodeDevices,
		states.NodeResume:           enableNodeDevices,
		states.NodeRestart:          disableNodeDevices,
	},
	Steps: map[fsm.Step]NodeAction{
		states.NodeDisableDevices:  disableNodeDevices,
		states.NodeEnableDevices:   enableNodeDevices,
		states.NodeRollWorkload:    rollWorkload,
		states.NodeMoveBrick:       moveBrick,
		states.NodeHealReplacement: healReplacement,
		states.NodeDeletePeer:      deletePeer,
		states.NodeDeleteWorkload:  deleteNodeWorkload,
		states.NodeEvictLostPod:    evictLostPod,
	},
})

func provisionNode(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if err := ops.Kube.EnsureNodeWorkload(ctx, n); err != nil {
		return NodeResult{}, fmt.Errorf("ensure workload of node %s: %w", n.NodeKey(), err)
	}
	return NodeResult{}, nil
}

func joinNode(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	md := map[string]string{
		MetaNode:    n.NodeKey(),
		MetaCluster: n.Cluster,
		MetaState:   string(states.NodeJoining),
	}
	id, err := ops.GD2.AddPeer(ctx, n.Address, n.Zone, md)
	if err != nil {
		return NodeResult{}, fmt.Errorf("add peer %q: %w", n.Address, err)
	}
	return NodeResult{PeerID: id}, nil
}

func activateNode(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.PeerID == "" {
		return NodeResult{}, ErrNoPeerID
	}
	for _, dev := range n.Devices {
		if err := ops.GD2.RegisterDevice(ctx, n.PeerID, dev, n.DeviceProvisioner); err != nil {
			return NodeResult{}, fmt.Errorf("register device %q on peer %s: %w", dev, n.PeerID, err)
		}
	}
	return NodeResult{}, nil
}

// disableNodeDevices keeps new bricks off the node. It skips a dead peer:
// GD2 places nothing on offline peers, and the disableDevices step catches
// up once the peer is alive.
func disableNodeDevices(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	return NodeResult{}, setNodeDevices(ctx, ops, n, false)
}

// enableNodeDevices ends maintenance or a cancelled drain: the peer goes
// back to its own zone (a drain may have moved it out) and its devices take
// new bricks again.
func enableNodeDevices(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.PeerID != "" {
		if err := ops.GD2.RestorePeerZone(ctx, n.PeerID); err != nil {
			return NodeResult{}, fmt.Errorf("restore zone of node %s: %w", n.NodeKey(), err)
		}
	}
	return NodeResult{}, setNodeDevices(ctx, ops, n, true)
}

func setNodeDevices(ctx context.Context, ops Ops, n NodeTarget, enabled bool) error {
	if n.PeerID == "" || !n.PeerAlive {
		if enabled {
			// Resume is decided only for a live peer; a missing id is a
			// gathering bug worth surfacing.
			return ErrNoPeerID
		}
		return nil
	}
	devices := n.RegisteredDevices
	if len(devices) == 0 {
		devices = n.Devices
	}
	for _, dev := range devices {
		if err := ops.GD2.SetDeviceEnabled(ctx, n.PeerID, dev, enabled); err != nil {
			return fmt.Errorf("set device %q on peer %s enabled=%t: %w", dev, n.PeerID, enabled, err)
		}
	}
	return nil
}

// rollWorkload restarts the node on the cluster's pod template at the
// target version; an empty target (the cluster names no version) rolls
// only a changed template.
func rollWorkload(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if err := ops.Kube.RollNodeWorkload(ctx, n, n.TargetVersion); err != nil {
		return NodeResult{}, fmt.Errorf("roll node %s to version %q: %w", n.NodeKey(), n.TargetVersion, err)
	}
	return NodeResult{}, nil
}

// moveBrick re-reads the brick's placement immediately before replacing it:
// GD2's replace-brick does not check that the source brick exists and would
// replace some other brick of the volume instead, so a move repeated after
// a crash must find the brick gone and do nothing.
func moveBrick(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.PeerID == "" {
		return NodeResult{}, ErrNoPeerID
	}
	if n.MoveVolume == "" || n.MovePath == "" {
		return NodeResult{}, fmt.Errorf("move brick off node %s: no brick named", n.NodeKey())
	}
	present, err := ops.GD2.BrickOnPeer(ctx, n.MoveVolume, n.PeerID, n.MovePath)
	if err != nil {
		return NodeResult{}, fmt.Errorf("look up brick %s:%s: %w", n.MoveVolume, n.MovePath, err)
	}
	if !present {
		return NodeResult{}, nil
	}
	if len(n.MoveTo.Peers) == 0 {
		return NodeResult{}, fmt.Errorf("move brick %s:%s off node %s: no target peer planned", n.MoveVolume, n.MovePath, n.NodeKey())
	}
	if err := ops.GD2.ReplaceBrick(ctx, n.MoveVolume, n.PeerID, n.MovePath, n.MoveTo); err != nil {
		return NodeResult{}, fmt.Errorf("replace brick %s:%s on peer %s: %w", n.MoveVolume, n.MovePath, n.PeerID, err)
	}
	return NodeResult{}, nil
}

// healReplacement makes GD2 heal the replacement of a brick the drain
// moved (HealGD2.HealReplacement): right after a replace-brick GD2 reports
// nothing to heal while the new brick is empty, and heals it only when
// made to. Every part of it may be repeated, so a retry, or a step run
// again after a crash, changes nothing but sending the heal once more.
func healReplacement(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.HealVolume == "" {
		return NodeResult{}, fmt.Errorf("heal a replacement of node %s: no volume named", n.NodeKey())
	}
	if err := ops.GD2.HealReplacement(ctx, n.HealVolume); err != nil {
		return NodeResult{}, fmt.Errorf("heal the replacement of brick %s:%s: %w", n.HealVolume, n.HealBrick, err)
	}
	return NodeResult{}, nil
}

// deletePeer first takes the node out of the management Service (GD2
// refuses to remove the node serving the request), then deletes the peer.
// While the Service has not caught up GD2 answers "removing self is
// disallowed"; that is retried with backoff like any transient error.
func deletePeer(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if n.PeerID == "" {
		return NodeResult{}, ErrNoPeerID
	}
	if err := ops.Kube.LeaveManagementService(ctx, n); err != nil {
		return NodeResult{}, fmt.Errorf("take node %s out of the management Service: %w", n.NodeKey(), err)
	}
	if err := ops.GD2.DeletePeer(ctx, n.PeerID); err != nil {
		return NodeResult{}, fmt.Errorf("delete peer %s: %w", n.PeerID, err)
	}
	return NodeResult{}, nil
}

func deleteNodeWorkload(ctx context.Context, ops Ops, n NodeTarget) (NodeResult, error) {
	if err := ops.Kube.DeleteNodeWorkload(ctx, n); err != nil {
		return NodeResult{}, fmt.Errorf("delete workload of node %s: %w", n.NodeKey(), err)
	}
	return NodeResult{}, nil
}

// MirrorNodeState writes the node's state into its GD2 peer metadata after
// a committed transition, so the state is visible from the GD2 side. It is
// best effort: the dispatcher logs a failure and retries on the next sync;
// the authoritative copy is GlusterNode status.
func MirrorNodeState(ctx context.Context, g NodeGD2, peerID string, s fsm.State) error {
	if peerID == "" {
		return nil
	}
	if err := g.SetPeerMetadata(ctx, peerID, nodeState(s)); err != nil {
		return fmt.Errorf("mirror state %s to peer %s: %w", s, peerID, err)
	}
	return nil
}
