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

// RBAC holds the operator's namespace, service account, ClusterRole, Role
// and bindings: the identity the operator runs as. The tests and the
// sandbox run the operator under exactly these rules.
//
//go:embed default/namespace.yaml rbac/service_account.yaml rbac/cluster_role.yaml rbac/cluster_role_binding.yaml rbac/leader_election_role.yaml
var RBAC embed.FS

// NamespacedRBAC is the namespaced install's ClusterRole (what has no
// namespace or is granted onward) and the Role of one watched namespace
// (namespaced/watched): the e2e suite runs an operator under them alone.
//
//go:embed namespaced/cluster_role.yaml namespaced/watched/role.yaml
var NamespacedRBAC embed.FS

// Admission holds the ValidatingAdmissionPolicy and its binding that refuse
// a GlusterCluster asking for the fixed-name CSI driver while another
// cluster holds it (docs/csi.md).
//
//go:embed admission/csi_driver_policy.yaml
var Admission embed.FS
