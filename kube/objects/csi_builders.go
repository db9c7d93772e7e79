package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/utils/ptr"

	"github.com/gluster/anthill/gd2"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// Labels of CSI objects beyond the common ones. Cluster-scoped objects
// (CSIDriver, ClusterRole, ClusterRoleBinding) cannot carry an owner
// reference to a namespaced GlusterCluster, so LabelClusterNamespace names
// the cluster's namespace on them (and on every CSI object, for symmetry).
const (
	LabelClusterNamespace = "operator.gluster.org/cluster-namespace"
	LabelCSIDriver        = "operator.gluster.org/csi-driver"
)

// LabelComponent values of CSI objects.
const (
	// ComponentCSINode is the LabelComponent value of the CSI node plugin
	// DaemonSets (file and block) and their pods.
	ComponentCSINode       = "csi-node"
	ComponentCSIController = "csi-controller"
	ComponentCSI           = "csi"
	// componentBlockTarget labelled the gluster-blockd Deployments of
	// releases before block was refused; deletion still selects on it so
	// that a cluster made by one of them is cleaned up whole.
	componentBlockTarget = "block-target"
)

// csiComponents are the LabelComponent values of every CSI object; deletion
// selects on them.
var csiComponents = []string{ComponentCSI, ComponentCSIController, ComponentCSINode, componentBlockTarget}

// Kubelet paths the node plugins use.
const (
	kubeletDir         = "/var/lib/kubelet"
	kubeletPluginsDir  = kubeletDir + "/plugins"
	kubeletRegistryDir = kubeletDir + "/plugins_registry"
	kubeletPodsDir     = kubeletDir + "/pods"
	csiSocketDir       = "/csi"
	csiSocket          = csiSocketDir + "/csi.sock"
	csiCADir           = "/etc/gluster-csi/ca"
	csiCAFile          = csiCADir + "/" + TLSCAKey
	containerCSIDriver = "csi-driver"
	containerRegistrar = "node-driver-registrar"
	containerProvision = "csi-provisioner"
	// containerSnapshotter runs only with spec.csi.snapshots.enabled.
	containerSnapshotter = "csi-snapshotter"
	volumeSocketDir      = "socket-dir"
	volumeRegistration   = "registration-dir"
	volumePodsMount      = "pods-mount-dir"
	volumeCA             = "gd2-ca"
	// envRESTSecret carries the GD2 secret for Kubernetes to expand into
	// the driver's --restsecret (the driver reads no variable but
	// CSI_ENDPOINT).
	envRESTSecret = "REST_SECRET"
	envNodeID     = "NODE_ID"
	// csiRESTTimeout is the driver's GD2 request timeout in seconds, as
	// GCS ran it: a smart-volume create takes longer than the default 30.
	csiRESTTimeout = 120
)

// CSIDriverKinds are the drivers c asks for: file. The API refuses block
// (spec.drivers): no GD2-era block driver anthill could run exists
// (docs/csi.md), so an object stored before that refusal gets file alone.
// None when spec.csi.enabled is false.
func CSIDriverKinds(c *operatorv1alpha1.GlusterCluster) []operatorv1alpha1.GlusterDriver {
	if !CSIEnabled(c) {
		return nil
	}
	return []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile}
}

// CSIEnabled reports whether c runs the CSI driver: spec.csi.enabled, true
// unless set false.
func CSIEnabled(c *operatorv1alpha1.GlusterCluster) bool {
	return c.Spec.CSI == nil || c.Spec.CSI.Enabled == nil || *c.Spec.CSI.Enabled
}

// CSIDriverName is the CSI driver name of kind: the name the driver
// registers, fixed in its code (CSIFileContract), the same for every
// cluster. So one Gluster cluster per Kubernetes cluster can run CSI
// (docs/csi.md).
func CSIDriverName(kind operatorv1alpha1.GlusterDriver) string {
	return CSIFileDriverName
}

// CSIControllerName is the controller Deployment of kind.
func CSIControllerName(cluster string, kind operatorv1alpha1.GlusterDriver) string {
	if kind == operatorv1alpha1.GlusterDriverBlock {
		return cluster + "-csi-block-controller"
	}
	return cluster + "-csi-controller"
}

// CSINodeDaemonSetNameOf is the node plugin DaemonSet of kind; the file
// driver's is CSINodeDaemonSetName.
func CSINodeDaemonSetNameOf(cluster string, kind operatorv1alpha1.GlusterDriver) string {
	if kind == operatorv1alpha1.GlusterDriverBlock {
		return cluster + "-csi-block-node"
	}
	return CSINodeDaemonSetName(cluster)
}

// CSIControllerServiceAccountName and CSINodeServiceAccountName are the
// service accounts of the controllers and the node plugins (both drivers).
func CSIControllerServiceAccountName(cluster string) string { return cluster + "-csi-controller" }

// CSINodeServiceAccountName: see CSIControllerServiceAccountName.
func CSINodeServiceAccountName(cluster string) string { return cluster + "-csi-node" }

// CSIClusterRoleName names both the ClusterRole of the provisioners of
// cluster in namespace and its ClusterRoleBinding. Neither part can hold
// a colon, so the name is unique per cluster.
func CSIClusterRoleName(namespace, cluster string) string {
	return "anthill-csi:" + namespace + ":" + cluster
}

// CSIManagementEndpoint is the GD2 REST URL the CSI drivers use: always the
// cluster's management Service (which points at the external servers in
// external mode), over https when spec.caSecretRef names a CA. Unlike the
// operator, the drivers run inside the cluster network, so
// spec.management.endpoint does not apply to them.
func CSIManagementEndpoint(c *operatorv1alpha1.GlusterCluster) string {
	return fmt.Sprintf("%s://%s:%d", scheme(TLSEnabled(c)), ManagementHost(c), GD2ClientPort)
}

// CSIImage is the effective file driver image of c at version:
// spec.csi.fileImage (tagged with version unless pinned), else the pinned
// default.
func CSIImage(c *operatorv1alpha1.GlusterCluster, version string) string {
	if s := c.Spec.CSI; s != nil && s.FileImage != "" {
		return GlusterImage(s.FileImage, version)
	}
	return images.CSIFile
}

// csiMeta is the metadata of a namespaced CSI object of c.
func csiMeta(c *operatorv1alpha1.GlusterCluster, name, component string, kind operatorv1alpha1.GlusterDriver) metav1.ObjectMeta {
	m := clusterObjectMeta(c, name, component)
	m.Labels[LabelClusterNamespace] = c.Namespace
	if kind != "" {
		m.Labels[LabelCSIDriver] = string(kind)
	}
	return m
}

// csiClusterMeta is the metadata of a cluster-scoped CSI object of c: no
// namespace, no owner reference, the namespace in a label.
func csiClusterMeta(c *operatorv1alpha1.GlusterCluster, name string, kind operatorv1alpha1.GlusterDriver) metav1.ObjectMeta {
	l := ClusterLabels(c.Name, ComponentCSI)
	l[LabelClusterNamespace] = c.Namespace
	if kind != "" {
		l[LabelCSIDriver] = string(kind)
	}
	return metav1.ObjectMeta{Name: name, Labels: l}
}

// csiSelector selects the pods of one CSI workload; like every selector
// here it leaves out managed-by.
func csiSelector(cluster, component string, kind operatorv1alpha1.GlusterDriver) map[string]string {
	l := ClusterSelectorLabels(cluster, component)
	if kind != "" {
		l[LabelCSIDriver] = string(kind)
	}
	return l
}

// csiCredentialEnv is what Kubernetes expands into the driver's
// arguments: the node name, and the shared GD2 secret from the Secret the
// cluster authenticates with (never copied).
func csiCredentialEnv(c *operatorv1alpha1.GlusterCluster) []corev1.EnvVar {
	name, key := AuthSecretRef(c)
	return []corev1.EnvVar{
		{Name: envNodeID, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: envRESTSecret, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key,
		}}},
	}
}

// driverContainer is the file driver container at version, with the flags
// the driver has (CSIFileContract): its node id and socket, GD2's REST
// URL, user and secret, and a request timeout.
//
// With a CA, GD2 serves its REST API over TLS only, and the driver has no
// option to trust a CA: it verifies GD2 against the roots Go reads, and Go
// on Linux takes them from SSL_CERT_FILE when that is set. So the trust
// bundle is mounted and named there, and the driver verifies the
// management Service's certificate against the cluster's CA. It cannot
// present a client certificate; GD2 asks for none.
func driverContainer(c *operatorv1alpha1.GlusterCluster, version string) corev1.Container {
	ctr := corev1.Container{
		Name:  containerCSIDriver,
		Image: CSIImage(c, version),
		Args: []string{
			"--nodeid=$(" + envNodeID + ")",
			"--endpoint=unix://" + csiSocket,
			"--resturl=" + CSIManagementEndpoint(c),
			"--username=" + gd2.DefaultUser,
			"--restsecret=$(" + envRESTSecret + ")",
			fmt.Sprintf("--resttimeout=%d", csiRESTTimeout),
		},
		Env:          csiCredentialEnv(c),
		VolumeMounts: []corev1.VolumeMount{socketMount},
	}
	if TLSEnabled(c) {
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: envSSLCertFile, Value: csiCAFile})
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: volumeCA, MountPath: csiCADir, ReadOnly: true})
	}
	return ctr
}

// envSSLCertFile names the file Go's crypto/x509 reads its roots from on
// Linux instead of the system's.
const envSSLCertFile = "SSL_CERT_FILE"

// withCA adds the trust bundle volume to a pod spec when c has a CA: the
// bundle alone (ca.crt), for every mode.
func withCA(c *operatorv1alpha1.GlusterCluster, spec *corev1.PodSpec) {
	if !TLSEnabled(c) {
		return
	}
	spec.Volumes = append(spec.Volumes, corev1.Volume{Name: volumeCA, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName: TLSTrustSecretName(c.Name), DefaultMode: ptr.To[int32](0o444),
	}}})
}

// socketMount is the directory of the driver's socket, in the driver and
// in each sidecar that talks to it.
var socketMount = corev1.VolumeMount{Name: volumeSocketDir, MountPath: csiSocketDir}

// csiSidecar is a CSI sidecar container beside the driver: it talks to
// the driver's socket, whose address comes before its other args, in the
// shared directory, mounted before its other mounts.
func csiSidecar(name, image string, args []string, mounts ...corev1.VolumeMount) corev1.Container {
	return corev1.Container{
		Name:         name,
		Image:        image,
		Args:         append([]string{"--csi-address=" + csiSocket}, args...),
		VolumeMounts: append([]corev1.VolumeMount{socketMount}, mounts...),
	}
}

// csiWorkload is the frame of kind's CSI workload name of component: its
// metadata, the selector of its pods, and their template at version, of
// spec with the CA's trust bundle added when c has one.
func csiWorkload(c *operatorv1alpha1.GlusterCluster, name, component string, kind operatorv1alpha1.GlusterDriver, version string, spec corev1.PodSpec) workload {
	withCA(c, &spec)
	meta := csiMeta(c, name, component, kind)
	return workload{meta: meta, selector: csiSelector(c.Name, component, kind), pod: versionedPod(meta, version, spec)}
}

// CSIControllerDeployment is the controller of kind: the driver and the
// external provisioner sharing a socket, and the external snapshotter with
// spec.csi.snapshots.enabled. The driver has no attach step
// (FUSE mounts happen on the node), so there is no attacher. One replica
// with the Recreate strategy, so two provisioners never run at once and no
// leader election is needed.
func CSIControllerDeployment(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, version string) *appsv1.Deployment {
	spec := corev1.PodSpec{
		ServiceAccountName: CSIControllerServiceAccountName(c.Name),
		Containers: []corev1.Container{
			driverContainer(c, version),
			// No --extra-create-metadata: the driver names a volume by the
			// request's name and reads no claim metadata.
			csiSidecar(containerProvision, images.CSIProvisioner, []string{"--timeout=3m"}),
		},
		Volumes: []corev1.Volume{{Name: volumeSocketDir, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	if SnapshotsEnabled(c) {
		spec.Containers = append(spec.Containers, snapshotterContainer())
	}
	return csiWorkload(c, CSIControllerName(c.Name, kind), ComponentCSIController, kind, version, spec).
		deployment(1, appsv1.RecreateDeploymentStrategyType)
}

// CSINodeDaemonSet is the node plugin of kind on every Kubernetes node
// (or, with spec.csi.nodeSelector, on every node with its labels): the
// driver (privileged with SYS_ADMIN for FUSE, with kubelet's pod directory
// mounted Bidirectional so the mounts it makes reach the pods) and the
// node-driver-registrar that announces the driver's socket to kubelet,
// both under the driver's fixed name.
//
// The update strategy is OnDelete: the FUSE client processes of the
// driver's mounts live in the plugin container, so restarting it under
// running pods would break their volumes. A new version reaches a node only
// when its plugin pod is deleted — by SetCSIVersion on nodes where no pod
// uses a volume of the cluster, or by a drain, reboot or an admin.
func CSINodeDaemonSet(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, version string) *appsv1.DaemonSet {
	pluginDir := kubeletPluginsDir + "/" + CSIDriverName(kind)
	drv := driverContainer(c, version)
	drv.SecurityContext = &corev1.SecurityContext{
		Privileged:               ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(true),
		Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}},
	}
	drv.VolumeMounts = append(drv.VolumeMounts,
		corev1.VolumeMount{Name: volumePodsMount, MountPath: kubeletPodsDir, MountPropagation: ptr.To(corev1.MountPropagationBidirectional)},
	)
	spec := corev1.PodSpec{
		ServiceAccountName: CSINodeServiceAccountName(c.Name),
		// Node plugins must run wherever a pod may mount a volume.
		Tolerations:       []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		PriorityClassName: "system-node-critical",
		Containers: []corev1.Container{
			drv,
			csiSidecar(containerRegistrar, images.CSINodeRegistrar, []string{"--kubelet-registration-path=" + pluginDir + "/csi.sock"},
				corev1.VolumeMount{Name: volumeRegistration, MountPath: "/registration"}),
		},
		Volumes: []corev1.Volume{
			hostPathVolume(volumeSocketDir, pluginDir, corev1.HostPathDirectoryOrCreate),
			hostPathVolume(volumeRegistration, kubeletRegistryDir, corev1.HostPathDirectory),
			hostPathVolume(volumePodsMount, kubeletPodsDir, corev1.HostPathDirectory),
		},
	}
	if c.Spec.CSI != nil {
		spec.NodeSelector = c.Spec.CSI.NodeSelector
	}
	return csiWorkload(c, CSINodeDaemonSetNameOf(c.Name, kind), ComponentCSINode, kind, version, spec).
		daemonSet(appsv1.OnDeleteDaemonSetStrategyType)
}

// CSIDriverObject is the CSIDriver of kind, under the driver's own name:
// no attach step (the driver has no ControllerPublish), persistent volumes
// only.
func CSIDriverObject(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: csiClusterMeta(c, CSIDriverName(kind), kind),
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       ptr.To(false),
			PodInfoOnMount:       ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
}

// CSIServiceAccounts are the controllers' and the node plugins' service
// accounts. The node plugins call no Kubernetes API, so theirs mounts no
// token.
func CSIServiceAccounts(c *operatorv1alpha1.GlusterCluster) []*corev1.ServiceAccount {
	return []*corev1.ServiceAccount{
		{ObjectMeta: csiMeta(c, CSIControllerServiceAccountName(c.Name), ComponentCSI, "")},
		{ObjectMeta: csiMeta(c, CSINodeServiceAccountName(c.Name), ComponentCSI, ""), AutomountServiceAccountToken: ptr.To(false)},
	}
}

// csiProvisionerRules are what external-provisioner needs (its
// deploy/kubernetes/rbac.yaml): patch on PersistentVolumes for the
// finalizer HonorPVReclaimPolicy sets. The operator's
// own ClusterRole holds each of them, since Kubernetes lets nobody grant
// what they do not hold (manifests/rbac/cluster_role.yaml).
var csiProvisionerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "create", "patch", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "update"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list", "watch", "create", "update", "patch"}},
}

// CSIClusterRole is the provisioners' ClusterRole (both drivers share it).
func CSIClusterRole(c *operatorv1alpha1.GlusterCluster) *rbacv1.ClusterRole {
	want := csiProvisionerRules
	if SnapshotsEnabled(c) {
		want = append(slices.Clone(want), csiSnapshotRules...)
	}
	rules := make([]rbacv1.PolicyRule, len(want))
	for i := range want {
		rules[i] = *want[i].DeepCopy()
	}
	return &rbacv1.ClusterRole{ObjectMeta: csiClusterMeta(c, CSIClusterRoleName(c.Namespace, c.Name), ""), Rules: rules}
}

// CSIClusterRoleBinding binds CSIClusterRole to the controllers' service
// account.
func CSIClusterRoleBinding(c *operatorv1alpha1.GlusterCluster) *rbacv1.ClusterRoleBinding {
	name := CSIClusterRoleName(c.Namespace, c.Name)
	return &rbacv1.ClusterRoleBinding{
		ObjectMeta: csiClusterMeta(c, name, ""),
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{
			Kind: rbacv1.ServiceAccountKind, Name: CSIControllerServiceAccountName(c.Name), Namespace: c.Namespace,
		}},
	}
}

// CSIObjects is every CSI object a cluster's spec asks for.
type CSIObjects struct {
	ServiceAccounts    []*corev1.ServiceAccount
	ClusterRole        *rbacv1.ClusterRole
	ClusterRoleBinding *rbacv1.ClusterRoleBinding
	Drivers            []*storagev1.CSIDriver
	Controllers        []*appsv1.Deployment
	NodePlugins        []*appsv1.DaemonSet
	// StorageClasses are cluster-scoped, like Drivers; unlike every other
	// CSI object they are kept in line with the spec, not only created.
	StorageClasses []*storagev1.StorageClass
}

// DesiredCSIObjects builds the CSI objects of c's drivers at version.
// A cluster with spec.csi.enabled false asks for none.
func DesiredCSIObjects(c *operatorv1alpha1.GlusterCluster, version string) CSIObjects {
	if !CSIEnabled(c) {
		return CSIObjects{}
	}
	o := CSIObjects{
		ServiceAccounts:    CSIServiceAccounts(c),
		ClusterRole:        CSIClusterRole(c),
		ClusterRoleBinding: CSIClusterRoleBinding(c),
		StorageClasses:     DesiredStorageClasses(c),
	}
	for _, k := range CSIDriverKinds(c) {
		o.Drivers = append(o.Drivers, CSIDriverObject(c, k))
		o.Controllers = append(o.Controllers, CSIControllerDeployment(c, k, version))
		o.NodePlugins = append(o.NodePlugins, CSINodeDaemonSet(c, k, version))
	}
	return o
}

// CSINamespacedSelector selects the namespaced CSI objects of cluster.
func CSINamespacedSelector(cluster string) labels.Selector {
	comp, _ := labels.NewRequirement(LabelComponent, selection.In, csiComponents)
	return labels.SelectorFromSet(labels.Set{LabelCluster: cluster, LabelManagedBy: ManagedByAnthill}).Add(*comp)
}

// CSIClusterScopedSelector selects the cluster-scoped CSI objects of the
// cluster in namespace.
func CSIClusterScopedSelector(namespace, cluster string) labels.Selector {
	return labels.SelectorFromSet(labels.Set{LabelCluster: cluster, LabelClusterNamespace: namespace, LabelManagedBy: ManagedByAnthill})
}

// CSIDriverNames are the driver names whose volumes may be c's: the
// driver's own, and the per-cluster names releases before it ran under
// (a volume provisioned then still uses the cluster, and still pins its
// node). A cluster with spec.csi.enabled false has none: the field cannot
// be turned off, so it never ran the driver.
func CSIDriverNames(c *operatorv1alpha1.GlusterCluster) map[string]bool {
	if !CSIEnabled(c) {
		return map[string]bool{}
	}
	out := map[string]bool{CSIFileDriverName: true}
	for _, n := range LegacyCSIDriverNames(c.Namespace, c.Name) {
		out[n] = true
	}
	return out
}

// LegacyCSIDriverNames are the names releases before v0.3.0 gave the file and
// block drivers of cluster in namespace, <cluster>.<namespace>.<kind>.gluster.org
// (capped at 63 characters with a hash), which no real driver registers.
// Their PersistentVolumes may still exist.
func LegacyCSIDriverNames(namespace, cluster string) []string {
	var out []string
	for _, kind := range []string{"file", "block"} {
		suffix := "." + kind + ".gluster.org"
		full := cluster + "." + namespace + suffix
		if len(full) <= 63 {
			out = append(out, full)
			continue
		}
		sum := sha256.Sum256([]byte(namespace + "/" + cluster))
		tail := "-" + hex.EncodeToString(sum[:])[:10] + suffix
		out = append(out, strings.TrimRight((cluster + "." + namespace)[:63-len(tail)], ".-")+tail)
	}
	return out
}

// ContainerImages maps each container of spec to its image.
func ContainerImages(spec corev1.PodSpec) map[string]string {
	out := make(map[string]string, len(spec.Containers))
	for _, c := range spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}
