// Package krew tests the kubectl-gluster krew release: the manifest
// hack/krew-release.sh generates, krew's validator, and an offline
// `kubectl krew install` through the real kubectl. It needs no control
// plane, so it has a package of its own (build tag e2e).
package krew
