// Package manifests embeds the Kubernetes manifests that anthill ships, so
// that the operator and the tests install exactly the files users apply.
package manifests

import "embed"

// CRDs holds the generated CustomResourceDefinitions, one file per resource,
// as crds/<group>_<plural>.yaml (the directory's kustomization is not
// embedded).
//
//go:embed crds/operator.gluster.org_*.yaml
var CRDs embed.FS

// Samples holds the sample resources users start from; the sandbox and the
// end-to-end tests create their clusters from these same files.
//
//go:embed samples/*.yaml
var Samples embed.FS
