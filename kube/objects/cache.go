package objects

import (
	appsv1 "k8s.io/api/apps/v1"
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
//
// A pod (only anthill's are watched: a Gluster node's, a CSI driver's)
// keeps its metadata, status, node, tolerations, its containers' names and
// images (what ContainerImages compares) and, of its volumes, only the
// claims and host paths (what tells whether a lost node's pod may move:
// podVolumes in kube/machines). Its probes, environment, mounts,
// resources and security context, most of a pod, go. A pod is only ever
// patched, never updated from the cache.
//
// A StatefulSet (a Gluster node's, a cluster's etcd) keeps its metadata,
// its replica count and its status: the etcd one's ready replicas are what
// the cluster machine reads. Its pod template and claim templates go; a
// node's StatefulSet is changed only from a live read (kube/effects).
//
// A PersistentVolumeClaim (a brick's) keeps its metadata, the volume it is
// bound to and its phase (what tells whether a node's claims are bound);
// a lost node's claims are read live before anything is forced.
//
// A Kubernetes Node keeps its metadata, whether it is cordoned and its
// taints: what tells the disruption machine a drain was asked for. Its
// status, the largest part of a Node and the part that changes with every
// heartbeat, goes; whether a lost node is Ready is read live.
func TrimForCache(obj any) (any, error) {
	if m, err := meta.Accessor(obj); err == nil {
		m.SetManagedFields(nil)
	}
	switch o := obj.(type) {
	case *corev1.PersistentVolume:
		trimPV(o)
	case *corev1.Pod:
		trimPod(o)
	case *appsv1.StatefulSet:
		o.Spec = appsv1.StatefulSetSpec{Replicas: o.Spec.Replicas}
	case *corev1.PersistentVolumeClaim:
		o.Spec = corev1.PersistentVolumeClaimSpec{VolumeName: o.Spec.VolumeName}
		o.Status = corev1.PersistentVolumeClaimStatus{Phase: o.Status.Phase}
	case *corev1.Node:
		o.Spec = corev1.NodeSpec{Unschedulable: o.Spec.Unschedulable, Taints: o.Spec.Taints}
		o.Status = corev1.NodeStatus{}
	}
	return obj, nil
}

func trimPod(p *corev1.Pod) {
	spec := corev1.PodSpec{
		NodeName:       p.Spec.NodeName,
		Tolerations:    p.Spec.Tolerations,
		Containers:     namesAndImages(p.Spec.Containers),
		InitContainers: namesAndImages(p.Spec.InitContainers),
	}
	for _, v := range p.Spec.Volumes {
		switch {
		case v.PersistentVolumeClaim != nil:
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: v.PersistentVolumeClaim}})
		case v.HostPath != nil:
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: v.Name, VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: v.HostPath.Path}}})
		}
	}
	p.Spec = spec
}

func namesAndImages(cs []corev1.Container) []corev1.Container {
	if cs == nil {
		return nil
	}
	out := make([]corev1.Container, len(cs))
	for i, c := range cs {
		out[i] = corev1.Container{Name: c.Name, Image: c.Image}
	}
	return out
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
