// Package v1alpha1 is version v1alpha1 of the operator.gluster.org API: the
// GlusterCluster and GlusterNode custom resources that anthill reconciles.
//
// The Go types here are the source of truth for the generated deep-copy
// functions, the typed clientset, listers and informers under kube/client, and
// the CRD manifests (OpenAPI v3 schema with CEL validation rules) under
// manifests/crds. Regenerate all of them with hack/update-codegen.sh after any
// change to this package.
//
// Compatibility rules for this package, so that it can grow without breaking
// stored objects or clients: new fields are optional (pointer or omitempty),
// enums only gain values, no field is renamed or retyped, and status values
// that state machines write (phases, states) are plain strings in the schema so
// that a newer operator may add states without a CRD change.
//
// +k8s:deepcopy-gen=package
// +groupName=operator.gluster.org
package v1alpha1
