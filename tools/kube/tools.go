//go:build tools

// Package kube pins the Kubernetes control-plane commands that the test
// harness runs. It is a separate module so that k8s.io/kubernetes and its
// staging replacements never enter anthill's own go.mod.
package kube

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
