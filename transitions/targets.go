package transitions

import (
	"github.com/gluster/anthill/fsm"
	"github.com/gluster/anthill/states"
)

// Peer metadata keys anthill owns. They carry no leading "_" (GD2 reserves
// those) and stay small: GD2 caps a peer's metadata at 4 KiB.
const (
	// MetaNode identifies the GlusterNode ("namespace/name") a peer belongs
	// to; AddPeer uses it to find a peer added before a crash.
	MetaNode = "anthill-node"
	// MetaCluster names the GlusterCluster.
	MetaCluster = "anthill-cluster"
	// MetaState mirrors the node machine's state.
	MetaState = "anthill-state"
)

// NodeTarget is the node an action works on, filled by the dispatcher from
// the GlusterNode, its status and the snapshot it decided from.
type NodeTarget struct {
	Namespace string
	Name      string
	Cluster   string
	// Address is the stable host[:port] the peer is added with (the pod's
	// name in the cluster's headless Service).
	Address string
	Zone    string
	// Devices are the block devices the node contributes: the paths its
	// pod has them at, registered in GD2 under these names.
	Devices []string
	// DeviceProvisioner is the GD2 provisioner the devices are registered
	// with: "" or "lvm" (block devices), "loop" (directories).
	DeviceProvisioner string
	// RegisteredDevices are the names GD2 has the node's devices under
	// (as read in the sync), which enabling and disabling use: a node an
	// older release joined keeps the names it registered (/dev/sdb, ...)
	// after its claims move to new paths. Empty when not read.
	RegisteredDevices []string
	// PeerID is the GD2 peer id recorded in status, "" before join.
	PeerID    string
	PeerAlive bool
	// TargetVersion is the version to roll to (restart).
	TargetVersion string
	// MoveVolume and MovePath name the brick moveBrick moves; MoveTo is
	// where it may go.
	MoveVolume string
	MovePath   string
	MoveTo     MoveTo
	// HealVolume and HealBrick name the moved brick whose replacement
	// healReplacement makes GD2 heal.
	HealVolume string
	HealBrick  string
	// LostPodUID is the terminating pod evictLostPod force-deletes.
	LostPodUID string
}

// MoveTo is where a moved brick may go, as the dispatcher planned it.
type MoveTo struct {
	// Peers are the only peers GD2 may place the new brick on
	// (limit-peers): each keeps the brick's replica set in distinct zones
	// and cannot hold a logical volume with the replacement's name.
	Peers []string
	// SameZone: the peers are in the source's own zone, so the source peer
	// must first leave it (DrainingZone): GD2 counts the source's zone as
	// used.
	SameZone bool
}

// DrainingZone is the GD2 zone a node's peer is moved to while its bricks
// are moved off it. GD2's replace-brick never places the new brick in a
// zone that any brick of the volume uses, the source brick's own zone
// included; moving the leaving peer to a zone of its own frees its original
// zone for the replacement, so a brick can stay in its failure domain.
func DrainingZone(zone string) string { return zone + "-draining" }

// NodeKey is the value of MetaNode for this node.
func (n NodeTarget) NodeKey() string { return n.Namespace + "/" + n.Name }

// NodeResult is what a node action learned that status must record.
type NodeResult struct {
	// PeerID is set by join.
	PeerID string
}

// VolumeTarget is the volume a heal action works on.
type VolumeTarget struct {
	Cluster string
	Volume  string
}

// ClusterTarget is the GlusterCluster a cluster or upgrade action works on.
type ClusterTarget struct {
	Namespace string
	Name      string
	// DesiredNodes is spec.nodeCount (scaleNodes).
	DesiredNodes int
	// TargetVersion is the version the upgrade steps roll to.
	TargetVersion string
	// Options are the cluster options to set (applyOptions): the keys of
	// spec.clusterOptions whose value GD2 does not have.
	Options map[string]string
	// Bricks is the number of GD2 bricks on each peer, by peer id, as the
	// cluster machine's sync read them (nil when GD2 did not answer): what
	// scaleNodes and deleteNodes order nodes for removal by
	// (states.ScaleDownOrder).
	Bricks map[string]int
	// Scale is the plan of scaleNodes, made by the cluster machine from
	// its live read before the step and put on record: the template of
	// each GlusterNode to create and the nodes to ask to decommission
	// (nil: nothing to scale, as for an external cluster).
	Scale *states.ScaleOrder
}

// nodeState is the mirrored state value for a node state.
func nodeState(s fsm.State) map[string]string { return map[string]string{MetaState: string(s)} }
