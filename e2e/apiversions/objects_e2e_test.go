//go:build e2e

package apiversions

import (
	"reflect"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// clusterUnsettable and nodeUnsettable are the leaves no valid object can
// set: vdo's only accepted value is false, its zero value; blockImage and
// the block StorageClass are refused whatever their value.
var (
	clusterUnsettable = map[string]string{
		"spec.nodeTemplates[].vdo":                     "the API rejects true (no VDO in GD2)",
		"spec.csi.blockImage":                          "the API rejects any value (no GD2-era block CSI driver anthill can run)",
		"spec.csi.storageClasses.block.create":         "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.name":           "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.reclaimPolicy":  "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.isDefault":      "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.allowedZones[]": "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.replicas":       "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.arbiterType":    "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.arbiterPath":    "the API rejects a block StorageClass (no block driver)",
		"spec.csi.storageClasses.block.brickType":      "the API rejects a block StorageClass (no block driver)",
	}
	nodeUnsettable = map[string]string{"spec.storage.vdo": "the API rejects true (no VDO in GD2)"}
)

// filled is a T with every field set by the filler.
func filled[T any](f *filler) T {
	var v T
	f.fill(reflect.ValueOf(&v).Elem())
	return v
}

// fullClusters are GlusterClusters, one per mode, that the API server
// accepts and that together set every spec and status field: the modes
// exclude one another's fields (a manual template's nodes, an automatic
// one's range and autoscaling, an external pool's addresses).
func fullClusters() []operatorv1alpha1.GlusterCluster {
	f := &filler{}
	var out []operatorv1alpha1.GlusterCluster
	for _, mode := range []operatorv1alpha1.ClusterMode{operatorv1alpha1.ClusterModeManual, operatorv1alpha1.ClusterModeAutomatic, operatorv1alpha1.ClusterModeExternal} {
		c := operatorv1alpha1.GlusterCluster{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "full-" + string(mode),
				Labels:      map[string]string{"anthill-test": string(mode)},
				Annotations: map[string]string{"anthill-test/note": "every field set"},
			},
			Spec:   filled[operatorv1alpha1.GlusterClusterSpec](f),
			Status: filled[operatorv1alpha1.GlusterClusterStatus](f),
		}
		s := &c.Spec
		s.Mode = mode
		s.Gluster.Image = "registry.invalid/gluster/glusterd2"
		s.Gluster.Version = "4.1.0"
		s.CSI.Version = "4.0.0"
		s.CSI.StorageClasses.File.ReclaimPolicy = corev1.PersistentVolumeReclaimRetain
		s.CSI.StorageClasses.Additional[0].ReclaimPolicy = corev1.PersistentVolumeReclaimDelete
		s.CSI.StorageClasses.Additional[0].IsDefault = false
		for _, sc := range []*operatorv1alpha1.StorageClassSpec{s.CSI.StorageClasses.File, &s.CSI.StorageClasses.Additional[0]} {
			sc.BrickType = "loop"
			// A thin arbiter, two copies: the zones of the templates of
			// one zone hold no second copy, so only the external pool,
			// whose zones anthill does not check, has them.
			if mode == operatorv1alpha1.ClusterModeExternal {
				sc.Replicas, sc.ArbiterType, sc.ArbiterPath = ptr.To[int32](2), "thin", "ta.example.com:/bricks/ta:24007"
			} else {
				sc.Replicas, sc.ArbiterType, sc.ArbiterPath = nil, "", ""
			}
		}
		s.Drivers = []operatorv1alpha1.GlusterDriver{operatorv1alpha1.GlusterDriverFile}
		// Refused at admission: block is not available.
		s.CSI.BlockImage = ""
		s.CSI.StorageClasses.Block = nil
		s.Management.Endpoint = "https://gd2.example.com:24007"
		s.UpgradePolicy.HealTimeout = &metav1.Duration{Duration: time.Hour}
		s.FailurePolicy.PermissibleDowntime = &metav1.Duration{Duration: 30 * time.Minute}
		s.FailurePolicy.OfflineGrace = &metav1.Duration{Duration: 30 * time.Second}
		s.FailurePolicy.RecoveryWindow = &metav1.Duration{Duration: 2 * time.Minute}
		for i := range s.NodeTemplates {
			nt := &s.NodeTemplates[i]
			nt.VDO = false
			nt.Storage.Provisioner = "loop"
			for j := range nt.Env {
				nt.Env[j].Name = "LOG_LEVEL"
			}
		}
		s.External.Port = 24007
		s.External.Nodes[0].Address = "gd2-1.example.com"
		// Snapshots need an LVM template (GD2 snapshots thin LVs): the
		// manual cluster's templates are LVM, its classes' bricks too;
		// the others take none. The exporter runs beside anthill's own
		// servers only.
		s.CSI.Snapshots.DeletionPolicy = "Delete"
		switch mode {
		case operatorv1alpha1.ClusterModeManual:
			for i := range s.NodeTemplates {
				s.NodeTemplates[i].Storage.Provisioner = "lvm"
			}
			for _, sc := range []*operatorv1alpha1.StorageClassSpec{s.CSI.StorageClasses.File, &s.CSI.StorageClasses.Additional[0]} {
				sc.BrickType = "lvm"
			}
		default:
			s.CSI.Snapshots = nil
		}
		if mode == operatorv1alpha1.ClusterModeExternal {
			s.Gluster.MetricsExporter = nil
		}
		switch mode {
		case operatorv1alpha1.ClusterModeManual:
			s.CSI.StorageClasses.File.IsDefault = true
			for i := range s.NodeTemplates {
				nt := &s.NodeTemplates[i]
				nt.MinNodes, nt.MaxNodes, nt.MaxStorage, nt.FreeStorageMin, nt.FreeStorageMax = nil, nil, nil, nil, nil
			}
			s.Autoscaling, s.External = nil, nil
		case operatorv1alpha1.ClusterModeAutomatic:
			// One default class: here an additional one.
			s.CSI.StorageClasses.File.IsDefault = false
			s.CSI.StorageClasses.Additional[0].IsDefault = true
			for i := range s.NodeTemplates {
				nt := &s.NodeTemplates[i]
				nt.Nodes = nil
				nt.MinNodes, nt.MaxNodes = ptr.To[int32](1), ptr.To[int32](3)
				nt.MaxStorage = ptr.To(resource.MustParse("10Gi"))
				nt.FreeStorageMin = ptr.To(resource.MustParse("1Gi"))
				nt.FreeStorageMax = ptr.To(resource.MustParse("2Gi"))
			}
			s.External = nil
		case operatorv1alpha1.ClusterModeExternal:
			s.CSI.StorageClasses.File.IsDefault = false
			s.NodeTemplates, s.Autoscaling = nil, nil
		}
		fixConditions(c.Status.Conditions)
		out = append(out, c)
	}
	return out
}

// fullNodes are GlusterNodes that together set every field: host devices
// with an external address, and claims with placement, since a server
// outside the cluster takes no placement and devices exclude claims.
func fullNodes() []operatorv1alpha1.GlusterNode {
	f := &filler{}
	var out []operatorv1alpha1.GlusterNode
	for _, kind := range []string{"devices", "claims"} {
		n := operatorv1alpha1.GlusterNode{
			ObjectMeta: metav1.ObjectMeta{
				Name:        "full-" + kind,
				Labels:      map[string]string{"anthill-test": kind},
				Annotations: map[string]string{"anthill-test/note": "every field set"},
			},
			Spec:   filled[operatorv1alpha1.GlusterNodeSpec](f),
			Status: filled[operatorv1alpha1.GlusterNodeStatus](f),
		}
		s := &n.Spec
		s.DesiredState = operatorv1alpha1.NodeDisabled
		s.Storage.VDO = false
		s.Storage.Provisioner = "loop"
		switch kind {
		case "devices":
			s.Storage.Devices = []string{"/dev/sdb"}
			s.Storage.Host = "kwok-zone-1-0"
			s.Storage.Capacity, s.Storage.DeviceCount, s.Storage.StorageClassName = nil, nil, nil
			s.ExternalAddress = "gd2-2.example.com"
			s.NodeAffinity, s.Tolerations = nil, nil
		case "claims":
			s.DesiredState = operatorv1alpha1.NodeEnabled
			s.Storage.Devices, s.Storage.Host = nil, ""
			s.ExternalAddress = ""
		}
		fixConditions(n.Status.Conditions)
		out = append(out, n)
	}
	return out
}

func fixConditions(cs []metav1.Condition) {
	for i := range cs {
		cs[i].Status = metav1.ConditionTrue
	}
}
