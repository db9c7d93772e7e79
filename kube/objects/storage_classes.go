package objects

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// AnnotationDefaultStorageClass marks the default StorageClass of a
// Kubernetes cluster; isDefault sets it to "true".
const AnnotationDefaultStorageClass = "storageclass.kubernetes.io/is-default-class"

// CSIZoneTopologyKey is the key a StorageClass's allowedZones become
// allowedTopologies on: the well-known zone label, which
// nodeTemplates[].zone is matched against too. The driver has no topology
// (it advertises no VOLUME_ACCESSIBILITY_CONSTRAINTS, sheet §3), so the
// scheduler alone reads it: the first pod of a claim is placed on a node
// of an allowed zone; the volume's bricks are wherever GD2 puts them, and
// the PersistentVolume carries no node affinity (docs/csi.md).
const CSIZoneTopologyKey = ZoneLabel

// storageClassSpecOf is the spec of kind's StorageClass in c, nil when
// unset.
func storageClassSpecOf(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) *operatorv1alpha1.StorageClassSpec {
	if c.Spec.CSI == nil || c.Spec.CSI.StorageClasses == nil {
		return nil
	}
	if kind == operatorv1alpha1.GlusterDriverBlock {
		return c.Spec.CSI.StorageClasses.Block
	}
	return c.Spec.CSI.StorageClasses.File
}

// StorageClassName is the name of kind's StorageClass in c:
// spec.csi.storageClasses.<kind>.name, else <cluster>-<kind>.
func StorageClassName(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) string {
	var name string
	if s := storageClassSpecOf(c, kind); s != nil {
		name = s.Name
	}
	return cmp.Or(name, c.Name+"-"+string(kind))
}

// WantsStorageClass reports whether c asks for a StorageClass of kind: the
// driver is in spec.drivers and create is not false.
func WantsStorageClass(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) bool {
	if !slices.Contains(CSIDriverKinds(c), kind) {
		return false
	}
	s := storageClassSpecOf(c, kind)
	return s == nil || s.Create == nil || *s.Create
}

// StorageClassObject is kind's StorageClass (see storageClassObject).
func StorageClassObject(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver) *storagev1.StorageClass {
	s := storageClassSpecOf(c, kind)
	if s == nil {
		s = &operatorv1alpha1.StorageClassSpec{}
	}
	return storageClassObject(c, kind, StorageClassName(c, kind), s)
}

// storageClassObject is the StorageClass name of c that s asks for:
// provisioned by kind's driver (the name it registers), with the
// parameters s sets (StorageClassParameters; none means the driver's
// defaults, replica 3 on thin LVM), StorageClassMountOptions, reclaimPolicy Delete unless Retain is
// asked for, and no expansion, since the drivers run no resizer. With
// allowedZones, allowedTopologies on CSIZoneTopologyKey and binding
// WaitForFirstConsumer, so the scheduler picks the first pod's node in an
// allowed zone before the volume is made; without, Immediate.
// Cluster-scoped, so no owner reference: the cluster labels find it.
func storageClassObject(c *operatorv1alpha1.GlusterCluster, kind operatorv1alpha1.GlusterDriver, name string, s *operatorv1alpha1.StorageClassSpec) *storagev1.StorageClass {
	sc := &storagev1.StorageClass{
		ObjectMeta:           csiClusterMeta(c, name, kind),
		Provisioner:          CSIDriverName(kind),
		Parameters:           StorageClassParameters(s),
		ReclaimPolicy:        ptr.To(cmp.Or(s.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete)),
		AllowVolumeExpansion: ptr.To(false),
		VolumeBindingMode:    ptr.To(storagev1.VolumeBindingImmediate),
		MountOptions:         StorageClassMountOptions(c),
	}
	if s.IsDefault {
		sc.Annotations = map[string]string{AnnotationDefaultStorageClass: "true"}
	}
	if len(s.AllowedZones) > 0 {
		zones := slices.Clone(s.AllowedZones)
		slices.Sort(zones)
		sc.VolumeBindingMode = ptr.To(storagev1.VolumeBindingWaitForFirstConsumer)
		sc.AllowedTopologies = []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: CSIZoneTopologyKey, Values: zones},
		}}}
	}
	return sc
}

// MountOptionBackupVolfileServers is Gluster's FUSE mount option
// (mount.glusterfs) naming, ':'-separated, the servers a client fetches
// the volume's file from when the server of the mount source does not
// answer.
const MountOptionBackupVolfileServers = "backup-volfile-servers"

// StorageClassMountOptions are the mount options of every class of c:
// the management Service as a backup volfile server. The 2019 driver
// mounts <glusterserver>:<volume>, glusterserver being the name of the
// GD2 pod that was GD2's first peer when the volume was made, fixed in the
// PersistentVolume; once that pod is gone (decommissioned or replaced) the
// name resolves no more, and every new mount of the volume would fail.
// The provisioner copies the class's mount options into the volume, the
// kubelet hands them to the driver and the driver to mount, so the client
// then fetches the volume's file through the Service from any GD2 pod
// that runs (docs/csi.md).
func StorageClassMountOptions(c *operatorv1alpha1.GlusterCluster) []string {
	return []string{MountOptionBackupVolfileServers + "=" + ManagementHost(c)}
}

// The StorageClass parameters the file driver reads (CSIFileParameters),
// as StorageClassParameters writes them.
const (
	ParameterReplicas    = "replicas"
	ParameterArbiterType = "arbiterType"
	ParameterArbiterPath = "arbiterPath"
	ParameterBrickType   = "brickType"
)

// StorageClassParameters are the parameters of the class s asks for, each
// one the file driver reads (csi@168a40e: ParseCreateVolRequest): only the
// fields s sets, so a class without any has none, and the driver's
// defaults (replicas 3, brickType lvm) hold. nil when none is set.
func StorageClassParameters(s *operatorv1alpha1.StorageClassSpec) map[string]string {
	p := map[string]string{}
	if s.Replicas != nil {
		p[ParameterReplicas] = strconv.Itoa(int(*s.Replicas))
	}
	if s.ArbiterType != "" {
		p[ParameterArbiterType] = s.ArbiterType
	}
	if s.ArbiterPath != "" {
		p[ParameterArbiterPath] = s.ArbiterPath
	}
	if s.BrickType != "" {
		p[ParameterBrickType] = s.BrickType
	}
	if len(p) == 0 {
		return nil
	}
	return p
}

// DesiredStorageClasses are the StorageClasses c asks for: the file
// driver's (unless create is false), then each of
// spec.csi.storageClasses.additional in spec order (unless its create is
// false), all of the file driver, the only one that runs (CSIDriverKinds).
func DesiredStorageClasses(c *operatorv1alpha1.GlusterCluster) []*storagev1.StorageClass {
	var out []*storagev1.StorageClass
	for _, k := range CSIDriverKinds(c) {
		if WantsStorageClass(c, k) {
			out = append(out, StorageClassObject(c, k))
		}
	}
	if c.Spec.CSI == nil || c.Spec.CSI.StorageClasses == nil {
		return out
	}
	for i := range c.Spec.CSI.StorageClasses.Additional {
		s := &c.Spec.CSI.StorageClasses.Additional[i]
		// The API requires a name; one without cannot become a class.
		if s.Name == "" || (s.Create != nil && !*s.Create) {
			continue
		}
		out = append(out, storageClassObject(c, operatorv1alpha1.GlusterDriverFile, s.Name, s))
	}
	return out
}

// StorageClassOf reports whether sc is a StorageClass anthill created for
// the cluster named cluster in namespace: only such a class is ever
// updated or deleted.
func StorageClassOf(sc *storagev1.StorageClass, namespace, cluster string) bool {
	return CSIClusterScopedSelector(namespace, cluster).Matches(labels.Set(sc.Labels))
}

// StorageClassDrift says how a StorageClass anthill created differs from
// the one it wants: Recreate when a field the API server keeps immutable
// differs (provisioner, parameters, reclaimPolicy, volumeBindingMode),
// Update when only fields it lets change do (labels, the default-class
// annotation, allowedTopologies, allowVolumeExpansion, mountOptions).
type StorageClassDrift int

// StorageClassDrift values, from none to the most disruptive.
const (
	StorageClassInSync StorageClassDrift = iota
	StorageClassUpdate
	StorageClassRecreate
)

// DiffStorageClass compares have, as stored, with want, as built.
func DiffStorageClass(want, have *storagev1.StorageClass) StorageClassDrift {
	if want.Provisioner != have.Provisioner || !maps.Equal(want.Parameters, have.Parameters) ||
		ptr.Deref(want.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete) != ptr.Deref(have.ReclaimPolicy, corev1.PersistentVolumeReclaimDelete) ||
		ptr.Deref(want.VolumeBindingMode, storagev1.VolumeBindingImmediate) != ptr.Deref(have.VolumeBindingMode, storagev1.VolumeBindingImmediate) {
		return StorageClassRecreate
	}
	if !apiequality.Semantic.DeepEqual(UpdateStorageClass(want, have), have) {
		return StorageClassUpdate
	}
	return StorageClassInSync
}

// UpdateStorageClass is have with the mutable fields of want: anthill's
// labels and the default-class annotation set (or that annotation
// removed), allowedTopologies, allowVolumeExpansion and mountOptions.
// Other labels and annotations are left as they are.
func UpdateStorageClass(want, have *storagev1.StorageClass) *storagev1.StorageClass {
	out := have.DeepCopy()
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	maps.Copy(out.Labels, want.Labels)
	if v, ok := want.Annotations[AnnotationDefaultStorageClass]; ok {
		if out.Annotations == nil {
			out.Annotations = map[string]string{}
		}
		out.Annotations[AnnotationDefaultStorageClass] = v
	} else {
		// Semantic equality treats an emptied map as nil.
		delete(out.Annotations, AnnotationDefaultStorageClass)
	}
	out.AllowedTopologies = want.AllowedTopologies
	out.AllowVolumeExpansion = want.AllowVolumeExpansion
	out.MountOptions = want.MountOptions
	return out
}
