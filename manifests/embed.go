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
