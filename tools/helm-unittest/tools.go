//go:build tools

// Package helmunittest pins helm-unittest, the helm plugin that runs the chart's
// unit tests (manifests/charts/anthill/tests); hack/build-helm-unittest.sh
// builds it into the per-user tool cache.
package helmunittest

import _ "github.com/helm-unittest/helm-unittest/cmd/helm-unittest"
