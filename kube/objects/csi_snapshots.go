package objects

import (
	"cmp"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// CSI volume snapshots (spec.csi.snapshots). The file driver implements
// CreateSnapshot, DeleteSnapshot and ListSnapshots over GD2's snapshot API
// and restores a snapshot by cloning it into a new volume (csi@168a40e:
// pkg/glusterfs/controllerserver.go). Kubernetes reaches them through the
// external snapshotter beside the provisioner, and through the
// snapshot.storage.k8s.io/v1 API and the snapshot-controller, which are a
// cluster add-on the admin installs: anthill checks that the API is
// served and says so when it is not, and installs none of it.

// SnapshotGroupVersion is the group and version of the snapshot API the
// snapshotter v8 and the provisioner v5 use.
var SnapshotGroupVersion = schema.GroupVersion{Group: "snapshot.storage.k8s.io", Version: "v1"}

// SnapshotResources are the resources of the snapshot API the driver's
// snapshots need: the classes, the claims' snapshots and their contents.
var SnapshotResources = []string{"volumesnapshotclasses", "volumesnapshots", "volumesnapshotcontents"}

// VolumeSnapshotClassResource is the resource of VolumeSnapshotClasses.
var VolumeSnapshotClassResource = SnapshotGroupVersion.WithResource("volumesnapshotclasses")

// SnapshotsEnabled reports whether c asks for CSI snapshots (and runs the
// CSI driver at all).
func SnapshotsEnabled(c *operatorv1alpha1.GlusterCluster) bool {
	return CSIEnabled(c) && c.Spec.CSI != nil && c.Spec.CSI.Snapshots != nil && c.Spec.CSI.Snapshots.Enabled
}

// VolumeSnapshotClassName is the name of c's VolumeSnapshotClass:
// spec.csi.snapshots.className, else <cluster>-file.
func VolumeSnapshotClassName(c *operatorv1alpha1.GlusterCluster) string {
	var name string
	if SnapshotsEnabled(c) {
		name = c.Spec.CSI.Snapshots.ClassName
	}
	return cmp.Or(name, c.Name+"-"+string(operatorv1alpha1.GlusterDriverFile))
}

// VolumeSnapshotClassObject is c's VolumeSnapshotClass: the file driver's
// name, the deletion policy the spec asks for (Delete unless Retain), and
// no parameters (the driver reads none). Cluster-scoped, so no owner
// reference: the cluster labels find it (CSIClusterScopedSelector). It is
// built unstructured: anthill does not link the snapshot API's types,
// which a Kubernetes cluster may not serve.
func VolumeSnapshotClassObject(c *operatorv1alpha1.GlusterCluster) *unstructured.Unstructured {
	policy := "Delete"
	if SnapshotsEnabled(c) {
		policy = cmp.Or(c.Spec.CSI.Snapshots.DeletionPolicy, policy)
	}
	meta := csiClusterMeta(c, VolumeSnapshotClassName(c), operatorv1alpha1.GlusterDriverFile)
	u := &unstructured.Unstructured{Object: map[string]any{
		"driver":         CSIFileDriverName,
		"deletionPolicy": policy,
	}}
	u.SetAPIVersion(SnapshotGroupVersion.String())
	u.SetKind("VolumeSnapshotClass")
	u.SetName(meta.Name)
	u.SetLabels(meta.Labels)
	return u
}

// snapshotterContainer is the external snapshotter beside the driver: its
// socket, and the same RPC timeout as the provisioner's (a GD2 snapshot
// create and activate each get the driver's 120 s REST timeout). One
// replica with the Recreate strategy, so no leader election.
func snapshotterContainer() corev1.Container {
	return csiSidecar(containerSnapshotter, images.CSISnapshotter, []string{"--timeout=3m"})
}

// csiSnapshotRules are what the snapshotter needs (its
// deploy/kubernetes/csi-snapshotter/rbac-csi-snapshotter.yaml, volume
// group snapshots left out: their feature gate is off) and what the
// provisioner needs to restore a snapshot into a new claim
// (external-provisioner v5.2.0 deploy/kubernetes/rbac.yaml). The events
// rule is already the provisioner's. The operator's ClusterRole holds each
// of them (manifests/rbac/cluster_role.yaml).
var csiSnapshotRules = []rbacv1.PolicyRule{
	{APIGroups: []string{SnapshotGroupVersion.Group}, Resources: []string{"volumesnapshotclasses"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{SnapshotGroupVersion.Group}, Resources: []string{"volumesnapshotcontents"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
	{APIGroups: []string{SnapshotGroupVersion.Group}, Resources: []string{"volumesnapshotcontents/status"}, Verbs: []string{"update", "patch"}},
	{APIGroups: []string{SnapshotGroupVersion.Group}, Resources: []string{"volumesnapshots"}, Verbs: []string{"get", "list"}},
}
