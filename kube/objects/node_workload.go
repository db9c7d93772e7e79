package objects

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// ZoneLabel is the well-known Kubernetes node label a node's zone is matched
// against.
const ZoneLabel = "topology.kubernetes.io/zone"

// HostnameLabel is the Kubernetes node label that names its host.
const HostnameLabel = "kubernetes.io/hostname"

// Container and volume names inside the pods anthill builds.
const (
	ContainerGD2   = "glusterd2"
	containerEtcd  = "etcd"
	volumeAuth     = "gd2-auth"
	volumeState    = StateClaimTemplate
	volumeHostDev  = "host-dev"
	volumeLVMRun   = "run-lvm"
	volumeModules  = "host-modules"
	authFileName   = "auth"
	etcdDataDir    = "/var/lib/etcd"
	portNameGD2    = "gd2"
	portNamePeer   = "gd2-peer"
	portNameClient = "etcd-client"
	portNameEtcdPr = "etcd-peer"
)

var (
	glusterClusterKind = operatorv1alpha1.SchemeGroupVersion.WithKind("GlusterCluster")
	glusterNodeKind    = operatorv1alpha1.SchemeGroupVersion.WithKind("GlusterNode")
)

// NodeStatefulSet is the one-replica StatefulSet that runs node n of
// cluster c at version. Its brick claims come from the node's storage: one
// Block-mode claim per device, exposed to GD2 as volumeDevices at
// NodeDevicePaths. It uses the OnDelete strategy so that only the operator
// restarts a Gluster node (one at a time, after heal), and retains its
// claims: brick data is removed by DeleteNodeWorkload after the node is
// drained, never by the StatefulSet controller.
func NodeStatefulSet(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode, version string) *appsv1.StatefulSet {
	sts := nodeStatefulSet(c, n, version)
	sts.Spec.Template.Annotations[AnnotationRevision] = NodeTemplateRevision(c, n)
	return sts
}

// NodeTemplateRevision identifies what node n's pod would look like apart
// from its Gluster version: a hash of the pod template NodeStatefulSet
// builds at no version. A change to the cluster's image (without a
// version), to the node's or its template's resources, env, tolerations
// or affinity changes it; a version change does not (the upgrade machine
// compares versions apart). A node with an external address runs no pod
// and has no revision.
func NodeTemplateRevision(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) string {
	if n.Spec.ExternalAddress != "" {
		return ""
	}
	t := nodeStatefulSet(c, n, "").Spec.Template
	delete(t.Annotations, AnnotationVersion)
	// The shared process namespace (the reaping of GD2's daemons) came in
	// after pods were running without it: it reaches each pod when it is
	// next made, and is no reason to restart every server of a cluster.
	t.Spec.ShareProcessNamespace = nil
	return templateHash(&t)
}

// templateHash is a short, stable hash of a pod template: encoding/json
// writes struct fields in declaration order and map keys sorted.
func templateHash(t *corev1.PodTemplateSpec) string {
	b, err := json.Marshal(t)
	if err != nil {
		// A PodTemplateSpec always encodes.
		panic(fmt.Sprintf("encode pod template: %v", err))
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

func nodeStatefulSet(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode, version string) *appsv1.StatefulSet {
	labels := NodeLabels(c.Name, n.Name)
	host := NodePodHost(n.Namespace, c.Name, n.Name)

	image := GD2Image(c, version)
	secretName, secretKey := AuthSecretRef(c)

	// A GD2 that stops answering is restarted, as GCS's pods were.
	// Generous: a GD2 busy with a transaction answers /ping late, and a
	// restart under load would only add work.
	liveness := httpProbe("/ping", GD2ClientPort, 30)
	liveness.InitialDelaySeconds, liveness.TimeoutSeconds, liveness.FailureThreshold = 10, 5, 4
	ctr := corev1.Container{
		Name:  ContainerGD2,
		Image: image,
		// glusterd2 itself, not the image's systemd, so that every GD2_*
		// variable reaches it (systemd passes five), it stops on SIGTERM
		// and the kubelet restarts it when it exits; its packaged
		// configuration, and its log on stdout (GD2Contract); behind the
		// LVM prelude on LVM claims (lvm_claims.go).
		Command: gd2Command(n),
		Env: []corev1.EnvVar{
			{Name: "GD2_PEERADDRESS", Value: fmt.Sprintf("%s:%d", host, GD2PeerPort)},
			{Name: "GD2_CLIENTADDRESS", Value: fmt.Sprintf("%s:%d", host, GD2ClientPort)},
			{Name: "GD2_ETCDENDPOINTS", Value: EtcdEndpoint(c)},
			// The cluster's own etcd replaces GD2's embedded one, which makes
			// every joined node a voter and loses quorum easily.
			{Name: "GD2_NOEMBED", Value: "true"},
			{Name: "GD2_RESTAUTH", Value: "true"},
		},
		Ports:          []corev1.ContainerPort{tcpPort(portNameGD2, GD2ClientPort), tcpPort(portNamePeer, GD2PeerPort)},
		ReadinessProbe: httpProbe("/ping", GD2ClientPort, 10),
		LivenessProbe:  liveness,
		VolumeMounts: []corev1.VolumeMount{
			// GD2 keeps its peer UUID here; surviving a container restart
			// keeps the peer's identity.
			{Name: volumeState, MountPath: GD2StateDir},
			// The shared secret, at the path GD2 reads it from, so that GD2
			// does not generate a different one on each node.
			{Name: volumeAuth, MountPath: GD2StateDir + "/" + authFileName, SubPath: authFileName, ReadOnly: true},
		},
		// LVM on the brick devices needs a privileged container.
		SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)},
	}
	if id := NodePeerID(n); id != "" {
		// GD2 keeps this id from its first start, through join, leave and
		// restart (fact sheet §13), so the node is always the same peer,
		// even if its state volume is lost: docs/design/failure-recovery.md.
		ctr.Env = append(ctr.Env, corev1.EnvVar{Name: "GD2_PEER_ID", Value: id})
	}

	volumes := []corev1.Volume{
		{Name: volumeAuth, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  secretName,
			Items:       []corev1.KeyToPath{{Key: secretKey, Path: authFileName}},
			DefaultMode: ptr.To[int32](0o400),
		}}},
	}
	if NodeProvisioner(n) == ProvisionerLVM {
		// LVM's locks, shared with the host's LVM, which sees the same
		// devices; and the host's kernel modules, for dm_thin_pool. The
		// loop provisioner uses neither (and a host without modules,
		// such as a container host, has no /usr/lib/modules to mount).
		ctr.VolumeMounts = append(ctr.VolumeMounts,
			corev1.VolumeMount{Name: volumeLVMRun, MountPath: "/run/lvm"},
			corev1.VolumeMount{Name: volumeModules, MountPath: "/usr/lib/modules", ReadOnly: true})
		volumes = append(volumes,
			hostPathVolume(volumeLVMRun, "/run/lvm", corev1.HostPathDirectoryOrCreate),
			hostPathVolume(volumeModules, "/usr/lib/modules", corev1.HostPathDirectory))
	}

	var claims []corev1.PersistentVolumeClaim
	switch s := n.Spec.Storage; {
	case s != nil && len(s.Devices) > 0:
		// Host block devices: the pod sees the host's /dev.
		volumes = append(volumes, hostPathVolume(volumeHostDev, "/dev", corev1.HostPathDirectory))
		ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: volumeHostDev, MountPath: "/dev"})
	case s != nil && s.Capacity != nil:
		// GD2's state (its peer UUID) must outlive the pod: an upgrade
		// or a reschedule replaces the pod, and a GD2 without its state
		// would come back as a new, empty peer.
		claims = append(claims, stateClaim(n.Namespace, labels, s.StorageClassName))
		loop := NodeProvisioner(n) == ProvisionerLoop
		for i, path := range NodeDevicePaths(n) {
			name := BrickClaimTemplateName(i)
			if loop {
				// A loop device is a directory: a Filesystem claim.
				claims = append(claims, claim(name, n.Namespace, labels, ptr.To(corev1.PersistentVolumeFilesystem), s.StorageClassName, s.Capacity.DeepCopy()))
				ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: name, MountPath: path})
				continue
			}
			claims = append(claims, brickClaim(name, n.Namespace, labels, s))
			ctr.VolumeDevices = append(ctr.VolumeDevices, corev1.VolumeDevice{Name: name, DevicePath: path})
		}
		if loop {
			// GD2 mounts each brick image through a loop device that
			// losetup finds free only after the container started: the
			// container's own /dev is a copy of the host's made at start.
			volumes = append(volumes, hostPathVolume(volumeHostDev, "/dev", corev1.HostPathDirectory))
			ctr.VolumeMounts = append(ctr.VolumeMounts, corev1.VolumeMount{Name: volumeHostDev, MountPath: "/dev"})
		}
	}

	if len(claims) == 0 {
		// A node on host devices is pinned to its host (spec.storage.host,
		// see nodePlacement): GD2's state lives there too.
		volumes = append(volumes, hostPathVolume(volumeState, HostStateDir(n.Namespace, n.Name), corev1.HostPathDirectoryOrCreate))
	}
	if TLSEnabled(c) && n.Spec.ExternalAddress == "" {
		v, m := tlsVolume(NodeTLSSecretName(n.Name), gd2TLSDir)
		volumes = append(volumes, v)
		ctr.VolumeMounts = append(ctr.VolumeMounts, m)
		ctr.Env = append(ctr.Env, gd2TLSEnv()...)
		ctr.ReadinessProbe.HTTPGet.Scheme = corev1.URISchemeHTTPS
		ctr.LivenessProbe.HTTPGet.Scheme = corev1.URISchemeHTTPS
	}
	affinity, tolerations := nodePlacement(c, n)
	if t := NodeTemplateOf(c, n.Spec.Template); t != nil {
		if t.Resources != nil {
			ctr.Resources = *t.Resources.DeepCopy()
		}
		for _, e := range t.Env {
			ctr.Env = append(ctr.Env, *e.DeepCopy())
		}
	}

	containers := []corev1.Container{ctr}
	if MetricsExporterEnabled(c) {
		exp, v := glusterExporterContainer(c, image, host)
		containers = append(containers, exp)
		volumes = append(volumes, v)
	}
	annotations := map[string]string{AnnotationVersion: version}
	if h := n.Annotations[AnnotationCertificate]; h != "" && TLSEnabled(c) {
		annotations[AnnotationCertificate] = h
	}
	sts := workload{
		meta: metav1.ObjectMeta{
			Name:            NodeStatefulSetName(n.Name),
			Namespace:       n.Namespace,
			Labels:          labels,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(n, glusterNodeKind)},
		},
		selector: nodeSelectorLabels(c.Name, n.Name),
		pod: podTemplate(withZone(podLabels(labels), n.Spec.Zone), annotations, corev1.PodSpec{
			// glusterd2 reaps none of the processes it starts: its bricks,
			// self-heal daemon and the FUSE client of every volume status
			// daemonize and end up children of the container's PID 1. As
			// PID 1 itself it would leave them zombies, and GD2 takes a
			// SIGKILLed brick's zombie for a running brick (kill(pid, 0)
			// succeeds) and never starts it again. With the pod's process
			// namespace shared, the pause process is PID 1 and reaps them.
			ShareProcessNamespace: ptr.To(true),
			Containers:            containers,
			Volumes:               volumes,
			Affinity:              affinity,
			Tolerations:           tolerations,
		}),
	}.statefulSet(HeadlessServiceName(c.Name), claims)
	sts.Spec.PodManagementPolicy = appsv1.ParallelPodManagement
	sts.Spec.UpdateStrategy = appsv1.StatefulSetUpdateStrategy{Type: appsv1.OnDeleteStatefulSetStrategyType}
	return sts
}

// stateClaim is the small filesystem claim that holds GD2's state
// directory, in the brick claims' StorageClass.
func stateClaim(namespace string, labels map[string]string, class *string) corev1.PersistentVolumeClaim {
	return claim(StateClaimTemplate, namespace, labels, ptr.To(corev1.PersistentVolumeFilesystem), class, resource.MustParse(StateClaimSize))
}

// brickClaim is one brick device's Block-mode claim, of the node's
// capacity and class.
func brickClaim(name, namespace string, labels map[string]string, s *operatorv1alpha1.NodeStorage) corev1.PersistentVolumeClaim {
	return claim(name, namespace, labels, ptr.To(corev1.PersistentVolumeBlock), s.StorageClassName, s.Capacity.DeepCopy())
}

// nodePlacement pins the pod to the node's zone, ANDed with the node's own
// nodeAffinity (or, when it has none, its template's), and takes the node's
// tolerations (or its template's), plus a shorter toleration of a lost
// Kubernetes node than Kubernetes' default (see lostNodeTolerations).
func nodePlacement(c *operatorv1alpha1.GlusterCluster, n *operatorv1alpha1.GlusterNode) (*corev1.Affinity, []corev1.Toleration) {
	na, tol := n.Spec.NodeAffinity, n.Spec.Tolerations
	if t := NodeTemplateOf(c, n.Spec.Template); t != nil {
		if na == nil {
			na = t.NodeAffinity
		}
		if tol == nil {
			tol = t.Tolerations
		}
	}
	var out *corev1.NodeAffinity
	if na != nil {
		out = na.DeepCopy()
	} else {
		out = &corev1.NodeAffinity{}
	}
	// The zone, and the host of a server on host devices (its bricks and
	// GD2's state are that host's), are required of every placement.
	var must []corev1.NodeSelectorRequirement
	if n.Spec.Zone != "" {
		must = append(must, corev1.NodeSelectorRequirement{Key: ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{n.Spec.Zone}})
	}
	if s := n.Spec.Storage; s != nil && s.Host != "" {
		must = append(must, corev1.NodeSelectorRequirement{Key: HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{s.Host}})
	}
	if len(must) > 0 {
		req := out.RequiredDuringSchedulingIgnoredDuringExecution
		if req == nil || len(req.NodeSelectorTerms) == 0 {
			out.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{
				NodeSelectorTerms: []corev1.NodeSelectorTerm{{MatchExpressions: must}},
			}
		} else {
			// Terms are ORed and a term's expressions ANDed: the
			// requirements must join every term to constrain them all.
			for i := range req.NodeSelectorTerms {
				req.NodeSelectorTerms[i].MatchExpressions = append(req.NodeSelectorTerms[i].MatchExpressions, must...)
			}
		}
	}
	var tolerations []corev1.Toleration
	for _, t := range tol {
		tolerations = append(tolerations, *t.DeepCopy())
	}
	tolerations = lostNodeTolerations(tolerations)
	if out.RequiredDuringSchedulingIgnoredDuringExecution == nil && len(out.PreferredDuringSchedulingIgnoredDuringExecution) == 0 {
		return nil, tolerations
	}
	return &corev1.Affinity{NodeAffinity: out}, tolerations
}

// HostInterfaceVolume reports whether the GD2 pod's volume name is a
// host interface it mounts (LVM's run directory, the kernel's modules):
// each host has its own and none holds the node's data, so a pod using
// them may move to another host of its zone (a lost Kubernetes node's pod
// is evicted all the same; see the node machine's lost-pod step).
func HostInterfaceVolume(name string) bool {
	return name == volumeLVMRun || name == volumeModules
}
