package transitions

import "context"

// NodeKube is what node actions need from Kubernetes.
type NodeKube interface {
	// EnsureNodeWorkload creates the node's PVC and StatefulSet if they do
	// not exist. Existing objects are left as they are (AlreadyExists is
	// success); it never deletes or recreates anything.
	EnsureNodeWorkload(ctx context.Context, n NodeTarget) error
	// RollNodeWorkload sets the node's StatefulSet to run version and makes
	// sure the pod is replaced by one running it. A pod already running
	// version is left alone, so a repeated call does not restart it again.
	RollNodeWorkload(ctx context.Context, n NodeTarget, version string) error
	// LeaveManagementService takes the node's pod out of the cluster's
	// management Service, so GD2 requests reach the other nodes: GD2
	// refuses to delete the peer that serves the request. A missing pod is
	// success; repeating it changes nothing.
	LeaveManagementService(ctx context.Context, n NodeTarget) error
	// DeleteNodeWorkload deletes the node's StatefulSet and PVC. Objects
	// already gone (NotFound) are success.
	DeleteNodeWorkload(ctx context.Context, n NodeTarget) error
	// ForceDeleteLostPod deletes the node's pod with UID n.LostPodUID at
	// once (grace period 0), for a pod stuck terminating on a lost
	// Kubernetes node. The UID precondition means a pod the StatefulSet
	// already recreated is never hit: a pod that is gone or replaced is
	// success.
	ForceDeleteLostPod(ctx context.Context, n NodeTarget) error
}

// NodeGD2 is what node actions need from GD2.
type NodeGD2 interface {
	// AddPeer adds the peer at address with zone and metadata, and returns
	// its id (GD2 gives a joining peer a new id). If a peer already carries
	// metadata[MetaNode] with the same value, it returns that peer's id and
	// adds nothing: a join repeated after a crash must not fail or add twice.
	AddPeer(ctx context.Context, address, zone string, metadata map[string]string) (peerID string, err error)
	// RegisterDevice registers device on the peer for provisioner ("" is
	// GD2's default, lvm). "device already exists" is success.
	RegisterDevice(ctx context.Context, peerID, device, provisioner string) error
	// SetDeviceEnabled sets the device's state to enabled or disabled.
	// Setting the state it already has is success.
	SetDeviceEnabled(ctx context.Context, peerID, device string, enabled bool) error
	// SetPeerMetadata merges md into the peer's metadata. GD2 cannot delete
	// metadata keys, so anthill only ever overwrites its own keys.
	SetPeerMetadata(ctx context.Context, peerID string, md map[string]string) error
	// BrickOnPeer reports whether volume has a brick at path on the peer.
	BrickOnPeer(ctx context.Context, volume, peerID, path string) (bool, error)
	// ReplaceBrick replaces the brick at path on the peer with a new brick
	// GD2 allocates on one of to.Peers. It is NOT idempotent in GD2 (a
	// missing source brick silently falls back to another brick of the
	// volume), so callers must check BrickOnPeer immediately before. The
	// request must reach the source peer's own GD2: GD2 sizes the new brick
	// from the source brick's path on the node serving the request.
	ReplaceBrick(ctx context.Context, volume, srcPeerID, path string, to MoveTo) error
	// RestorePeerZone moves a peer that a drain moved to its draining zone
	// (see DrainingZone) back to its own zone. A peer in its own zone is
	// left alone, so repeating it changes nothing.
	RestorePeerZone(ctx context.Context, peerID string) error
	// DeletePeer removes the peer from the pool. A peer that is already gone
	// (404) is success.
	DeletePeer(ctx context.Context, peerID string) error
}

// HealGD2 is what heal actions need from GD2.
type HealGD2 interface {
	// TriggerHeal starts an index heal of the volume. Triggering a heal that
	// is already running is success. A trigger GD2 could not hand to a
	// self-heal daemon returns an error matching ErrHealNotDelivered.
	TriggerHeal(ctx context.Context, volume string) error
	// ForceStartBricks starts the bricks of a started volume that are not
	// running (GD2's volume start with force-start-bricks, which also
	// mounts a brick GD2 started before mounting it). Bricks that run are
	// left running, so repeating it changes nothing; a volume that is not
	// started is refused, never started.
	ForceStartBricks(ctx context.Context, volume string) error
	// HealReplacement makes GD2 heal the replacement bricks of volume,
	// which it does not do by itself after a replace-brick: it sets the
	// volume option cluster/replicate.self-heal-daemon on again (GD2 then
	// writes the self-heal daemons a volfile naming the new bricks), sets
	// data, metadata and entry self-heal on (GD2's daemon volfile leaves
	// them off), and triggers a full heal. Options set to the values they
	// have and a full heal while one runs change nothing, so repeating it
	// is safe. A full heal GD2 could not hand to a self-heal daemon
	// returns an error matching ErrHealNotDelivered: unlike an index
	// heal's, nothing else would heal the replacement.
	HealReplacement(ctx context.Context, volume string) error
	// SetVolumeMetadata merges md into the volume's metadata (GD2 volume
	// edit). Writing values the volume already has changes nothing.
	SetVolumeMetadata(ctx context.Context, volume string, md map[string]string) error
}

// ClusterKube is what cluster actions need from Kubernetes.
type ClusterKube interface {
	// EnsureClusterInfra creates, each only if absent, the cluster's GD2 auth
	// secret, the etcd StatefulSet, the headless Service and the management
	// Service. It never regenerates an existing secret: every node must keep
	// sharing the one it started with.
	EnsureClusterInfra(ctx context.Context, c ClusterTarget) error
	// ScaleNodes makes the number of GlusterNodes that count toward the
	// cluster equal desired by carrying out c.Scale, the plan the cluster
	// machine made from its live read and put on record: it creates the
	// missing ones, and sets a decommission request on the surplus ones.
	// The plan is made from the difference observed, so a step repeated
	// once the count matches plans, and changes, nothing.
	ScaleNodes(ctx context.Context, c ClusterTarget, desired int) error
	// DeleteNodes deletes every GlusterNode of the cluster. NotFound and
	// already-deleting objects are success.
	DeleteNodes(ctx context.Context, c ClusterTarget) error
	// DeleteClusterInfra deletes what EnsureClusterInfra and
	// EnsureCSIDrivers created, the PodDisruptionBudgets over the Gluster
	// pods, and the etcd PVCs. NotFound is success.
	DeleteClusterInfra(ctx context.Context, c ClusterTarget) error
	// EnsureCSIDrivers creates, each only if absent, the CSI driver objects
	// the cluster's spec asks for. It never updates an existing object:
	// versions change only through SetCSIVersion.
	EnsureCSIDrivers(ctx context.Context, c ClusterTarget) error
	// SyncEndpoints (external mode) makes the management Service and its
	// EndpointSlices match spec.external.nodes of the live cluster: it
	// creates what is missing, updates what differs and deletes slices no
	// longer needed. Objects that already match are not written.
	SyncEndpoints(ctx context.Context, c ClusterTarget) error
	// IssueCertificates (spec.caSecretRef set) writes the trust bundle
	// first, then issues every certificate that is due into its Secret
	// and records each node's certificate hash on its GlusterNode. It
	// re-checks what is due from live objects, so repeating it issues
	// nothing new once every certificate is good; it never logs, returns
	// or records key material.
	IssueCertificates(ctx context.Context, c ClusterTarget) error
}

// UpgradeKube is what upgrade actions need from Kubernetes.
type UpgradeKube interface {
	// SetCSIVersion sets the CSI node plugins to version and restarts the
	// old plugin pods on nodes where no volume of the cluster is in use.
	// Setting the version it has changes nothing but such restarts.
	SetCSIVersion(ctx context.Context, c ClusterTarget, version string) error
}

// KubeOps is everything the actions need from Kubernetes; effects.Kube
// implements it.
type KubeOps interface {
	NodeKube
	ClusterKube
	UpgradeKube
}

// GD2Ops is everything the actions need from GD2; effects.GD2 implements
// it with a GD2 client bound to one cluster.
type GD2Ops interface {
	NodeGD2
	HealGD2
	ClusterGD2
}

// ClusterGD2 is what cluster actions need from GD2.
type ClusterGD2 interface {
	// SetClusterOptions sets cluster-wide options. Setting the values GD2
	// already has changes nothing.
	SetClusterOptions(ctx context.Context, options map[string]string) error
}

// Ops bundles the two sides an action may call.
type Ops struct {
	Kube KubeOps
	GD2  GD2Ops
}
