//go:build tools

// Package kubelet pins the programs of the e2e suite's real node: the
// kubelet and kube-proxy, from the same k8s.io/kubernetes release as the
// control plane (tools/kube). It is a module of its own so that building
// them never changes the go.sum whose hash says when the control plane
// must be rebuilt.
package kubelet

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
