package manifests

import (
	"maps"
	"slices"
	"testing"
)

// fileGrants are the grants of every Role and ClusterRole in file (a path
// below manifests), scope-less: verbs on resources.
func fileGrants(t *testing.T, file string) map[grant]bool {
	t.Helper()
	out := map[grant]bool{}
	for _, g := range expandGrants(t, file, "") {
		out[g] = true
	}
	return out
}

// clusterScoped are the resources the operator's rules name that have no
// namespace; Events are held cluster-wide since the CSI provisioner's
// ClusterRole is granted them on every namespace.
var clusterScoped = map[string]bool{
	"persistentvolumes": true, "nodes": true, "csidrivers": true, "storageclasses": true, "csinodes": true,
	"clusterroles": true, "clusterrolebindings": true, "events": true,
	"volumesnapshotclasses": true, "volumesnapshotcontents": true, "volumesnapshotcontents/status": true,
}

// TestNamespacedInstallGrantsWhatTheDefaultGrants: manifests/namespaced
// splits the default install's ClusterRole into a ClusterRole of what has
// no namespace or is granted onward to the CSI driver, and a Role for each
// watched namespace. Together they grant exactly what the default grants,
// a namespaced resource's verbs in the Role (so the operator may act in
// its namespaces only), and the ClusterRole grants the CSI provisioner's
// rules the operator hands on.
func TestNamespacedInstallGrantsWhatTheDefaultGrants(t *testing.T) {
	all := fileGrants(t, "rbac/cluster_role.yaml")
	cluster := fileGrants(t, "namespaced/cluster_role.yaml")
	role := fileGrants(t, "namespaced/watched/role.yaml")
	for _, g := range slices.SortedFunc(maps.Keys(all), compareGrants) {
		switch {
		case clusterScoped[g.resource] && !cluster[g]:
			t.Errorf("the namespaced install's ClusterRole lacks %v", g)
		case !clusterScoped[g.resource] && !role[g]:
			t.Errorf("the namespaced install's Role lacks %v", g)
		}
	}
	for name, grants := range map[string]map[grant]bool{"ClusterRole": cluster, "Role": role} {
		for _, g := range slices.SortedFunc(maps.Keys(grants), compareGrants) {
			if !all[g] {
				t.Errorf("the namespaced install's %s grants %v, which the default install does not", name, g)
			}
		}
	}
	for g := range role {
		if clusterScoped[g.resource] {
			t.Errorf("the namespaced install's Role grants %v, which has no namespace or is needed cluster-wide", g)
		}
	}
	// What the CSI provisioner's ClusterRole is granted, the operator
	// holds cluster-wide: claims, as the only namespaced kind.
	for _, v := range []string{"get", "list", "watch", "update"} {
		if g := (grant{"", "core", "persistentvolumeclaims", "", v}); !cluster[g] {
			t.Errorf("the namespaced install's ClusterRole lacks %v, which the CSI provisioner's ClusterRole is granted", g)
		}
	}
}
