package objects

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// NodeTemplateOf returns the cluster's template named name, or nil.
func NodeTemplateOf(c *operatorv1alpha1.GlusterCluster, name string) *operatorv1alpha1.NodeTemplate {
	if name == "" {
		return nil
	}
	for i := range c.Spec.NodeTemplates {
		if c.Spec.NodeTemplates[i].Name == name {
			return &c.Spec.NodeTemplates[i]
		}
	}
	return nil
}

// ClusterVersion is the Gluster version c's spec asks for ("" when it names
// none).
func ClusterVersion(c *operatorv1alpha1.GlusterCluster) string {
	if c.Spec.Gluster == nil {
		return ""
	}
	return c.Spec.Gluster.Version
}

// NodeFromTemplate is a new GlusterNode of c made from template t, named
// <cluster>-<template>-<suffix>. It carries the node finalizer from birth,
// so a node deleted before its first sync is still drained and detached.
func NodeFromTemplate(c *operatorv1alpha1.GlusterCluster, t *operatorv1alpha1.NodeTemplate, suffix string) *operatorv1alpha1.GlusterNode {
	count := t.Storage.DeviceCount
	if count <= 0 {
		count = defaultDeviceCount
	}
	n := &operatorv1alpha1.GlusterNode{
		ObjectMeta: metav1.ObjectMeta{
			Name:      c.Name + "-" + t.Name + "-" + suffix,
			Namespace: c.Namespace,
			Labels: map[string]string{
				LabelCluster:   c.Name,
				LabelComponent: ComponentGlusterNode,
				LabelManagedBy: ManagedByAnthill,
			},
			Finalizers:      []string{FinalizerNode},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(c, glusterClusterKind)},
		},
		Spec: operatorv1alpha1.GlusterNodeSpec{
			Cluster:      c.Name,
			Zone:         t.Zone,
			Template:     t.Name,
			DesiredState: operatorv1alpha1.NodeEnabled,
			Storage: &operatorv1alpha1.NodeStorage{
				Capacity:    ptr.To(t.Storage.Capacity.DeepCopy()),
				DeviceCount: ptr.To(count),
				VDO:         t.VDO,
				Provisioner: t.Storage.Provisioner,
			},
		},
	}
	if t.Storage.StorageClassName != nil {
		n.Spec.Storage.StorageClassName = ptr.To(*t.Storage.StorageClassName)
	}
	if t.NodeAffinity != nil {
		n.Spec.NodeAffinity = t.NodeAffinity.DeepCopy()
	}
	for _, tol := range t.Tolerations {
		n.Spec.Tolerations = append(n.Spec.Tolerations, *tol.DeepCopy())
	}
	return n
}
