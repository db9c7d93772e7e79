// Package manifests embeds the Kubernetes manifests that anthill ships, so
// that the operator and the tests install exactly the files users apply.
package manifests

import "embed"

// CRDs holds the generated CustomResourceDefinitions, one file per resource,
// as crds/<group>_<plural>.yaml.
//
//go:embed crds/*.yaml
var CRDs embed.FS
