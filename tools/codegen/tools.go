//go:build tools

// Package codegen pins the code generators that hack/update-codegen.sh runs:
// the deepcopy, client, lister and informer generators from
// k8s.io/code-generator and controller-gen for CRD manifests. It is a separate
// module so that the generators' dependencies never enter anthill's go.mod.
package codegen

import (
	_ "k8s.io/code-generator/cmd/client-gen"
	_ "k8s.io/code-generator/cmd/deepcopy-gen"
	_ "k8s.io/code-generator/cmd/informer-gen"
	_ "k8s.io/code-generator/cmd/lister-gen"
	_ "sigs.k8s.io/controller-tools/cmd/controller-gen"
)
