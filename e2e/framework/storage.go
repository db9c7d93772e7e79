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

// LocalStorageClass is the default StorageClass CreateLocalStorage makes:
// no provisioner, binding delayed until a pod is scheduled, so a claim
// binds to a pre-created local PV on the node the scheduler picked — the
// way node-local brick disks behave on a real cluster.
const LocalStorageClass = "local"

// CreateLocalStorage creates LocalStorageClass (as the default class) and,
// on every fake node, perNode block PVs (for bricks) and perNode filesystem
// PVs (for etcd data), each of size. It is idempotent.
func (cp *ControlPlane) CreateLocalStorage(ctx context.Context, perNode int, size string) error {
	return cp.CreateLocalStorageRange(ctx, 0, perNode, size)
}

// CreateLocalStorageRange is CreateLocalStorage for the PVs numbered from
// to to-1 on each node only: a long run (the crash sweep) that uses up the
// PVs made at start adds more without re-creating the first ones.
func (cp *ControlPlane) CreateLocalStorageRange(ctx context.Context, from, to int, size string) error {
	q, err := resource.ParseQuantity(size)
	if err != nil {
		return fmt.Errorf("PV size %q: %w", size, err)
	}
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        LocalStorageClass,
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/no-provisioner",
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingWaitForFirstConsumer),
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
	}
	if _, err := cp.Client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create StorageClass: %w", err)
	}
	nodes, err := cp.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "type=kwok"})
	if err != nil {
		return err
	}
	n := 0
	for _, node := range nodes.Items {
		for i := from; i < to; i++ {
			for _, mode := range []corev1.PersistentVolumeMode{corev1.PersistentVolumeBlock, corev1.PersistentVolumeFilesystem} {
				pv := localPV(node.Name, i, mode, q)
				if _, err := cp.Client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					return fmt.Errorf("create PV %s: %w", pv.Name, err)
				}
				n++
			}
		}
	}
	cp.logf("created %d local PVs on %d nodes", n, len(nodes.Items))
	return nil
}

func localPV(node string, i int, mode corev1.PersistentVolumeMode, size resource.Quantity) *corev1.PersistentVolume {
	kind, path := "block", fmt.Sprintf("/dev/disk/fake-%d", i)
	if mode == corev1.PersistentVolumeFilesystem {
		kind, path = "fs", fmt.Sprintf("/mnt/fake-%d", i)
	}
	return &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", node, kind, i), Labels: map[string]string{"type": "kwok-local"}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: size},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			VolumeMode:                    &mode,
			StorageClassName:              LocalStorageClass,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{node}}},
			}}}},
		},
	}
}
