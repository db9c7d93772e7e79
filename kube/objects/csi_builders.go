package objects

import (
	"cmp"
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

// Images the CSI drivers run when spec.csi does not name them. The driver
// and target images are tagged with the CSI version (see GlusterImage);
// the sidecars are pinned here and move with anthill releases.
const (
	DefaultCSIFileImage   = "docker.io/gluster/glusterfs-csi-driver"
	DefaultCSIBlockImage  = "docker.io/gluster/glusterblock-csi-driver"
	BlockTargetImage      = "docker.io/gluster/gluster-blockd"
	CSIProvisionerImage   = "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0"
	CSINodeRegistrarImage = "registry.k8s.io/sig-storage/csi-node-driver-registrar:v2.13.0"
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
	ComponentBlockTarget   = "block-target"
	ComponentCSI           = "csi"
)

// csiComponents are the LabelComponent values of every CSI object; deletion
// selects on them.
var csiComponents = []string{ComponentCSI, ComponentCSIController, ComponentCSINode, ComponentBlockTarget}

// Kubelet paths the node plugins use.
const (
	kubeletDir          = "/var/lib/kubelet"
	kubeletPluginsDir   = kubeletDir + "/plugins"
	kubeletRegistryDir  = kubeletDir + "/plugins_registry"
	kubeletPodsDir      = kubeletDir + "/pods"
	csiSocketDir        = "/csi"
	csiSocket           = csiSocketDir + "/csi.sock"
	csiCADir            = "/etc/gluster-csi/ca"
	csiCAFile           = csiCADir + "/ca.crt"
	containerCSIDriver  = "csi-driver"
	containerRegistrar  = "node-driver-registrar"
	containerProvision  = "csi-provisioner"
	containerBlockd     = "gluster-blockd"
	volumeSocketDir     = "socket-dir"
	volumeRegistration  = "registration-dir"
	volumePodsMount     = "pods-mount-dir"
	volumeCA            = "gd2-ca"
	volumeConfigFS      = "configfs"
	volumeModules       = "lib-modules"
	volumeTargetConfig  = "target-config"
	iscsiPort           = 3260
	blockdPort          = 24010
	driverNameDomain    = ".gluster.org"
	hostnameTopologyKey = HostnameLabel
)

// CSIDriverKinds are the drivers c asks for, file first: spec.drivers, or
// file when it is empty.
func CSIDriverKinds(c *operatorv1alpha1.GlusterCluster) []operatorv1alpha1.GlusterDriver {
	var out []operatorv1alpha1.GlusterDriver
	for _, k := range []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile, operatorv1alpha1.GlusterDriverBlock} {
		if slices.Contains(c.Spec.Drivers, k) {
			out = append(out, k)
		}
	}
	if len(out) == 0 {
		out = []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile}
	}
	return out
}

// CSIVersion is the version c's spec gives its CSI clients:
// spec.csi.version, else spec.gluster.version.
func CSIVersion(c *operatorv1alpha1.GlusterCluster) string {
	if c.Spec.CSI != nil && c.Spec.CSI.Version != "" {
		return c.Spec.CSI.Version
	}
	return ClusterVersion(c)
}

// CSIDriverName is the CSI driver name of kind for cluster in namespace:
// <cluster>.<namespace>.<kind>.gluster.org. Namespaces hold no dots, so
// two clusters never share a name. CSI caps driver names at 63
// characters; a longer one keeps a readable prefix and ends in a hash of
// namespace and cluster.
func CSIDriverName(namespace, cluster string, kind operatorv1alpha1.GlusterDriver) string {
	suffix := "." + string(kind) + driverNameDomain
	full := cluster + "." + namespace + suffix
	if len(full) <= 63 {
		return full
	}
	sum := sha256.Sum256([]byte(namespace + "/" + cluster))
	tail := "-" + hex.EncodeToString(sum[:])[:10] + suffix
	head := strings.TrimRight((cluster + "." + namespace)[:63-len(tail)], ".-")
	return head + tail
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

// BlockTargetName is the gluster-blockd Deployment of cluster in zone.
func BlockTargetName(cluster, zone string) string { return cluster + "-block-target-" + zone }

// BlockTargetZones are the distinct zones of c's node templates, sorted:
// one gluster-blockd target Deployment runs in each. An external cluster
// has none (its servers run gluster-blockd themselves).
func BlockTargetZones(c *operatorv1alpha1.GlusterCluster) []string {
	if c.Spec.Mode == operatorv1alpha1.ClusterModeExternal {
		return nil
	}
	var zones []string
	for _, t := range c.Spec.NodeTemplates {
		if !slices.Contains(zones, t.Zone) {
			zones = append(zones, t.Zone)
		}
	}
	slices.Sort(zones)
	return zones
}

// CSIManagementEndpoint is the GD2 REST URL the CSI drivers use: always the
// cluster's management Service (which points at the external servers in
// external mode), over https when spec.caSecretRef names a CA. Unlike the
// operator, the drivers run inside the cluster network, so
// spec.management.endpoint does not apply to them.
func CSIManagementEndpoint(c *operatorv1alpha1.GlusterCluster) string {
	return fmt.Sprintf("%s://%s:%d", scheme(TLSEnabled(c)), ManagementHost(c), GD2ClientPort)
}

// CSIImages are the effective driver images of c, untagged unless the
// admin pinned them.
func CSIImages(c *operatorv1alpha1.GlusterCluster) (file, block string) {
	file, block = DefaultCSIFileImage, DefaultCSIBlockImage
	if s := c.Spec.CSI; s != nil {
		file = cmp.Or(s.FileImage, file)
		block = cmp.Or(s.BlockImage, block)
	}
	return file, block
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

// gd2Env tells a driver or target container how to reach GD2: the
// endpoint, the JWT issuer, the shared secret (from the Secret the cluster
// authenticates with, never copied) and, with TLS, the CA file.
func gd2Env(c *operatorv1alpha1.GlusterCluster) []corev1.EnvVar {
	name, key := AuthSecretRef(c)
	env := []corev1.EnvVar{
		{Name: "GD2_ENDPOINT", Value: CSIManagementEndpoint(c)},
		{Name: "GD2_USER", Value: gd2.DefaultUser},
		{Name: "GD2_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key,
		}}},
		{Name: "NODE_ID", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
	}
	if hasCA(c) {
		env = append(env, corev1.EnvVar{Name: "GD2_CA_FILE", Value: csiCAFile})
		if !IsExternal(c) {
			env = append(env,
				corev1.EnvVar{Name: "GD2_CLIENT_CERT_FILE", Value: csiCADir + "/" + TLSCertKey},
				corev1.EnvVar{Name: "GD2_CLIENT_KEY_FILE", Value: csiCADir + "/" + TLSKeyKey})
		}
	}
	return env
}

func hasCA(c *operatorv1alpha1.GlusterCluster) bool { return TLSEnabled(c) }

// caVolume mounts at csiCADir the drivers' TLS secret: the trust bundle
// (ca.crt) and, for a cluster anthill issues for, the drivers' client
// pair. An external cluster's drivers get the trust bundle alone.
func caVolume(c *operatorv1alpha1.GlusterCluster) (corev1.Volume, corev1.VolumeMount) {
	secret := CSITLSSecretName(c.Name)
	if IsExternal(c) {
		secret = TLSTrustSecretName(c.Name)
	}
	return corev1.Volume{Name: volumeCA, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName: secret, DefaultMode: ptr.To[int32](0o400),
		}}},
		corev1.VolumeMount{Name: volumeCA, MountPath: csiCADir, ReadOnly: true}
}

func hostPathVolume(name, path string, t corev1.HostPathType) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: path, Type: ptr.To(t)}}}
}

// driverContainer is the CSI driver container of kind at version.
func driverContainer(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, version string) corev1.Container {
	file, block := CSIImages(c)
	image := file
	if kind == operatorv1alpha1.GlusterDriverBlock {
		image = block
	}
	ctr := corev1.Container{
		Name:  containerCSIDriver,
		Image: GlusterImage(image, version),
		Args: []string{
			"--nodeid=$(NODE_ID)",
			"--endpoint=unix://" + csiSocket,
			"--drivername=" + CSIDriverName(c.Namespace, c.Name, kind),
		},
		// The topology key the driver reports its node's zone under and
		// reads from a claim's accessibility requirements.
		Env:          append(gd2Env(c), corev1.EnvVar{Name: EnvZoneTopologyKey, Value: CSIZoneTopologyKey}),
		VolumeMounts: []corev1.VolumeMount{{Name: volumeSocketDir, MountPath: csiSocketDir}},
	}
	return ctr
}

// Environment of the driver containers for topology. Every driver
// container gets EnvZoneTopologyKey; the node plugin also gets EnvNodeZone,
// its Kubernetes node's zone, which NodeGetInfo reports as the segment
// {EnvZoneTopologyKey: EnvNodeZone}.
const (
	EnvZoneTopologyKey = "CSI_ZONE_TOPOLOGY_KEY"
	EnvNodeZone        = "NODE_ZONE"
)

// nodeZoneEnv is the node plugin's zone, read through the downward API
// from the pod's own zone label: the node plugins call no Kubernetes API
// (they mount no token), and the API server's PodTopologyLabels admission
// (on by default since Kubernetes 1.35) copies the node's zone label onto
// every pod bound to it. Empty on a node without the label.
func nodeZoneEnv() corev1.EnvVar {
	return corev1.EnvVar{Name: EnvNodeZone, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.labels['" + CSIZoneTopologyKey + "']",
	}}}
}

// withCA adds the CA volume to a pod spec and mounts it into container
// name, when c has a CA.
func withCA(c *operatorv1alpha1.GlusterCluster, spec *corev1.PodSpec, name string) {
	if !hasCA(c) {
		return
	}
	v, m := caVolume(c)
	spec.Volumes = append(spec.Volumes, v)
	for i := range spec.Containers {
		if spec.Containers[i].Name == name {
			spec.Containers[i].VolumeMounts = append(spec.Containers[i].VolumeMounts, m)
		}
	}
}

// CSIControllerDeployment is the controller of kind: the driver and the
// external provisioner sharing a socket. Neither driver needs an attach
// step (FUSE mounts and iSCSI logins happen on the node), so there is no
// attacher. One replica with the Recreate strategy, so two provisioners
// never run at once and no leader election is needed.
func CSIControllerDeployment(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, version string) *appsv1.Deployment {
	sel := csiSelector(c.Name, ComponentCSIController, kind)
	meta := csiMeta(c, CSIControllerName(c.Name, kind), ComponentCSIController, kind)
	spec := corev1.PodSpec{
		ServiceAccountName: CSIControllerServiceAccountName(c.Name),
		Containers: []corev1.Container{
			driverContainer(c, kind, version),
			{
				Name:  containerProvision,
				Image: CSIProvisionerImage,
				Args: []string{
					"--csi-address=" + csiSocket,
					"--timeout=3m",
					// The provisioner puts the claim's name and namespace into
					// CreateVolume parameters; the driver names volumes after them.
					"--extra-create-metadata",
				},
				VolumeMounts: []corev1.VolumeMount{{Name: volumeSocketDir, MountPath: csiSocketDir}},
			},
		},
		Volumes: []corev1.Volume{{Name: volumeSocketDir, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
	}
	withCA(c, &spec, containerCSIDriver)
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podTemplateLabels(meta.Labels), Annotations: map[string]string{AnnotationVersion: version}},
				Spec:       spec,
			},
		},
	}
}

func podTemplateLabels(l map[string]string) map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = v
	}
	return out
}

// CSINodeDaemonSet is the node plugin of kind on every Kubernetes node
// (or, with spec.csi.nodeSelector, on every node with its labels): the
// driver (privileged, with kubelet's pod directory mounted Bidirectional
// so the mounts it makes reach the pods) and the node-driver-registrar that
// announces the driver's socket to kubelet.
//
// The update strategy is OnDelete: the FUSE client processes of the file
// driver's mounts live in the plugin container, so restarting it under
// running pods would break their volumes. A new version reaches a node only
// when its plugin pod is deleted — by SetCSIVersion on nodes where no pod
// uses a volume of the cluster, or by a drain, reboot or an admin.
func CSINodeDaemonSet(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, version string) *appsv1.DaemonSet {
	driver := CSIDriverName(c.Namespace, c.Name, kind)
	pluginDir := kubeletPluginsDir + "/" + driver
	sel := csiSelector(c.Name, ComponentCSINode, kind)
	meta := csiMeta(c, CSINodeDaemonSetNameOf(c.Name, kind), ComponentCSINode, kind)

	drv := driverContainer(c, kind, version)
	drv.Env = append(drv.Env, nodeZoneEnv())
	drv.SecurityContext = &corev1.SecurityContext{
		Privileged:               ptr.To(true),
		AllowPrivilegeEscalation: ptr.To(true),
		Capabilities:             &corev1.Capabilities{Add: []corev1.Capability{"SYS_ADMIN"}},
	}
	drv.VolumeMounts = append(drv.VolumeMounts,
		corev1.VolumeMount{Name: volumePodsMount, MountPath: kubeletPodsDir, MountPropagation: ptr.To(corev1.MountPropagationBidirectional)},
		corev1.VolumeMount{Name: volumeHostDev, MountPath: "/dev"},
	)
	volumes := []corev1.Volume{
		hostPathVolume(volumeSocketDir, pluginDir, corev1.HostPathDirectoryOrCreate),
		hostPathVolume(volumeRegistration, kubeletRegistryDir, corev1.HostPathDirectory),
		hostPathVolume(volumePodsMount, kubeletPodsDir, corev1.HostPathDirectory),
		hostPathVolume(volumeHostDev, "/dev", corev1.HostPathDirectory),
	}
	spec := corev1.PodSpec{
		ServiceAccountName: CSINodeServiceAccountName(c.Name),
		// Node plugins must run wherever a pod may mount a volume.
		Tolerations:       []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
		PriorityClassName: "system-node-critical",
		Containers: []corev1.Container{
			drv,
			{
				Name:  containerRegistrar,
				Image: CSINodeRegistrarImage,
				Args: []string{
					"--csi-address=" + csiSocket,
					"--kubelet-registration-path=" + pluginDir + "/csi.sock",
				},
				VolumeMounts: []corev1.VolumeMount{
					{Name: volumeSocketDir, MountPath: csiSocketDir},
					{Name: volumeRegistration, MountPath: "/registration"},
				},
			},
		},
		Volumes: volumes,
	}
	if kind == operatorv1alpha1.GlusterDriverBlock {
		// iscsiadm talks to the host's iscsid, and the kernel modules of
		// the initiator live on the host.
		spec.HostNetwork = true
		spec.DNSPolicy = corev1.DNSClusterFirstWithHostNet
		spec.Volumes = append(spec.Volumes, hostPathVolume(volumeModules, "/lib/modules", corev1.HostPathDirectory))
		spec.Containers[0].VolumeMounts = append(spec.Containers[0].VolumeMounts, corev1.VolumeMount{Name: volumeModules, MountPath: "/lib/modules", ReadOnly: true})
	}
	if c.Spec.CSI != nil {
		spec.NodeSelector = c.Spec.CSI.NodeSelector
	}
	withCA(c, &spec, containerCSIDriver)
	return &appsv1.DaemonSet{
		ObjectMeta: meta,
		Spec: appsv1.DaemonSetSpec{
			Selector:       &metav1.LabelSelector{MatchLabels: sel},
			UpdateStrategy: appsv1.DaemonSetUpdateStrategy{Type: appsv1.OnDeleteDaemonSetStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podTemplateLabels(meta.Labels), Annotations: map[string]string{AnnotationVersion: version}},
				Spec:       spec,
			},
		},
	}
}

// BlockTargetDeployment runs gluster-blockd, the iSCSI target that exports
// gluster-block volumes, in one zone: one replica, required to share a
// Kubernetes node with a Gluster pod of the cluster (the target reads its
// block files over libgfapi, best from a local server) and never two on one
// node (host network, port 3260). With one target per zone, initiators get
// one path per zone and multipath survives a zone's loss. Recreate,
// because the host port cannot be shared during a rolling update.
func BlockTargetDeployment(c *operatorv1alpha1.GlusterCluster, zone, version string) *appsv1.Deployment {
	sel := csiSelector(c.Name, ComponentBlockTarget, operatorv1alpha1.GlusterDriverBlock)
	sel[LabelZone] = zone
	meta := csiMeta(c, BlockTargetName(c.Name, zone), ComponentBlockTarget, operatorv1alpha1.GlusterDriverBlock)
	meta.Labels[LabelZone] = zone
	ctr := corev1.Container{
		Name:  containerBlockd,
		Image: GlusterImage(BlockTargetImage, version),
		Env: append(gd2Env(c),
			// The volfile server gluster-blockd mounts block-hosting volumes from.
			corev1.EnvVar{Name: "GLUSTER_VOLFILE_SERVER", Value: fmt.Sprintf("%s.%s.svc", HeadlessServiceName(c.Name), c.Namespace)},
		),
		Ports: []corev1.ContainerPort{
			{Name: "iscsi", ContainerPort: iscsiPort, Protocol: corev1.ProtocolTCP},
			{Name: "blockd", ContainerPort: blockdPort, Protocol: corev1.ProtocolTCP},
		},
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
		VolumeMounts: []corev1.VolumeMount{
			{Name: volumeHostDev, MountPath: "/dev"},
			{Name: volumeConfigFS, MountPath: "/sys/kernel/config"},
			{Name: volumeModules, MountPath: "/lib/modules", ReadOnly: true},
			{Name: volumeTargetConfig, MountPath: "/etc/target"},
		},
	}
	spec := corev1.PodSpec{
		HostNetwork:        true,
		DNSPolicy:          corev1.DNSClusterFirstWithHostNet,
		ServiceAccountName: CSINodeServiceAccountName(c.Name),
		Containers:         []corev1.Container{ctr},
		Volumes: []corev1.Volume{
			hostPathVolume(volumeHostDev, "/dev", corev1.HostPathDirectory),
			hostPathVolume(volumeConfigFS, "/sys/kernel/config", corev1.HostPathDirectory),
			hostPathVolume(volumeModules, "/lib/modules", corev1.HostPathDirectory),
			hostPathVolume(volumeTargetConfig, "/etc/target", corev1.HostPathDirectoryOrCreate),
		},
		Affinity: &corev1.Affinity{
			NodeAffinity: &corev1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: []corev1.NodeSelectorRequirement{
					{Key: ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{zone}},
				}}},
			}},
			PodAffinity: &corev1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: ClusterSelectorLabels(c.Name, ComponentGlusterNode)},
				TopologyKey:   hostnameTopologyKey,
			}}},
			PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: ClusterSelectorLabels(c.Name, ComponentBlockTarget)},
				TopologyKey:   hostnameTopologyKey,
			}}},
		},
	}
	// The Gluster pods may run on tainted storage nodes; the target must
	// follow them there.
	for _, t := range c.Spec.NodeTemplates {
		if t.Zone == zone {
			for _, tol := range t.Tolerations {
				spec.Tolerations = append(spec.Tolerations, *tol.DeepCopy())
			}
		}
	}
	withCA(c, &spec, containerBlockd)
	return &appsv1.Deployment{
		ObjectMeta: meta,
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To[int32](1),
			Selector: &metav1.LabelSelector{MatchLabels: sel},
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: podTemplateLabels(meta.Labels), Annotations: map[string]string{AnnotationVersion: version}},
				Spec:       spec,
			},
		},
	}
}

// CSIDriverObject is the CSIDriver of kind: no attach step, persistent
// volumes only.
func CSIDriverObject(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) *storagev1.CSIDriver {
	return &storagev1.CSIDriver{
		ObjectMeta: csiClusterMeta(c, CSIDriverName(c.Namespace, c.Name, kind), kind),
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

// csiProvisionerRules are what external-provisioner needs. The operator's
// own ClusterRole holds each of them, since Kubernetes lets nobody grant
// what they do not hold (manifests/rbac/cluster_role.yaml).
var csiProvisionerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"persistentvolumes"}, Verbs: []string{"get", "list", "watch", "create", "delete"}},
	{APIGroups: []string{""}, Resources: []string{"persistentvolumeclaims"}, Verbs: []string{"get", "list", "watch", "update"}},
	{APIGroups: []string{"storage.k8s.io"}, Resources: []string{"storageclasses", "csinodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list", "watch", "create", "update", "patch"}},
}

// CSIClusterRole is the provisioners' ClusterRole (both drivers share it).
func CSIClusterRole(c *operatorv1alpha1.GlusterCluster) *rbacv1.ClusterRole {
	rules := make([]rbacv1.PolicyRule, len(csiProvisionerRules))
	for i := range csiProvisionerRules {
		rules[i] = *csiProvisionerRules[i].DeepCopy()
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
	BlockTargets       []*appsv1.Deployment
	// StorageClasses are cluster-scoped, like Drivers; unlike every other
	// CSI object they are kept in line with the spec, not only created.
	StorageClasses []*storagev1.StorageClass
}

// DesiredCSIObjects builds the CSI objects of c's drivers at version.
func DesiredCSIObjects(c *operatorv1alpha1.GlusterCluster, version string) CSIObjects {
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
		if k == operatorv1alpha1.GlusterDriverBlock {
			for _, z := range BlockTargetZones(c) {
				o.BlockTargets = append(o.BlockTargets, BlockTargetDeployment(c, z, version))
			}
		}
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

// CSIDriverNames are the driver names of both of c's possible drivers: a
// volume of a driver since removed from spec.drivers still pins its node.
func CSIDriverNames(c *operatorv1alpha1.GlusterCluster) map[string]bool {
	return map[string]bool{
		CSIDriverName(c.Namespace, c.Name, operatorv1alpha1.GlusterDriverFile):  true,
		CSIDriverName(c.Namespace, c.Name, operatorv1alpha1.GlusterDriverBlock): true,
	}
}

// ContainerImages maps each container of spec to its image.
func ContainerImages(spec corev1.PodSpec) map[string]string {
	out := make(map[string]string, len(spec.Containers))
	for _, c := range spec.Containers {
		out[c.Name] = c.Image
	}
	return out
}
