package admin

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gluster/anthill/kube/client/clientset/versioned"
)

// belongsToCluster reports whether an object's transitions belong to
// cluster. nodeCluster is a GlusterNode's spec.cluster when the node still
// exists (known); a node that is gone — its last transitions, Deleting ->
// Deleted, are recorded as it goes — is matched by the operator's naming
// convention <cluster>-<template>-<suffix> against the cluster's templates,
// or by the prefix <cluster>- when the templates are unknown too.
func belongsToCluster(kind, name, cluster, nodeCluster string, known bool, templates []string) bool {
	switch kind {
	case kindGlusterCluster:
		return name == cluster
	case kindGlusterNode:
		if known {
			return nodeCluster == cluster
		}
		if len(templates) == 0 {
			return strings.HasPrefix(name, cluster+"-")
		}
		for _, t := range templates {
			if strings.HasPrefix(name, cluster+"-"+t+"-") {
				return true
			}
		}
	}
	return false
}

// clusterFilter applies --cluster, looking GlusterNodes up once each.
type clusterFilter struct {
	ac      versioned.Interface
	cluster string
	// nodes maps namespace/name to the node's cluster; absent entries have
	// not been looked up, gone is for nodes that no longer exist.
	nodes     map[string]string
	gone      map[string]bool
	templates map[string][]string
}

func newClusterFilter(ac versioned.Interface, cluster string) *clusterFilter {
	return &clusterFilter{ac: ac, cluster: cluster, nodes: map[string]string{}, gone: map[string]bool{}, templates: map[string][]string{}}
}

func (f *clusterFilter) match(ctx context.Context, l transitionLine) (bool, error) {
	if f == nil || f.cluster == "" {
		return true, nil
	}
	if l.Kind != kindGlusterNode {
		return belongsToCluster(l.Kind, l.Name, f.cluster, "", false, nil), nil
	}
	key := l.Namespace + "/" + l.Name
	if c, ok := f.nodes[key]; ok {
		return c == f.cluster, nil
	}
	if !f.gone[key] {
		n, err := f.ac.OperatorV1alpha1().GlusterNodes(l.Namespace).Get(ctx, l.Name, metav1.GetOptions{})
		switch {
		case err == nil:
			f.nodes[key] = n.Spec.Cluster
			return n.Spec.Cluster == f.cluster, nil
		case apierrors.IsNotFound(err):
			f.gone[key] = true
		default:
			return false, fmt.Errorf("look up the cluster of GlusterNode %s: %w", key, err)
		}
	}
	templates, err := f.clusterTemplates(ctx, l.Namespace)
	if err != nil {
		return false, err
	}
	return belongsToCluster(l.Kind, l.Name, f.cluster, "", false, templates), nil
}

func (f *clusterFilter) clusterTemplates(ctx context.Context, ns string) ([]string, error) {
	if t, ok := f.templates[ns]; ok {
		return t, nil
	}
	var names []string
	c, err := f.ac.OperatorV1alpha1().GlusterClusters(ns).Get(ctx, f.cluster, metav1.GetOptions{})
	switch {
	case err == nil:
		for _, t := range c.Spec.NodeTemplates {
			names = append(names, t.Name)
		}
	case !apierrors.IsNotFound(err):
		return nil, fmt.Errorf("get GlusterCluster %s/%s: %w", ns, f.cluster, err)
	}
	f.templates[ns] = names
	return names, nil
}
