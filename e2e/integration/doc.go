// Package integration tests anthill's API and manifests against one real
// control plane (e2e/framework) shared by every test in the package: CRD
// schema and validation, status subresource, scheduling on fake nodes, and
// the kustomize manifests users apply.
package integration
