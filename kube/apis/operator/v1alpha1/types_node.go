package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GlusterNode is one Gluster server of a GlusterCluster: a GD2 peer with its
// devices. The operator creates one per server from the cluster's node
// templates; its status.state is the node state machine's persisted cursor.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=gn,categories=gluster
// +kubebuilder:printcolumn:name="Cluster",type=string,JSONPath=`.spec.cluster`
// +kubebuilder:printcolumn:name="Zone",type=string,JSONPath=`.spec.zone`
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.state`
// +kubebuilder:printcolumn:name="Desired",type=string,JSONPath=`.spec.desiredState`,priority=1
// +kubebuilder:printcolumn:name="Peer",type=string,JSONPath=`.status.peerID`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version`,priority=1
// +kubebuilder:printcolumn:name="GD2",type=string,JSONPath=`.status.gd2Version.reported`,priority=1
// +kubebuilder:printcolumn:name="Address",type=string,JSONPath=`.status.address`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type GlusterNode struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired state of the server.
	Spec GlusterNodeSpec `json:"spec"`

	// status is the observed state of the server, written by the operator
	// through the status subresource.
	// +optional
	Status GlusterNodeStatus `json:"status,omitempty"`
}

// GlusterNodeList is a list of GlusterNode objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type GlusterNodeList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the GlusterNode objects.
	Items []GlusterNode `json:"items"`
}

// NodeDesiredState is what the administrator wants a server to do.
// +kubebuilder:validation:Enum=enabled;disabled
type NodeDesiredState string

const (
	// NodeEnabled runs the server and lets it hold bricks.
	NodeEnabled NodeDesiredState = "enabled"
	// NodeDisabled keeps the server's bricks but places no new ones on it.
	NodeDisabled NodeDesiredState = "disabled"
)

// GlusterNodeSpec is the desired state of a GlusterNode.
//
// +kubebuilder:validation:XValidation:rule="!has(self.externalAddress) || !has(self.storage) || (!has(self.storage.capacity) && !has(self.storage.deviceCount) && !has(self.storage.storageClassName))",message="spec.storage.capacity, deviceCount and storageClassName ask for PersistentVolumeClaims, which anthill never creates for a server at spec.externalAddress: it runs no pod for it",fieldPath=".storage"
// +kubebuilder:validation:XValidation:rule="!has(self.externalAddress) || (!has(self.nodeAffinity) && (!has(self.tolerations) || size(self.tolerations) == 0))",message="spec.nodeAffinity and spec.tolerations place the server's pod, and a server at spec.externalAddress has none",fieldPath=".externalAddress"
type GlusterNodeSpec struct {
	// cluster is the name of the GlusterCluster, in the same namespace, that
	// the server belongs to. It cannot change.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.cluster is immutable"
	Cluster string `json:"cluster"`

	// zone is the failure zone of the server, a DNS label. It cannot
	// change: moving a server to another zone means a new node.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="spec.zone must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.zone is immutable"
	Zone string `json:"zone"`

	// template is the name of the cluster's node template the server was
	// made from. Empty for a server added by hand.
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="spec.template must be a DNS label, the name of a node template"
	// +optional
	Template string `json:"template,omitempty"`

	// desiredState is enabled (serve and accept new bricks) or disabled
	// (serve existing bricks, accept no new ones). Decommission and
	// maintenance are separate, one-shot requests made by annotation.
	// +kubebuilder:default=enabled
	// +optional
	DesiredState NodeDesiredState `json:"desiredState,omitempty"`

	// storage is the server's brick storage: host block devices, or
	// PersistentVolumeClaims the operator creates. Unset for a server whose
	// devices are managed outside anthill.
	// +optional
	Storage *NodeStorage `json:"storage,omitempty"`

	// externalAddress is the address of a server that runs outside this
	// Kubernetes cluster. Set means the operator runs no pod for it.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="isIP(self) || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.externalAddress must be a host name or an IP address"
	// +optional
	ExternalAddress string `json:"externalAddress,omitempty"`

	// nodeAffinity restricts which Kubernetes nodes may run the server, in
	// addition to the zone.
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`

	// tolerations let the server run on tainted Kubernetes nodes.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// NodeStorage is a server's brick storage: either devices, or the
// PersistentVolumeClaim fields (capacity, deviceCount, storageClassName).
//
// +kubebuilder:validation:XValidation:rule="has(self.devices) != has(self.capacity)",message="spec.storage must set exactly one of devices (host block devices) or capacity (PersistentVolumeClaims)"
// +kubebuilder:validation:XValidation:rule="!has(self.devices) || (!has(self.storageClassName) && !has(self.deviceCount))",message="spec.storage.storageClassName and spec.storage.deviceCount apply only to PersistentVolumeClaims, not to spec.storage.devices"
// +kubebuilder:validation:XValidation:rule="has(self.devices) == has(self.host)",message="spec.storage.host names the Kubernetes node whose block devices spec.storage.devices are: set it exactly when spec.storage.devices is set",fieldPath=".host"
type NodeStorage struct {
	// devices are paths of raw block devices on the Kubernetes node, such as
	// /dev/sdb, each registered as a GD2 device.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:items:MaxLength=256
	// +kubebuilder:validation:items:Pattern=`^/dev/`
	// +optional
	Devices []string `json:"devices,omitempty"`

	// host is the Kubernetes node (its kubernetes.io/hostname label) whose
	// block devices devices are. The server is pinned to it: its bricks and
	// GD2's state live there, and a restart on another host would find
	// another host's /dev. Required with devices, refused without.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="spec.storage.host must be a Kubernetes node name"
	// +optional
	Host string `json:"host,omitempty"`

	// storageClassName is the StorageClass of the claims. Unset means the
	// default StorageClass.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// capacity is the size of each claim. It must be positive.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="spec.storage.capacity must be a positive quantity such as 500Gi"
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	Capacity *resource.Quantity `json:"capacity,omitempty"`

	// deviceCount is the number of claims, each one a GD2 device. Unset
	// means 1.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	DeviceCount *int32 `json:"deviceCount,omitempty"`

	// provisioner is how GD2 makes bricks on the claims: lvm (the
	// default) registers each Block-mode claim as an LVM device, on which
	// GD2 makes thin pools (the kernel needs device-mapper); loop makes
	// each claim a Filesystem-mode volume, registered as a GD2 loop
	// device: each brick is an XFS image file on it, loop-mounted by GD2,
	// which needs the host's loop devices and no device-mapper.
	// +kubebuilder:validation:Enum=lvm;loop
	// +optional
	Provisioner string `json:"provisioner,omitempty"`

	// vdo would put a VDO (deduplication and compression) layer under each
	// brick; GD2 cannot (see NodeTemplate.VDO), so true is rejected at
	// admission.
	// +kubebuilder:validation:XValidation:rule="!self",message="GD2 has no VDO support: its device API registers a plain device for its LVM provisioner, so anthill cannot put a VDO layer under a brick; leave vdo unset"
	// +optional
	VDO bool `json:"vdo,omitempty"`
}

// GlusterNodeStatus is the observed state of a GlusterNode.
type GlusterNodeStatus struct {
	// observedGeneration is the spec generation this status reflects.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// statusSchema is the status schema level of the operator that last
	// wrote this status (StatusSchemaLevel of its API). An operator never
	// writes a status of a higher level than its own: it would drop the
	// fields it does not know. Absent (0) in status written before levels
	// existed (v0.2.0 and earlier).
	// +optional
	StatusSchema int32 `json:"statusSchema,omitempty"`

	// state is the state of the node machine: Pending, Provisioning,
	// Joining, Online, Offline, Maintenance, Failed, Draining, Abandoned,
	// Detaching, Deleting, Deleted, or an upgrade step (Quiescing, Restarting,
	// Rejoining, HealWait).
	// +optional
	State string `json:"state,omitempty"`

	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`

	// message is a human-readable detail of the state: what the machine
	// waits for, or why it is stuck.
	// +optional
	Message string `json:"message,omitempty"`

	// peerID is the server's GD2 peer ID, once it has joined.
	// +optional
	PeerID string `json:"peerID,omitempty"`

	// version is the Gluster version anthill records for the server: the
	// version its ready pod was started at (the pod's
	// operator.gluster.org/version, from spec.gluster.version). What the
	// server's GD2 itself reports is gd2Version; the VersionMatches
	// condition compares the two.
	// +optional
	Version string `json:"version,omitempty"`

	// gd2Version is what the server's own GD2 reports at GET /version, read
	// by the node machine once per pod (and hourly for a server anthill runs
	// no pod for).
	// +optional
	GD2Version *GD2VersionStatus `json:"gd2Version,omitempty"`

	// revision identifies the pod template the server runs, apart from its
	// version: a hash of everything its template (image, resources, env,
	// tolerations, affinity) puts in the pod. When it differs from what the
	// cluster's spec gives the server, the upgrade machine rolls the server
	// to the new template.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Revision string `json:"revision,omitempty"`

	// address is the address other peers and clients reach the server at.
	// +optional
	Address string `json:"address,omitempty"`

	// conditions are the latest observations of the server: Ready,
	// Progressing, Degraded, and VersionMatches (whether the version GD2
	// reports, gd2Version, is the version anthill records, version).
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// history holds the latest transitions of the node machine, oldest
	// first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	History []TransitionRecord `json:"history,omitempty"`

	// downSince is when the node's GD2 peer was first seen not alive in the
	// current outage: set on the first report (before offlineGrace has
	// passed), started over when an Offline peer is seen alive and then
	// lost again, cleared when the node is Online again. permissibleDowntime
	// is measured from it, so an operator restart does not reset the clock.
	// +optional
	DownSince *metav1.Time `json:"downSince,omitempty"`

	// aliveSince is when the peer of an Offline or Failed node was first
	// seen alive again; the node returns to Online once the peer has stayed
	// alive for the cluster's recoveryWindow.
	// +optional
	AliveSince *metav1.Time `json:"aliveSince,omitempty"`

	// movedBricks lists the bricks this node's drain has already moved to
	// other nodes (volume and path; replace-brick keeps the path). The drain
	// waits until each one's replica set is healthy before moving the next,
	// and the list survives operator restarts so no brick is moved twice.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	// +optional
	MovedBricks []BrickRef `json:"movedBricks,omitempty"`

	// replacementHeals lists, for bricks of movedBricks, when anthill last
	// made GD2 heal the brick's replacement and GD2 accepted it (volume
	// self-heal options set on, a full heal): GD2 heals no replacement by
	// itself and reports nothing pending while it is empty. A move counts
	// as healed only once listed here and once the replacement uses as
	// many bytes as the fullest other copy of its replica set. Cleared
	// with movedBricks when a drain begins.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	// +optional
	ReplacementHeals []ReplacementHeal `json:"replacementHeals,omitempty"`

	// leftBricks lists every brick ever moved off this node. GD2 leaves a
	// replaced brick's logical volume on its old node, and names a
	// replacement brick so that it can clash with such a volume (which
	// damages it), so no replacement of these bricks, or of the brick whose
	// name they share, is ever placed on this node. Unlike movedBricks it is
	// kept when a drain is cancelled.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=4096
	// +optional
	LeftBricks []BrickRef `json:"leftBricks,omitempty"`

	// refusedPeers are GD2 peers a replace-brick off this node failed on
	// after GD2 had begun preparing the new brick there (a code-2 failure
	// leaves an unusable brick behind on that peer's device). The drain
	// never offers them again; the list is cleared when the node is Online.
	// +listType=set
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	RefusedPeers []string `json:"refusedPeers,omitempty"`

	// ledger records each lasting change the node machine makes, before
	// it makes it: the node's status write that puts an entry here comes
	// before the action, so no crash can lose the record. The cluster
	// machine copies the entries into its GlusterCluster's status.ledger,
	// which keeps them after this GlusterNode is gone; a decommissioned
	// node is removed only once they are there. Oldest first; at most 32
	// entries, the oldest dropped first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Ledger []LedgerEntry `json:"ledger,omitempty"`
}

// MaxNodeLedger is the number of entries kept in a GlusterNode's
// status.ledger.
const MaxNodeLedger = 32

// ReplacementHeal is when anthill last made GD2 heal the replacement of a
// moved brick.
type ReplacementHeal struct {
	// volume is the GD2 volume name.
	// +kubebuilder:validation:MaxLength=256
	Volume string `json:"volume"`
	// path is the brick's path (the replacement keeps it).
	// +kubebuilder:validation:MaxLength=4096
	Path string `json:"path"`
	// time is when GD2 accepted the heal.
	Time metav1.Time `json:"time"`
}

// BrickRef names one brick of a volume by its path, which replace-brick
// keeps when it moves the brick to another node.
type BrickRef struct {
	// volume is the GD2 volume name.
	// +kubebuilder:validation:MaxLength=256
	Volume string `json:"volume"`
	// path is the brick's path on its node.
	// +kubebuilder:validation:MaxLength=4096
	Path string `json:"path"`
}

// GD2VersionStatus is one reading of a server's GET /version.
type GD2VersionStatus struct {
	// reported is glusterd-version as GD2 sent it: the version its binary
	// was built with, such as v4.1.0-0; empty when it was built without one.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Reported string `json:"reported,omitempty"`

	// pod is the UID of the pod whose GD2 was read; empty for a server
	// anthill runs no pod for.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Pod string `json:"pod,omitempty"`

	// readTime is when it was read.
	ReadTime metav1.Time `json:"readTime"`
}
