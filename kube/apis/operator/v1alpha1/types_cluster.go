package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GlusterCluster is one Gluster trusted storage pool, managed through
// glusterd2. In manual and automatic mode anthill runs the servers itself,
// one GlusterNode per server, placed by nodeTemplates; in external mode it
// only manages an existing pool reached at spec.external.nodes.
//
// +genclient
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced,shortName=gc,categories=gluster
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Phase",type=string,JSONPath=`.status.phase`
// +kubebuilder:printcolumn:name="Online",type=integer,JSONPath=`.status.nodes.online`
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.status.nodes.total`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.spec.gluster.version`
// +kubebuilder:printcolumn:name="Upgrade",type=string,JSONPath=`.status.upgrade.state`,priority=1
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.spec.gluster) || !has(oldSelf.spec.gluster.version) || !has(self.spec.gluster) || !has(self.spec.gluster.version) || !isSemver(oldSelf.spec.gluster.version, true) || !isSemver(self.spec.gluster.version, true) || semver(self.spec.gluster.version, true).compareTo(semver(oldSelf.spec.gluster.version, true)) >= 0 || (has(oldSelf.status) && has(oldSelf.status.upgrade) && has(oldSelf.status.upgrade.state) && oldSelf.status.upgrade.state in ['Validating', 'Blocked', 'Paused'] && (!has(oldSelf.status.upgrade.toVersion) || (isSemver(oldSelf.status.upgrade.toVersion, true) && (semver(oldSelf.status.upgrade.toVersion, true).compareTo(semver(oldSelf.spec.gluster.version, true)) == 0 ? has(oldSelf.status.upgrade.fromVersion) && isSemver(oldSelf.status.upgrade.fromVersion, true) && semver(self.spec.gluster.version, true).compareTo(semver(oldSelf.status.upgrade.fromVersion, true)) >= 0 : semver(self.spec.gluster.version, true).compareTo(semver(oldSelf.status.upgrade.toVersion, true)) >= 0))))",message="spec.gluster.version cannot be lowered below the version the servers run: Gluster has no rolling downgrade and anthill never moves a server back (docs/upgrades.md). While an upgrade is Validating, Blocked or Paused it may be set back as far as the version the run started from, which cancels the run",fieldPath=".spec.gluster.version"
// +kubebuilder:validation:XValidation:rule="!has(self.spec.csi) || !has(self.spec.csi.storageClasses) || !has(self.spec.csi.storageClasses.additional) || (has(self.spec.csi.storageClasses.file) && (has(self.spec.csi.storageClasses.file.name) || (has(self.spec.csi.storageClasses.file.create) && !self.spec.csi.storageClasses.file.create))) || self.spec.csi.storageClasses.additional.all(c, !has(c.name) || c.name != self.metadata.name + '-file')",message="spec.csi.storageClasses.additional[].name must differ from the file class's name, <cluster>-file unless csi.storageClasses.file.name is set: two classes cannot share a StorageClass name",fieldPath=".spec.csi.storageClasses.additional"
type GlusterCluster struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard object metadata.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the desired shape of the cluster.
	Spec GlusterClusterSpec `json:"spec"`

	// status is the observed state of the cluster, written by the operator
	// through the status subresource.
	// +optional
	Status GlusterClusterStatus `json:"status,omitempty"`
}

// GlusterClusterList is a list of GlusterCluster objects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
// +kubebuilder:object:root=true
type GlusterClusterList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata is the standard list metadata.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`

	// items are the GlusterCluster objects.
	Items []GlusterCluster `json:"items"`
}

// ClusterMode says who creates and scales the Gluster servers.
// +kubebuilder:validation:Enum=manual;automatic;external
type ClusterMode string

const (
	// ClusterModeManual runs exactly nodeTemplates[].nodes servers per
	// template.
	ClusterModeManual ClusterMode = "manual"
	// ClusterModeAutomatic scales each template between minNodes and
	// maxNodes on free capacity.
	ClusterModeAutomatic ClusterMode = "automatic"
	// ClusterModeExternal runs no servers: the pool already exists outside
	// this Kubernetes cluster.
	ClusterModeExternal ClusterMode = "external"
)

// GlusterDriver is a kind of volume the cluster provides through CSI.
// +kubebuilder:validation:Enum=file;block
type GlusterDriver string

const (
	// GlusterDriverFile provides Gluster file volumes (ReadWriteMany).
	GlusterDriverFile GlusterDriver = "file"
	// GlusterDriverBlock named gluster-block volumes; the API refuses it
	// (see GlusterClusterSpec.Drivers).
	GlusterDriverBlock GlusterDriver = "block"
)

// GlusterClusterSpec is the desired shape of a GlusterCluster.
//
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || (has(self.nodeTemplates) && size(self.nodeTemplates) > 0)",message="spec.nodeTemplates must have at least one template unless spec.mode is external",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'external' || !has(self.nodeTemplates) || size(self.nodeTemplates) == 0",message="spec.nodeTemplates must be empty when spec.mode is external: anthill runs no servers for an external cluster",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'manual' || !has(self.nodeTemplates) || self.nodeTemplates.all(t, has(t.nodes))",message="spec.nodeTemplates[].nodes is required in every template when spec.mode is manual",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'automatic' || !has(self.nodeTemplates) || self.nodeTemplates.all(t, has(t.minNodes) && has(t.maxNodes))",message="spec.nodeTemplates[].minNodes and maxNodes are required in every template when spec.mode is automatic",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'manual' || !has(self.nodeTemplates) || self.nodeTemplates.all(t, !has(t.minNodes) && !has(t.maxNodes))",message="spec.nodeTemplates[].minNodes and maxNodes apply only when spec.mode is automatic; in manual mode, the default, each template runs exactly nodes servers",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'automatic' || !has(self.nodeTemplates) || self.nodeTemplates.all(t, !has(t.nodes))",message="spec.nodeTemplates[].nodes applies only when spec.mode is manual; in automatic mode each template is scaled between minNodes and maxNodes",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode == 'automatic' || !has(self.nodeTemplates) || self.nodeTemplates.all(t, !has(t.maxStorage) && !has(t.freeStorageMin) && !has(t.freeStorageMax))",message="spec.nodeTemplates[].maxStorage, freeStorageMin and freeStorageMax apply only when spec.mode is automatic",fieldPath=".nodeTemplates"
// +kubebuilder:validation:XValidation:rule="self.mode != 'external' || has(self.external)",message="spec.external.nodes must list the addresses of the pool when spec.mode is external",fieldPath=".external"
// +kubebuilder:validation:XValidation:rule="self.mode != 'external' || !has(self.gluster) || !has(self.gluster.metricsExporter) || !self.gluster.metricsExporter",message="spec.gluster.metricsExporter: an external cluster runs no server pods for the exporter to run beside; run gluster-exporter on the external servers",fieldPath=".gluster.metricsExporter"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.external)",message="spec.external may be set only when spec.mode is external",fieldPath=".external"
// +kubebuilder:validation:XValidation:rule="has(self.caSecretRef) == has(oldSelf.caSecretRef) && (!has(self.caSecretRef) || self.caSecretRef.name == oldSelf.caSecretRef.name)",message="spec.caSecretRef is fixed at creation: TLS cannot be switched on or off on a running cluster, and a CA is rotated by changing the Secret's content",fieldPath=".caSecretRef"
// +kubebuilder:validation:XValidation:rule="self.mode == 'automatic' || !has(self.autoscaling)",message="spec.autoscaling may be set only when spec.mode is automatic",fieldPath=".autoscaling"
// +kubebuilder:validation:XValidation:rule="!has(self.csi) || !has(self.csi.version) || !has(self.gluster) || !has(self.gluster.version) || !isSemver(self.csi.version, true) || !isSemver(self.gluster.version, true) || semver(self.csi.version, true).compareTo(semver(self.gluster.version, true)) <= 0",message="spec.csi.version must not be newer than spec.gluster.version: CSI clients may not run ahead of the servers",fieldPath=".csi.version"
// +kubebuilder:validation:XValidation:rule="!has(oldSelf.csi) || !has(oldSelf.csi.version) || !has(self.csi) || !has(self.csi.version) || !isSemver(oldSelf.csi.version, true) || !isSemver(self.csi.version, true) || semver(self.csi.version, true).compareTo(semver(oldSelf.csi.version, true)) >= 0 || (has(self.gluster) && has(self.gluster.version) && isSemver(self.gluster.version, true) && semver(self.csi.version, true).compareTo(semver(self.gluster.version, true)) >= 0)",message="spec.csi.version cannot be lowered: anthill never moves a CSI client back (docs/upgrades.md). Only an upgrade cancelled by setting spec.gluster.version back may take it back with it, as far as the new spec.gluster.version",fieldPath=".csi.version"
// +kubebuilder:validation:XValidation:rule="!has(self.csi) || !has(self.csi.enabled) || self.csi.enabled || (has(oldSelf.csi) && has(oldSelf.csi.enabled) && !oldSelf.csi.enabled)",message="spec.csi.enabled cannot be turned off: removing the CSI driver would unmount the volumes of running pods; delete the cluster instead",fieldPath=".csi.enabled"
// +kubebuilder:validation:XValidation:rule="(has(self.csi) && has(self.csi.snapshots)) == (has(oldSelf.csi) && has(oldSelf.csi.snapshots)) && (!has(self.csi) || !has(self.csi.snapshots) || self.csi.snapshots == oldSelf.csi.snapshots)",message="spec.csi.snapshots is fixed at creation: the CSI controller Deployment and its RBAC are made once (docs/csi.md)",fieldPath=".csi.snapshots"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.nodeTemplates) || !has(self.csi) || !has(self.csi.snapshots) || !self.csi.snapshots.enabled || self.nodeTemplates.exists(t, (has(t.storage.provisioner) ? t.storage.provisioner : 'lvm') == 'lvm')",message="spec.csi.snapshots.enabled needs a node template whose storage.provisioner is lvm (the default): GD2 takes snapshots of bricks on LVM thin volumes only and refuses loop bricks (snapshot not supported)",fieldPath=".csi.snapshots.enabled"
// +kubebuilder:validation:XValidation:rule="(has(self.csi) && has(self.csi.nodeSelector)) == (has(oldSelf.csi) && has(oldSelf.csi.nodeSelector)) && (!has(self.csi) || !has(self.csi.nodeSelector) || self.csi.nodeSelector == oldSelf.csi.nodeSelector)",message="spec.csi.nodeSelector is fixed at creation: moving the node plugins would unmount the volumes of running pods",fieldPath=".csi.nodeSelector"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.nodeTemplates) || !has(self.csi) || !has(self.csi.storageClasses) || !has(self.csi.storageClasses.file) || (!has(self.csi.storageClasses.file.brickType) || self.nodeTemplates.exists(t, (has(t.storage.provisioner) ? t.storage.provisioner : 'lvm') == self.csi.storageClasses.file.brickType))",message="csi.storageClasses.file.brickType must be the storage.provisioner (lvm unless set) of a node template: GD2 makes a class's bricks only on devices of its brickType",fieldPath=".csi.storageClasses.file.brickType"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.nodeTemplates) || !has(self.csi) || !has(self.csi.storageClasses) || !has(self.csi.storageClasses.additional) || self.csi.storageClasses.additional.all(s, (!has(s.brickType) || self.nodeTemplates.exists(t, (has(t.storage.provisioner) ? t.storage.provisioner : 'lvm') == s.brickType)))",message="csi.storageClasses.additional[].brickType must be the storage.provisioner (lvm unless set) of a node template: GD2 makes a class's bricks only on devices of its brickType",fieldPath=".csi.storageClasses.additional"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.nodeTemplates) || !has(self.csi) || !has(self.csi.storageClasses) || !has(self.csi.storageClasses.file) || ((has(self.csi.storageClasses.file.replicas) ? self.csi.storageClasses.file.replicas : (has(self.csi.storageClasses.file.arbiterType) ? 2 : 0)) <= 1 || self.nodeTemplates.exists(a, self.nodeTemplates.exists(b, a.zone != b.zone && ((has(self.csi.storageClasses.file.replicas) ? self.csi.storageClasses.file.replicas : (has(self.csi.storageClasses.file.arbiterType) ? 2 : 0)) <= 2 || self.nodeTemplates.exists(c, c.zone != a.zone && c.zone != b.zone)))))",message="csi.storageClasses.file.replicas is more than the zones of spec.nodeTemplates: GD2 puts each copy of a volume in a zone of its own (a thin-arbiter class needs 2)",fieldPath=".csi.storageClasses.file.replicas"
// +kubebuilder:validation:XValidation:rule="self.mode == 'external' || !has(self.nodeTemplates) || !has(self.csi) || !has(self.csi.storageClasses) || !has(self.csi.storageClasses.additional) || self.csi.storageClasses.additional.all(s, ((has(s.replicas) ? s.replicas : (has(s.arbiterType) ? 2 : 0)) <= 1 || self.nodeTemplates.exists(a, self.nodeTemplates.exists(b, a.zone != b.zone && ((has(s.replicas) ? s.replicas : (has(s.arbiterType) ? 2 : 0)) <= 2 || self.nodeTemplates.exists(c, c.zone != a.zone && c.zone != b.zone))))))",message="csi.storageClasses.additional[].replicas is more than the zones of spec.nodeTemplates: GD2 puts each copy of a volume in a zone of its own (a thin-arbiter class needs 2)",fieldPath=".csi.storageClasses.additional"
type GlusterClusterSpec struct {
	// mode says who creates and scales the Gluster servers: manual (a fixed
	// count per node template), automatic (scaled on free capacity between
	// minNodes and maxNodes) or external (an existing pool outside this
	// cluster; see external). A cluster cannot change to or from external.
	// +kubebuilder:default=manual
	// +kubebuilder:validation:XValidation:rule="self == oldSelf || (self != 'external' && oldSelf != 'external')",message="spec.mode cannot change to or from external"
	// +optional
	Mode ClusterMode `json:"mode,omitempty"`

	// nodeTemplates describe the Gluster servers to run, usually one
	// template per failure zone. Each GlusterNode the operator creates names
	// the template it came from. Required unless mode is external.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	NodeTemplates []NodeTemplate `json:"nodeTemplates,omitempty"`

	// gluster selects the Gluster server software. Changing version starts a
	// rolling upgrade.
	// +optional
	Gluster *GlusterServerSpec `json:"gluster,omitempty"`

	// csi selects the CSI drivers that give pods access to the cluster's
	// volumes.
	// +optional
	CSI *CSISpec `json:"csi,omitempty"`

	// drivers are the kinds of volume the cluster provides. Only file is
	// available: block is refused, since no GD2-era block driver exists
	// that anthill could run (the virtblock driver's image and GD2's
	// block-hosting volumes are untested together, gluster-blockd has no
	// image; docs/csi.md). Empty means file.
	// +listType=set
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(d, d == 'file')",message="spec.drivers: block is not available: no GD2-era block CSI driver exists that anthill can run (docs/csi.md); use file"
	// +optional
	Drivers []GlusterDriver `json:"drivers,omitempty"`

	// caSecretRef turns TLS on: it names a Secret in the cluster's namespace
	// holding a CA key pair as cert-manager's CA issuer reads it — the CA
	// certificate under key (default tls.crt) and its private key under
	// tls.key. From it the operator issues a serving certificate for every
	// Gluster node, one for etcd and a client certificate for the CSI
	// drivers; GD2's REST API and etcd then serve TLS only and the operator
	// verifies every server against the CA. In external mode only the CA
	// certificate is read: it is the CA the pool's servers are verified
	// against. A new CA in the Secret is rotated in without a window where
	// a client distrusts a server (docs/security.md). Set at creation
	// only: TLS cannot be switched on or off on a running cluster. Unset
	// means plain HTTP inside the cluster network.
	// +optional
	CASecretRef *SecretReference `json:"caSecretRef,omitempty"`

	// clusterOptions are Gluster cluster-wide options (as in "gluster volume
	// set all"). The cluster machine sets in GD2 every key whose value GD2
	// does not have: after a change here, and after a change made in GD2 by
	// hand. A key removed here keeps GD2's value. Not applied to an
	// external cluster.
	// +kubebuilder:validation:MaxProperties=64
	// +optional
	ClusterOptions map[string]string `json:"clusterOptions,omitempty"`

	// upgradePolicy controls rolling upgrades of the servers.
	// +kubebuilder:default={}
	// +optional
	UpgradePolicy *UpgradePolicy `json:"upgradePolicy,omitempty"`

	// failurePolicy controls when an unreachable server is declared failed
	// and its bricks are moved elsewhere.
	// +kubebuilder:default={}
	// +optional
	FailurePolicy *FailurePolicy `json:"failurePolicy,omitempty"`

	// drainPolicy controls how a drained server's bricks are moved off it.
	// +kubebuilder:default={}
	// +optional
	DrainPolicy *DrainPolicy `json:"drainPolicy,omitempty"`

	// paused stops every change the operator would make to the cluster
	// (scaling, upgrades, failure handling); health is still observed and
	// reported.
	// +optional
	Paused bool `json:"paused,omitempty"`

	// automation switches off, one at a time, changes anthill otherwise
	// makes on its own, where paused holds them all: each false holds its
	// change with reason AutomationOff in the status of what waits
	// (kubectl gluster explain shows it), and true lets it go on. Unset
	// means every one on.
	// +kubebuilder:default={}
	// +optional
	Automation *AutomationSpec `json:"automation,omitempty"`

	// autoscaling tunes automatic mode's capacity-driven sizing: which
	// directions it may scale in and how long it waits between two steps.
	// Only when mode is automatic; unset means every default.
	// +optional
	Autoscaling *AutoscalingSpec `json:"autoscaling,omitempty"`

	// external describes an existing pool. Required when mode is external,
	// forbidden otherwise.
	// +optional
	External *ExternalSpec `json:"external,omitempty"`

	// management overrides how the operator reaches the GD2 REST API. Unset
	// means the cluster's management Service.
	// +optional
	Management *ManagementSpec `json:"management,omitempty"`
}

// NodeTemplate describes a group of Gluster servers that share placement
// and storage, usually all servers of one failure zone.
//
// +kubebuilder:validation:XValidation:rule="!has(self.nodes) || (!has(self.minNodes) && !has(self.maxNodes))",message="nodeTemplates[].nodes (manual count) and minNodes/maxNodes (automatic range) are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="!has(self.minNodes) || !has(self.maxNodes) || self.minNodes <= self.maxNodes",message="nodeTemplates[].minNodes must not be greater than maxNodes",fieldPath=".minNodes"
// +kubebuilder:validation:XValidation:rule="!has(self.freeStorageMin) || !has(self.freeStorageMax) || !isQuantity(string(self.freeStorageMin)) || !isQuantity(string(self.freeStorageMax)) || quantity(string(self.freeStorageMin)).isLessThan(quantity(string(self.freeStorageMax)))",message="nodeTemplates[].freeStorageMin must be less than freeStorageMax",fieldPath=".freeStorageMin"
// +kubebuilder:validation:XValidation:rule="!has(self.maxStorage) || !has(self.minNodes) || !isQuantity(string(self.maxStorage)) || !isQuantity(string(self.storage.capacity)) || double(self.minNodes) * double(has(self.storage.deviceCount) ? self.storage.deviceCount : 1) * quantity(string(self.storage.capacity)).asApproximateFloat() <= quantity(string(self.maxStorage)).asApproximateFloat()",message="nodeTemplates[].maxStorage must be at least minNodes times storage.deviceCount times storage.capacity: the template's fewest servers would already exceed it",fieldPath=".maxStorage"
type NodeTemplate struct {
	// name identifies the template within the cluster and is part of the
	// names of its nodes. It must be a DNS label.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="nodeTemplates[].name must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
	Name string `json:"name"`

	// zone is the failure zone of the template's servers, matched against
	// the topology.kubernetes.io/zone label of Kubernetes nodes. It must be
	// a DNS label and cannot change.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="nodeTemplates[].zone must be a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="nodeTemplates[].zone is immutable"
	Zone string `json:"zone"`

	// nodes is the fixed number of servers in manual mode. Mutually
	// exclusive with minNodes and maxNodes.
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=128
	// +optional
	Nodes *int32 `json:"nodes,omitempty"`

	// minNodes is the least number of servers in automatic mode.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=128
	// +optional
	MinNodes *int32 `json:"minNodes,omitempty"`

	// maxNodes is the largest number of servers in automatic mode.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=128
	// +optional
	MaxNodes *int32 `json:"maxNodes,omitempty"`

	// maxStorage caps the raw capacity of the template's servers in
	// automatic mode; no server is added past it.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="nodeTemplates[].maxStorage must be a positive quantity such as 10Ti"
	MaxStorage *resource.Quantity `json:"maxStorage,omitempty"`

	// freeStorageMin is the free capacity below which automatic mode adds a
	// server.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && !quantity(string(self)).isLessThan(quantity('0'))",message="nodeTemplates[].freeStorageMin must be a quantity of zero or more, such as 500Gi"
	FreeStorageMin *resource.Quantity `json:"freeStorageMin,omitempty"`

	// freeStorageMax is the free capacity above which automatic mode removes
	// a server. It must exceed freeStorageMin.
	// +optional
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && !quantity(string(self)).isLessThan(quantity('0'))",message="nodeTemplates[].freeStorageMax must be a quantity of zero or more, such as 2Ti"
	FreeStorageMax *resource.Quantity `json:"freeStorageMax,omitempty"`

	// nodeAffinity further restricts which Kubernetes nodes may run the
	// template's servers, in addition to the zone.
	// +optional
	NodeAffinity *corev1.NodeAffinity `json:"nodeAffinity,omitempty"`

	// tolerations let the template's servers run on tainted Kubernetes
	// nodes, for example nodes dedicated to storage.
	// +listType=atomic
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// resources are the compute resources of each server's GD2 container.
	// A change rolls out to running servers like an upgrade, one heal-gated
	// batch at a time.
	// +optional
	Resources *corev1.ResourceRequirements `json:"resources,omitempty"`

	// env are extra environment variables of each server's GD2 container,
	// after the ones anthill sets. Names starting with GD2_ are anthill's
	// and rejected. A change rolls out like an upgrade.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:XValidation:rule="self.all(e, !e.name.startsWith('GD2_'))",message="nodeTemplates[].env must not set GD2_ variables: anthill sets GD2's own configuration"
	// +optional
	Env []corev1.EnvVar `json:"env,omitempty"`

	// storage is the brick storage each server gets.
	Storage TemplateStorage `json:"storage"`

	// vdo would put a VDO (deduplication and compression) layer under each
	// brick. GD2 cannot: its device API registers a plain device for its
	// LVM provisioner. The field is kept so that a manifest asking for VDO
	// is refused with a reason instead of being silently pruned; true is
	// rejected at admission.
	// +kubebuilder:validation:XValidation:rule="!self",message="GD2 has no VDO support: its device API registers a plain device for its LVM provisioner, so anthill cannot put a VDO layer under a brick; leave vdo unset"
	// +optional
	VDO bool `json:"vdo,omitempty"`
}

// TemplateStorage describes the PersistentVolumeClaims that back each
// server's bricks: deviceCount claims of capacity each.
type TemplateStorage struct {
	// storageClassName is the StorageClass of the claims. Unset means the
	// default StorageClass. The class should provide block-mode volumes.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	StorageClassName *string `json:"storageClassName,omitempty"`

	// capacity is the size of each claim. It must be positive.
	// +kubebuilder:validation:XValidation:rule="isQuantity(string(self)) && quantity(string(self)).isGreaterThan(quantity('0'))",message="storage.capacity must be a positive quantity such as 500Gi"
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:MaxLength=64
	Capacity resource.Quantity `json:"capacity"`

	// deviceCount is the number of claims, each one a GD2 device, per
	// server.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	DeviceCount int32 `json:"deviceCount,omitempty"`

	// provisioner is how GD2 makes bricks on the claims of each server: lvm (the
	// default) registers each Block-mode claim as an LVM device, on which
	// GD2 makes thin pools (the kernel needs device-mapper); loop makes
	// each claim a Filesystem-mode volume, registered as a GD2 loop
	// device: each brick is an XFS image file on it, loop-mounted by GD2,
	// which needs the host's loop devices and no device-mapper.
	// +kubebuilder:validation:Enum=lvm;loop
	// +optional
	Provisioner string `json:"provisioner,omitempty"`
}

// AutoscalingSpec tunes automatic mode: each template grows by one server
// when its free capacity (unallocated space of enabled devices on online
// peers, as GD2 reports it) falls below freeStorageMin, and shrinks by one
// when it exceeds freeStorageMax, one step at a time.
type AutoscalingSpec struct {
	// scaleUp lets the autoscaler add servers. False holds every template
	// at its count (or raises it to minNodes) whatever its free capacity.
	// +kubebuilder:default=true
	// +optional
	ScaleUp *bool `json:"scaleUp,omitempty"`

	// scaleDown lets the autoscaler remove servers (each through the
	// decommission drain). False keeps every server it added, so storage
	// grows but never shrinks on its own.
	// +kubebuilder:default=true
	// +optional
	ScaleDown *bool `json:"scaleDown,omitempty"`

	// cooldown is the least time between two autoscaler steps, as a
	// duration (10m).
	// +kubebuilder:default="10m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('0s')",message="autoscaling.cooldown must be a duration such as 10m or 1h30m"
	// +optional
	Cooldown *metav1.Duration `json:"cooldown,omitempty"`
}

// AutomationSpec switches anthill's own changes on and off, one at a time
// (docs/user-guide.md, "Switching an automation off").
type AutomationSpec struct {
	// disruptionBudgets lets the disruption machine keep the
	// PodDisruptionBudgets over the Gluster pods: open one zone to an
	// eviction while it is safe and lock every zone when it is not. False
	// holds the machine where it is: no zone is opened or locked and no
	// budget or pod label is changed, so the budgets stay as they are.
	// +kubebuilder:default=true
	// +optional
	DisruptionBudgets *bool `json:"disruptionBudgets,omitempty"`

	// templateRollouts lets the upgrade machine roll the servers (and CSI
	// clients) onto a changed pod template or image with the version
	// unchanged. False holds such a rollout until it is set true (one
	// still validating is called off); a version upgrade still runs, and
	// rolls the servers onto the spec's templates with it.
	// +kubebuilder:default=true
	// +optional
	TemplateRollouts *bool `json:"templateRollouts,omitempty"`

	// clusterOptions lets the cluster machine set spec.clusterOptions in
	// GD2. False leaves GD2's options as they are.
	// +kubebuilder:default=true
	// +optional
	ClusterOptions *bool `json:"clusterOptions,omitempty"`

	// lostPodEviction lets the node machine force-delete the pod of an
	// Offline server stuck on a lost Kubernetes node, so that it starts
	// again elsewhere (docs/node-loss.md). False leaves the pod to
	// Kubernetes.
	// +kubebuilder:default=true
	// +optional
	LostPodEviction *bool `json:"lostPodEviction,omitempty"`

	// markFailed lets the node machine mark a server Failed (an alert)
	// once it has been offline longer than
	// failurePolicy.permissibleDowntime. False keeps it Offline.
	// +kubebuilder:default=true
	// +optional
	MarkFailed *bool `json:"markFailed,omitempty"`

	// forceStartBricks lets the heal machine start the bricks GD2 left
	// offline on a live server (a volume start with force-start-bricks).
	// False leaves them offline until an admin starts them.
	// +kubebuilder:default=true
	// +optional
	ForceStartBricks *bool `json:"forceStartBricks,omitempty"`
}

// GlusterServerSpec selects the Gluster server software.
type GlusterServerSpec struct {
	// image is the container image of the Gluster server (glusterd2 and
	// the brick processes). Without a tag or digest the servers run
	// image:version, so changing version alone upgrades them; with one,
	// change image and version together. Unset means the image anthill
	// pins (docs/install.md, "Images anthill runs"): GD2's nightly image,
	// the only GD2 image upstream built, at one digest whatever the
	// version, so a version change then restarts every server on the same
	// image. Not used in external mode.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	Image string `json:"image,omitempty"`

	// version is the Gluster version the image runs, as a semantic version
	// (4.1.0, v4.1): the version anthill records for each server and that
	// its upgrade machine compares. Raising it starts a rolling upgrade;
	// lowering it below what the servers run is refused (no rolling
	// downgrade). Unset means anthill records no version for the servers
	// and never upgrades them; each GlusterNode's status.gd2Version still
	// says what its GD2 reports.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isSemver(self, true)",message="gluster.version must be a semantic version such as 4.1.0 or v4.1"
	// +optional
	Version string `json:"version,omitempty"`

	// metricsExporter runs Gluster's own Prometheus exporter,
	// gluster-exporter of the gluster-prometheus project, which the pinned
	// GD2 image carries, in a second container of every server pod: brick
	// and volume I/O from GD2's volume profile (fop counts and latencies,
	// bytes read and written), brick and peer status, and the CPU and
	// memory of GD2's processes, on port 8080 (docs/observability.md). It
	// turns volume profiling on for every volume that does not set
	// debug/io-stats.count-fop-hits. The image must carry the exporter:
	// the real-node test image does not. Unset means false. Not available
	// in external mode, where anthill runs no server pods. Changing it
	// rolls the servers like any change of their pod template.
	// +optional
	MetricsExporter *bool `json:"metricsExporter,omitempty"`
}

// CSISpec selects the CSI drivers.
//
// +kubebuilder:validation:XValidation:rule="!has(self.enabled) || self.enabled || (!has(self.fileImage) && !has(self.nodeSelector) && !has(self.storageClasses) && !has(self.snapshots))",message="spec.csi.enabled is false, so no driver runs: spec.csi.fileImage, nodeSelector, storageClasses and snapshots would do nothing; remove them",fieldPath=".enabled"
type CSISpec struct {
	// enabled deploys the file CSI driver for this cluster: its CSIDriver,
	// controller, node plugins and StorageClasses. Unset means true. The
	// driver's name, org.gluster.glusterfs, is fixed in its code, so one
	// GlusterCluster per Kubernetes cluster can run it: a cluster that asks
	// for it while another holds it is refused at admission (the
	// ValidatingAdmissionPolicy anthill-csi-driver-holder; docs/csi.md).
	// Set false to run a cluster without CSI beside the one that has it.
	// It can be turned on later, but not off: removing the driver would
	// unmount the volumes of running pods.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`

	// fileImage is the container image of the Gluster file CSI driver.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	FileImage string `json:"fileImage,omitempty"`

	// blockImage is refused: block is not available (see drivers).
	// +kubebuilder:validation:XValidation:rule="false",message="spec.csi.blockImage: block is not available: no GD2-era block CSI driver exists that anthill can run (docs/csi.md)"
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=512
	// +optional
	BlockImage string `json:"blockImage,omitempty"`

	// version is the Gluster client version in the CSI images, as a
	// semantic version. It may not be newer than gluster.version; upgrades
	// roll the servers first, then the clients. It cannot be lowered, but
	// together with gluster.version when an upgrade is cancelled, and then
	// no lower than the new gluster.version.
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:XValidation:rule="isSemver(self, true)",message="csi.version must be a semantic version such as 4.1.0 or v4.1"
	// +optional
	Version string `json:"version,omitempty"`

	// nodeSelector limits the node plugins, the DaemonSets that mount the
	// cluster's volumes into pods, to Kubernetes nodes with all these
	// labels; pods that use the cluster's volumes must then run on such
	// nodes. Unset means every node. It is fixed at creation: moving a
	// node plugin off a node would unmount the volumes of the pods there.
	// Taking such a label off a node does the same, so drain the node
	// first.
	// +kubebuilder:validation:MaxProperties=16
	// +kubebuilder:validation:XValidation:rule="self.all(k, k.size() <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",message="csi.nodeSelector keys must be label keys: an optional DNS-subdomain prefix and '/', then up to 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
	// +kubebuilder:validation:XValidation:rule="self.all(k, self[k].size() <= 63)",message="csi.nodeSelector values must be label values of at most 63 characters"
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// storageClasses configure the StorageClass anthill keeps for each
	// driver in spec.drivers, through which users provision volumes by
	// creating PersistentVolumeClaims. Unset means one StorageClass per
	// driver with the defaults of StorageClassSpec.
	// +optional
	StorageClasses *CSIStorageClasses `json:"storageClasses,omitempty"`

	// snapshots configure CSI volume snapshots of the file driver: with
	// enabled, the controller runs the external snapshotter beside the
	// provisioner, and anthill keeps a VolumeSnapshotClass for the driver
	// once the snapshot API (the VolumeSnapshot CRDs, a cluster add-on the
	// admin installs with its snapshot-controller) is served. GD2 takes
	// snapshots of bricks on LVM thin volumes only (docs/csi.md). Fixed at
	// creation: the controller Deployment and its RBAC are made once.
	// +optional
	Snapshots *CSISnapshots `json:"snapshots,omitempty"`
}

// CSISnapshots configure CSI volume snapshots of the file driver.
type CSISnapshots struct {
	// enabled runs the snapshotter and keeps the VolumeSnapshotClass.
	// +kubebuilder:default=false
	// +optional
	Enabled bool `json:"enabled"`

	// className is the name of the VolumeSnapshotClass; unset means
	// <cluster>-file.
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
	// +optional
	ClassName string `json:"className,omitempty"`

	// deletionPolicy is the class's: Delete removes the GD2 snapshot with
	// its VolumeSnapshot; Retain keeps it (and so the volume it was taken
	// of, which GD2 does not delete while it has snapshots).
	// +kubebuilder:validation:Enum=Delete;Retain
	// +kubebuilder:default=Delete
	// +optional
	DeletionPolicy string `json:"deletionPolicy,omitempty"`
}

// CSIStorageClasses configure the StorageClass of each driver.
//
// +kubebuilder:validation:XValidation:rule="!has(self.additional) || !has(self.file) || !has(self.file.name) || (has(self.file.create) && !self.file.create) || self.additional.all(c, !has(c.name) || c.name != self.file.name)",message="csi.storageClasses.additional[].name must differ from csi.storageClasses.file.name: two classes cannot share a StorageClass name",fieldPath=".additional"
// +kubebuilder:validation:XValidation:rule="(has(self.file) && has(self.file.isDefault) && self.file.isDefault && (!has(self.file.create) || self.file.create) ? 1 : 0) + (has(self.additional) ? size(self.additional.filter(c, has(c.isDefault) && c.isDefault && (!has(c.create) || c.create))) : 0) <= 1",message="csi.storageClasses: at most one class may set isDefault: Kubernetes gives a claim that names no class only one default",fieldPath=".additional"
type CSIStorageClasses struct {
	// file is the StorageClass of the file driver (ReadWriteMany Gluster
	// volumes).
	// +optional
	File *StorageClassSpec `json:"file,omitempty"`

	// block is refused: block is not available (see drivers). It stays in
	// the schema because v0.2.0 served it under this API version: a cluster
	// stored with it still reads back and updates (the API server checks a
	// rule only on a field that changes), while setting or changing it is
	// refused with the reason, rather than dropped without a word.
	// +kubebuilder:validation:XValidation:rule="false",message="spec.csi.storageClasses.block: block is not available: no GD2-era block CSI driver exists that anthill can run (docs/csi.md); remove it and use spec.csi.storageClasses.file"
	// +optional
	Block *StorageClassSpec `json:"block,omitempty"`

	// additional are more StorageClasses of the file driver beside file,
	// one per kind of volume to offer (replica 3, two copies and a thin
	// arbiter, loop bricks, ...), each with its own name and parameters.
	// Each needs a name, unique among the cluster's classes; at most one
	// class of the cluster may be the default. Unset means file's class
	// alone.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +kubebuilder:validation:XValidation:rule="self.all(c, has(c.name))",message="csi.storageClasses.additional[].name is required: an additional class has no default name"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.name) || self.exists_one(d, has(d.name) && d.name == c.name))",message="csi.storageClasses.additional[].name must be unique: two classes cannot share a StorageClass name"
	// +optional
	Additional []StorageClassSpec `json:"additional,omitempty"`
}

// StorageClassSpec is the StorageClass anthill keeps for one driver. Its
// provisioner is the driver's CSI driver name. The operator puts back a
// class that is deleted or edited; a change that Kubernetes does not allow
// on a StorageClass (reclaimPolicy, or allowedZones becoming set or unset,
// which changes the binding mode) deletes and recreates it, which leaves
// existing volumes as they are.
//
// +kubebuilder:validation:XValidation:rule="has(self.arbiterType) == has(self.arbiterPath)",message="csi.storageClasses.*.arbiterPath is required with arbiterType thin and forbidden without it: the driver reads arbiterPath only for a thin arbiter",fieldPath=".arbiterPath"
// +kubebuilder:validation:XValidation:rule="!has(self.arbiterType) || !has(self.replicas) || self.replicas == 2",message="csi.storageClasses.*.replicas must be 2 or unset with arbiterType thin: the driver makes a thin-arbiter volume of two data bricks and refuses any other count",fieldPath=".replicas"
type StorageClassSpec struct {
	// create says whether anthill keeps a StorageClass for the driver.
	// false removes the one it created. Unset means true.
	// +optional
	Create *bool `json:"create,omitempty"`

	// name is the StorageClass name. Unset means <cluster>-file. A
	// StorageClass of this name that anthill did not create for this
	// cluster is never changed or deleted; the cluster then reports the
	// clash in a Warning Event and creates none.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*$')",message="csi.storageClasses.*.name must be a DNS subdomain: lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	// +optional
	Name string `json:"name,omitempty"`

	// reclaimPolicy is what happens to a provisioned volume when its claim
	// is deleted: Delete (the default) deletes the Gluster volume, Retain
	// keeps it for an administrator.
	// +kubebuilder:validation:Enum=Delete;Retain
	// +optional
	ReclaimPolicy corev1.PersistentVolumeReclaimPolicy `json:"reclaimPolicy,omitempty"`

	// isDefault makes the class the default StorageClass of the
	// Kubernetes cluster (annotation
	// storageclass.kubernetes.io/is-default-class), used by claims that
	// name no class.
	// +optional
	IsDefault bool `json:"isDefault,omitempty"`

	// allowedZones restricts provisioning to Kubernetes nodes whose
	// topology.kubernetes.io/zone label is one of these zones (the
	// StorageClass's allowedTopologies). Set, the class also binds
	// WaitForFirstConsumer, so a volume is provisioned for the zone its
	// first pod is scheduled to; unset, volumes are provisioned at once
	// (Immediate) for any zone.
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=32
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:items:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$')",message="csi.storageClasses.*.allowedZones[] must be a label value such as zone-1 or us-east-1a"
	// +optional
	AllowedZones []string `json:"allowedZones,omitempty"`

	// replicas is the number of copies of each file of the class's
	// volumes (the StorageClass parameter replicas): 2 or 3. GD2 puts
	// each copy in a zone of its own, so the node templates must span at
	// least this many zones. Unset means the driver's default, 3, and no
	// parameter. 1 is refused: such a volume has no second copy, so
	// anthill could never drain, fail over or restart for an upgrade a
	// node holding one of its bricks (docs/csi.md).
	// +kubebuilder:validation:XValidation:rule="self >= 2 && self <= 3",message="csi.storageClasses.*.replicas must be 2 or 3: GD2 refuses more than 3 (invalid Replica Count), and a volume of 1 has no second copy, so anthill could never drain or restart the node holding it (docs/csi.md)"
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// arbiterType thin makes each replica set of the class's volumes two
	// data bricks and a thin arbiter, a tie-breaker process reached at
	// arbiterPath that holds no data (the StorageClass parameter
	// arbiterType): the only arbiter the file driver can ask GD2 for. It
	// needs replicas unset or 2. anthill does not run the thin arbiter:
	// it must be running at arbiterPath (docs/csi.md).
	// +kubebuilder:validation:Enum=thin
	// +optional
	ArbiterType string `json:"arbiterType,omitempty"`

	// arbiterPath is where the thin arbiter runs, as host:path or
	// host:path:port (port 24007 unless given; the StorageClass parameter
	// arbiterPath). Required with arbiterType, forbidden without.
	// +kubebuilder:validation:MaxLength=512
	// +kubebuilder:validation:XValidation:rule="self.matches('^[A-Za-z0-9]([-A-Za-z0-9.]*[A-Za-z0-9])?:/[^:]*(:[0-9]{1,5})?$') && (size(self.split(':')) < 3 || (int(self.split(':')[2]) >= 1 && int(self.split(':')[2]) <= 65535))",message="csi.storageClasses.*.arbiterPath must be host:path or host:path:port, such as arbiter.example.com:/bricks/arbiter:24007: a host name or IPv4 address, an absolute path without ':', and a port between 1 and 65535"
	// +optional
	ArbiterPath string `json:"arbiterPath,omitempty"`

	// brickType is the kind of GD2 device the class's bricks are made on
	// (the StorageClass parameter brickType): lvm (thin LVM, the driver's
	// default) or loop (XFS image files). It must be the
	// storage.provisioner of at least one node template, since GD2 makes
	// bricks only on devices of the kind asked for. Unset means the
	// driver's default, lvm, and no parameter.
	// +kubebuilder:validation:Enum=lvm;loop
	// +optional
	BrickType string `json:"brickType,omitempty"`
}

// UpgradePolicy controls rolling upgrades.
type UpgradePolicy struct {
	// maxParallel is the largest number of servers upgraded together, as
	// one batch; the next batch starts when the whole batch is back and
	// healed. Whatever this number, each server is stopped only once
	// stopping it can neither drop a replica set below quorum nor take
	// away the only healed copy of some data, so servers whose bricks
	// share a replica set are never down together.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=16
	// +optional
	MaxParallel int32 `json:"maxParallel,omitempty"`

	// perZone takes every batch from a single zone, so that at most one
	// zone is degraded by the upgrade at any time; with bricks of each
	// replica set in distinct zones, the servers of a batch then share no
	// replica set.
	// +optional
	PerZone bool `json:"perZone,omitempty"`

	// healTimeout is how long an upgraded server may take to heal before
	// the upgrade is blocked for an administrator, as a duration (1h30m).
	// +kubebuilder:default="1h"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')",message="upgradePolicy.healTimeout must be a positive duration such as 45m or 1h30m"
	// +optional
	HealTimeout *metav1.Duration `json:"healTimeout,omitempty"`
}

// DrainPolicy controls drains: a decommissioned or deleted server moves
// every brick off by replace-brick, each replacement healing from the
// other copies of its replica set.
type DrainPolicy struct {
	// maxParallelMoves is the most bricks of one draining server that may
	// be moving or healing at once, each in a different replica set. A
	// brick moves only while its replica set is fully healed and keeps
	// quorum and another healed copy without it, so raising this never
	// puts two moves in one replica set; it lets the replica sets of a
	// server heal side by side instead of one after the other. 1 moves one
	// brick at a time and waits for its heal before the next.
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=64
	// +optional
	MaxParallelMoves int32 `json:"maxParallelMoves,omitempty"`
}

// FailurePolicy controls failure handling. See docs/failures.md for what
// each setting means for the data and how long each case takes.
//
// +kubebuilder:validation:XValidation:rule="!has(self.offlineGrace) || !has(self.permissibleDowntime) || duration(self.offlineGrace) < duration(self.permissibleDowntime)",message="failurePolicy.offlineGrace must be shorter than permissibleDowntime",fieldPath=".offlineGrace"
type FailurePolicy struct {
	// permissibleDowntime is how long a server may stay offline, outside
	// maintenance, before it is declared failed (an alert: GD2 cannot move a
	// dead server's bricks, so the server must come back), as a duration
	// (30m, 2h).
	// +kubebuilder:default="30m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) > duration('0s')",message="failurePolicy.permissibleDowntime must be a positive duration such as 30m or 2h"
	// +optional
	PermissibleDowntime *metav1.Duration `json:"permissibleDowntime,omitempty"`

	// offlineGrace is how long GD2 must report a server's peer not alive
	// before the server goes Offline, as a duration (30s). A shorter drop
	// leaves the server Online; the permissibleDowntime clock starts at the
	// first report either way. 0s means at once.
	// +kubebuilder:default="30s"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('0s')",message="failurePolicy.offlineGrace must be a duration such as 30s or 1m"
	// +optional
	OfflineGrace *metav1.Duration `json:"offlineGrace,omitempty"`

	// recoveryWindow is how long the peer of an Offline or Failed server
	// must stay alive before the server is Online again, as a duration
	// (2m). A peer that comes and goes faster stays Offline, but each time
	// it is seen alive its downtime starts over, so a flapping server is
	// never declared failed. 0s means at once.
	// +kubebuilder:default="2m"
	// +kubebuilder:validation:Type=string
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|ms|s|m|h))+$') && duration(self) >= duration('0s')",message="failurePolicy.recoveryWindow must be a duration such as 2m or 90s"
	// +optional
	RecoveryWindow *metav1.Duration `json:"recoveryWindow,omitempty"`
}

// ExternalSpec describes a Gluster pool that runs outside this Kubernetes
// cluster.
type ExternalSpec struct {
	// nodes are the servers of the pool. The operator talks to GD2 on them
	// and gives their addresses to the CSI drivers.
	// +listType=map
	// +listMapKey=address
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=128
	Nodes []ExternalNode `json:"nodes"`

	// port is the TCP port GD2's REST API listens on at every address in
	// nodes. The cluster's management Service always serves port 24007 and
	// forwards to this one.
	// +kubebuilder:default=24007
	// +kubebuilder:validation:XValidation:rule="self >= 1 && self <= 65535",message="external.port must be a TCP port between 1 and 65535"
	// +optional
	Port int32 `json:"port,omitempty"`
}

// ExternalNode is one server of an external pool.
type ExternalNode struct {
	// address is the server's fully qualified host name or IP address. It
	// is published in an EndpointSlice of the cluster's management Service,
	// so a host name needs at least two labels and an IP must be one a
	// Service can route to (not loopback, unspecified or link-local).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="isIP(self) || self.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)+$')",message="external.nodes[].address must be an IP address or a fully qualified host name (at least two labels, as EndpointSlices require)"
	// +kubebuilder:validation:XValidation:rule="!isIP(self) || !(ip(self).isLoopback() || ip(self).isUnspecified() || ip(self).isLinkLocalUnicast() || ip(self).isLinkLocalMulticast())",message="external.nodes[].address must not be a loopback, unspecified or link-local IP address: the cluster's management Service cannot route to it"
	Address string `json:"address"`

	// zone is the failure zone of the server, if known.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Zone string `json:"zone,omitempty"`
}

// ManagementSpec overrides how the operator reaches GD2.
type ManagementSpec struct {
	// endpoint is the base URL of the GD2 REST API, for an operator that
	// runs outside the cluster network and for tests.
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="isURL(self) && url(self).getScheme() in ['http', 'https'] && url(self).getHost() != ''",message="management.endpoint must be an absolute http or https URL"
	// +optional
	Endpoint string `json:"endpoint,omitempty"`

	// authSecretRef names the Secret holding the GD2 shared secret (key
	// secret) used to sign requests. Unset means the secret the operator
	// created for the cluster.
	// +optional
	AuthSecretRef *SecretReference `json:"authSecretRef,omitempty"`
}

// ClusterPhase is the state of the cluster machine.
type ClusterPhase string

// GlusterClusterStatus is the observed state of a GlusterCluster.
type GlusterClusterStatus struct {
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

	// phase is the state of the cluster machine: Pending, Provisioning,
	// Ready, Degraded, Scaling, Upgrading, Deleting.
	// +optional
	Phase ClusterPhase `json:"phase,omitempty"`

	// conditions are the latest observations of the cluster: Ready,
	// Progressing, Degraded.
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=32
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// nodes counts the cluster's servers.
	// +optional
	Nodes NodeCounts `json:"nodes,omitempty"`

	// volumes is the heal state of each volume.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=1024
	// +optional
	Volumes []VolumeStatus `json:"volumes,omitempty"`

	// upgrade is the state of the rolling upgrade machine.
	// +optional
	Upgrade *UpgradeStatus `json:"upgrade,omitempty"`
	// disruption is the state of the disruption machine, which keeps the
	// PodDisruptionBudgets over the Gluster pods.
	// +optional
	Disruption *DisruptionStatus `json:"disruption,omitempty"`

	// capacity is the raw capacity of the cluster's devices.
	// +optional
	Capacity *CapacityStatus `json:"capacity,omitempty"`

	// autoscaling is the autoscaler's last decision (automatic mode only):
	// each template's desired count and why it does or does not change.
	// +optional
	Autoscaling *AutoscalingStatus `json:"autoscaling,omitempty"`

	// history holds the latest transitions of the cluster machine, oldest
	// first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	History []TransitionRecord `json:"history,omitempty"`

	// ledger records the configuration changes that must stay answerable
	// after the GlusterNode they concern is gone, each put on record
	// before its action runs (a node's changes first in the GlusterNode's
	// own status.ledger, copied here by the cluster machine): each brick a
	// drain moved,
	// each peer deleted, workload deleted or restarted for a new version,
	// each change of a node's devices, each forced deletion of a lost pod
	// and each start of bricks GD2 left offline on it; and the
	// cluster-wide lasting changes: GlusterNodes created or asked to
	// decommission by scaling, CSI driver objects created and CSI clients
	// rolled to a version, GD2 cluster options set. Oldest first.
	// At most 100 entries; the oldest are dropped first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=100
	// +optional
	Ledger []LedgerEntry `json:"ledger,omitempty"`
}

// MaxLedger is the number of entries kept in status.ledger.
const MaxLedger = 100

// The actions of ledger entries.
const (
	// LedgerActionReplaceBrick is a brick moved off the node.
	LedgerActionReplaceBrick = "replaceBrick"
	// LedgerActionDeletePeer is the node's GD2 peer deleted.
	LedgerActionDeletePeer = "deletePeer"
	// LedgerActionDeleteWorkload is the node's StatefulSet and claims deleted.
	LedgerActionDeleteWorkload = "deleteWorkload"
	// LedgerActionRollWorkload is the node's pod restarted on the cluster's
	// template at version.
	LedgerActionRollWorkload = "rollWorkload"
	// LedgerActionDisableDevices is the node's devices closed to new bricks.
	LedgerActionDisableDevices = "disableDevices"
	// LedgerActionEnableDevices is the node's devices opened again.
	LedgerActionEnableDevices = "enableDevices"
	// LedgerActionEvictLostPod is the pod of a lost Kubernetes node deleted
	// without waiting for its kubelet.
	LedgerActionEvictLostPod = "evictLostPod"

	// LedgerActionCreateNodes is count GlusterNodes created from node
	// template template by the cluster machine (provisioning, scaling up).
	LedgerActionCreateNodes = "createNodes"
	// LedgerActionDecommissionNode is the node asked to decommission by the
	// cluster machine (scaling down); its drain follows as its own entries.
	LedgerActionDecommissionNode = "decommissionNode"
	// LedgerActionEnsureCSIDrivers is the cluster's missing CSI driver
	// objects created, or its StorageClasses brought back to the spec.
	LedgerActionEnsureCSIDrivers = "ensureCSIDrivers"
	// LedgerActionRollCSIDrivers is the cluster's CSI clients set to version
	// and restarted (the upgrade machine's rollClients).
	LedgerActionRollCSIDrivers = "rollCSIDrivers"
	// LedgerActionSetClusterOptions is GD2 cluster options set from
	// spec.clusterOptions.
	LedgerActionSetClusterOptions = "setClusterOptions"
	// LedgerActionForceStartBricks is the bricks of volume that GD2 left
	// offline on the node's live peer started by a volume start with
	// force-start-bricks (the heal machine's forceStartBricks step).
	LedgerActionForceStartBricks = "forceStartBricks"
	// LedgerActionHealReplacement is the replacement of a brick the
	// node's drain moved healed on anthill's say: the volume's self-heal
	// options set on (options) and a full heal triggered (the node
	// machine's healReplacement step; GD2 heals no replacement by itself).
	LedgerActionHealReplacement = "healReplacement"
)

// LedgerEntry is one configuration change in status.ledger.
type LedgerEntry struct {
	// time is when the change was put on record, in the sync before its
	// action ran.
	Time metav1.Time `json:"time"`

	// action is what changed: for a node replaceBrick, deletePeer,
	// deleteWorkload, rollWorkload, disableDevices, enableDevices,
	// evictLostPod, decommissionNode, forceStartBricks or
	// healReplacement; for the whole
	// cluster createNodes, ensureCSIDrivers, rollCSIDrivers or
	// setClusterOptions.
	// +kubebuilder:validation:MaxLength=64
	Action string `json:"action"`

	// node is the GlusterNode the change was made for; empty for a change
	// of the whole cluster.
	// +kubebuilder:validation:MaxLength=253
	// +optional
	Node string `json:"node,omitempty"`

	// peer is the GD2 peer id of the node.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Peer string `json:"peer,omitempty"`

	// volume is the GD2 volume of the moved brick (replaceBrick,
	// healReplacement), or whose offline bricks were started
	// (forceStartBricks).
	// +kubebuilder:validation:MaxLength=256
	// +optional
	Volume string `json:"volume,omitempty"`
	// brick is the moved brick's path on the node (replaceBrick,
	// healReplacement).
	// +kubebuilder:validation:MaxLength=4096
	// +optional
	Brick string `json:"brick,omitempty"`

	// version is the version the node's pod was restarted at
	// (rollWorkload; empty when only the template changed), or the CSI
	// clients were rolled to (rollCSIDrivers).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Version string `json:"version,omitempty"`

	// template is the node template the GlusterNodes were created from
	// (createNodes), or the decommissioned node's (decommissionNode).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Template string `json:"template,omitempty"`

	// count is the number of GlusterNodes created (createNodes only).
	// +optional
	Count int32 `json:"count,omitempty"`

	// objects are the CSI driver objects created or brought back to the
	// spec, as "Kind name" (ensureCSIDrivers only).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=320
	// +optional
	Objects []string `json:"objects,omitempty"`

	// options are the GD2 cluster options set (setClusterOptions), or
	// the volume options (healReplacement), as "key=value", sorted.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=1024
	// +optional
	Options []string `json:"options,omitempty"`

	// targetPeers are the GD2 peers the replacement brick was allowed on
	// (GD2 placed it on one of them).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MaxLength=64
	// +optional
	TargetPeers []string `json:"targetPeers,omitempty"`

	// state is the node's state when the change was made; for a change of
	// the whole cluster the cluster's phase (the upgrade's state for
	// rollCSIDrivers).
	// +kubebuilder:validation:MaxLength=64
	// +optional
	State string `json:"state,omitempty"`
	// reason is the reason of the decision that made the change.
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Reason string `json:"reason,omitempty"`

	// cause is the reason of the transition that started the drain
	// (a decommission request, a failed node, the cluster's deletion).
	// +kubebuilder:validation:MaxLength=128
	// +optional
	Cause string `json:"cause,omitempty"`
}

// NodeCounts counts servers.
type NodeCounts struct {
	// desired is the number of servers the spec asks for.
	// +optional
	Desired int32 `json:"desired,omitempty"`

	// total is the number of GlusterNodes of the cluster.
	// +optional
	Total int32 `json:"total,omitempty"`

	// online is the number of GlusterNodes in state Online.
	// +optional
	Online int32 `json:"online,omitempty"`
}

// VolumeStatus is the heal state of one volume.
type VolumeStatus struct {
	// name is the Gluster volume name.
	Name string `json:"name"`

	// state is the state of the volume's heal machine: Healthy,
	// HealPending, Healing, SplitBrain, Unknown.
	// +optional
	State string `json:"state,omitempty"`

	// pendingEntries is the number of entries waiting to heal, summed over
	// bricks.
	// +optional
	PendingEntries int64 `json:"pendingEntries,omitempty"`

	// splitBrainEntries is the number of entries in split brain, summed
	// over bricks.
	// +optional
	SplitBrainEntries int64 `json:"splitBrainEntries,omitempty"`

	// bricks counts the volume's replicated bricks at the last heal-info
	// reading (started replicated or dispersed volumes only; left as last
	// read while GD2 does not answer).
	// +optional
	Bricks int32 `json:"bricks,omitempty"`
	// bricksOnline counts those of bricks GD2 reported online at that
	// reading.
	// +optional
	BricksOnline int32 `json:"bricksOnline,omitempty"`

	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`

	// message is a human-readable detail of the state.
	// +optional
	Message string `json:"message,omitempty"`
}

// UpgradeStatus is the state of a rolling upgrade.
type UpgradeStatus struct {
	// state is the state of the upgrade machine: Idle, Validating,
	// RollingServers, RollingClients, Complete, Blocked, Paused.
	// +optional
	State string `json:"state,omitempty"`

	// fromVersion is the version the upgrade started from.
	// +optional
	FromVersion string `json:"fromVersion,omitempty"`

	// toVersion is the version the upgrade moves to.
	// +optional
	ToVersion string `json:"toVersion,omitempty"`

	// currentNodes are the GlusterNodes being upgraded now (one batch).
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=16
	// +optional
	CurrentNodes []string `json:"currentNodes,omitempty"`

	// startTime is when the upgrade was validated and started rolling.
	// +optional
	StartTime *metav1.Time `json:"startTime,omitempty"`

	// stepStartTime is when the current step began: a node selected for
	// upgrade, or the CSI clients being rolled. upgradePolicy.healTimeout
	// bounds each step.
	// +optional
	StepStartTime *metav1.Time `json:"stepStartTime,omitempty"`

	// message says why the upgrade waits or is blocked.
	// +optional
	Message string `json:"message,omitempty"`

	// history holds the latest transitions of the upgrade machine, oldest
	// first.
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=20
	// +optional
	History []TransitionRecord `json:"history,omitempty"`
}

// DisruptionStatus is the state of the disruption machine: which zone's
// PodDisruptionBudget, if any, allows one Gluster pod to be evicted.
type DisruptionStatus struct {
	// state is the state of the disruption machine: Locked, Open,
	// Recovering.
	// +optional
	State string `json:"state,omitempty"`
	// zone is the zone whose budget allows one eviction (Open), the zone
	// recovering from one (Recovering), or the zone last open (Locked).
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Zone string `json:"zone,omitempty"`
	// lastTransitionTime is when state last changed.
	// +optional
	LastTransitionTime *metav1.Time `json:"lastTransitionTime,omitempty"`
	// message says why the machine waits, or what it last did.
	// +optional
	Message string `json:"message,omitempty"`
}

// CapacityStatus is the raw capacity of a cluster's GD2 devices, as GD2
// reported it when the cluster machine last read it.
type CapacityStatus struct {
	// total is the size of all devices registered on the cluster's peers.
	// +optional
	Total *resource.Quantity `json:"total,omitempty"`

	// free is what can still take a new brick: the free space of enabled
	// devices on online peers.
	// +optional
	Free *resource.Quantity `json:"free,omitempty"`

	// zones is total and free per failure zone, sorted by zone.
	// +listType=atomic
	// +optional
	Zones []ZoneCapacityStatus `json:"zones,omitempty"`
}

// ZoneCapacityStatus is the capacity of one zone's devices.
type ZoneCapacityStatus struct {
	// zone is the failure zone.
	Zone string `json:"zone"`

	// total is the size of the devices of the zone's peers.
	Total resource.Quantity `json:"total"`

	// free is the free space of the zone's enabled devices on online peers.
	Free resource.Quantity `json:"free"`
}

// AutoscalingStatus is the autoscaler's last decision, written by the
// cluster machine with the rest of its status.
type AutoscalingStatus struct {
	// templates is each template's desired count and reason, in spec
	// order.
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	// +optional
	Templates []TemplateAutoscalingStatus `json:"templates,omitempty"`

	// lastScaleTime is when the autoscaler last changed a template's
	// desired count; the cooldown runs from it.
	// +optional
	LastScaleTime *metav1.Time `json:"lastScaleTime,omitempty"`

	// reason is ScalingUp or ScalingDown while a step is taken, else why
	// none is (WithinBand, CooldownActive, NodesNotSettled, AtMaxNodes,
	// ...); the Autoscaling condition carries the same.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says the same for a person.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}

// TemplateAutoscalingStatus is the autoscaler's word on one template.
type TemplateAutoscalingStatus struct {
	// name is the template's name.
	// +kubebuilder:validation:MaxLength=63
	Name string `json:"name"`

	// desired is the number of servers the template should have.
	Desired int32 `json:"desired"`

	// free is the template's measured free capacity: unallocated space of
	// the enabled devices of its online servers.
	// +optional
	Free *resource.Quantity `json:"free,omitempty"`

	// reason is why the template steps (ScalingUp, ScalingDown) or not.
	// +kubebuilder:validation:MaxLength=64
	// +optional
	Reason string `json:"reason,omitempty"`

	// message says the same for a person.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`
}
