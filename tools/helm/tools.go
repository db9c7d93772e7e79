//go:build tools

// Package helm pins helm, which lints the chart in manifests/charts/anthill
// and renders it for the parity test.
package helm

import _ "helm.sh/helm/v3/cmd/helm"
