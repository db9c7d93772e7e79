//go:build tools

// Package kwok pins kwok, which simulates kubelets for the test control plane.
package kwok

import _ "sigs.k8s.io/kwok/cmd/kwok"
