package objects

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
)

// TrimForCache is the transform every informer of the operator applies
// before it stores an object (cache.TransformFunc): it drops
// managedFields, the API server's record of which field manager set which
// field, which nothing in anthill reads and which for a pod, a StatefulSet
// or a Node is a large part of its metadata. An update built from a cached
// copy then carries no managedFields, which the API server reads as "keep
// them as they are". Anything without object metadata (a tombstone) passes
// unchanged.
//
// A PersistentVolume, watched across the whole Kubernetes cluster (every
// Gluster node's own claims, every volume a CSI driver provisioned, and
// every other PV there is), keeps only what is read from the cache: its
// metadata, the CSI driver and handle, its claim, class and reclaim policy,
// and its status. That is what tells which cluster's data it holds
// (usesCluster in kube/machines); anything else about a PV (where its data
// lives, for a lost node) is read live, and no PV is ever written from the
// cache.
func TrimForCache(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	if pv, ok := obj.(*corev1.PersistentVolume); ok {
		trimPV(pv)
	}
	return obj, nil
}

func trimPV(pv *corev1.PersistentVolume) {
	spec := corev1.PersistentVolumeSpec{
		ClaimRef:                      pv.Spec.ClaimRef,
		StorageClassName:              pv.Spec.StorageClassName,
		PersistentVolumeReclaimPolicy: pv.Spec.PersistentVolumeReclaimPolicy,
	}
	if c := pv.Spec.CSI; c != nil {
		spec.CSI = &corev1.CSIPersistentVolumeSource{Driver: c.Driver, VolumeHandle: c.VolumeHandle}
	}
	pv.Spec = spec
}
