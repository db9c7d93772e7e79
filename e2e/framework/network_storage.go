package framework

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

// NetworkStorageClass is the StorageClass CreateNetworkStorage makes: its
// PVs are CSI volumes with no node affinity, so a pod using one can be
// scheduled on any node — the way network block storage (a SAN LUN, a
// cloud disk within its zone, Ceph RBD) behaves on a real cluster, and the
// opposite of LocalStorageClass.
const NetworkStorageClass = "network"

// NetworkCSIDriver is the CSI driver named by the network PVs. Nothing
// serves it: kwok's kubelets never stage volumes. Its CSIDriver object says
// no attach is needed, so no attach/detach step gates a moved pod.
const NetworkCSIDriver = "network.storage.e2e.anthill.gluster.org"

// CreateNetworkStorage creates NetworkStorageClass (binding at once, no
// provisioner), its CSIDriver, and count block PVs (for bricks) and count
// filesystem PVs (for GD2 state) of size, all without node affinity. It is
// idempotent.
func (cp *ControlPlane) CreateNetworkStorage(ctx context.Context, count int, size string) error {
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return fmt.Errorf("PV size %q: %w", size, err)
	}
	sc := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: NetworkStorageClass},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
	}
	if _, err := cp.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass: %w", err)
	}
	drv := &storagev1.CSIDriver{
		ObjectMeta: metav1.ObjectMeta{Name: NetworkCSIDriver},
		Spec: storagev1.CSIDriverSpec{
			AttachRequired:       ptr.To(false),
			VolumeLifecycleModes: []storagev1.VolumeLifecycleMode{storagev1.VolumeLifecyclePersistent},
		},
	}
	if _, err := cp.Client.StorageV1().CSIDrivers().Create(ctx, drv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create CSIDriver: %w", err)
	}
	for i := range count {
		for _, mode := range []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem} {
			pv := networkPV(i, mode, q)
			if _, err := cp.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create PV %s: %w", pv.Name, err)
			}
		}
	}
	cp.logf("created %d network PVs", 2*count)
	return nil
}

func networkPV(i int, mode corev1.PersistentVolumeMode, size resource.Quantity) *corev1.PersistentVolume {
	kind := "block"
	if mode == corev1.PersistentVolumeFilesystem {
		kind = "fs"
	}
	name := fmt.Sprintf("network-%s-%d", kind, i)
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"type": "network"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:                    &mode,
			StorageClassName:              NetworkStorageClass,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: NetworkCSIDriver, VolumeHandle: name,
			}},
		},
	}
}
