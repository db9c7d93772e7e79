package admin

import (
	"regexp"
	"strconv"
	"strings"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
)

// The keys of init's questions. Each is also the name of the flag that
// answers it (namespace is kubectl's -n/--namespace).
const (
	qNamespace       = "namespace"
	qName            = "name"
	qMode            = "mode"
	qZones           = "zones"
	qNodesPerZone    = "nodes-per-zone"
	qMinNodesPerZone = "min-nodes-per-zone"
	qMaxNodesPerZone = "max-nodes-per-zone"
	qExternalNodes   = "external-nodes"
	qStorageClass    = "storage-class"
	qCapacity        = "capacity"
	qDeviceCount     = "device-count"
	qImage           = "image"
	qVersion         = "version"
	qDrivers         = "drivers"
	qCASecret        = "ca-secret"
	qMgmtEndpoint    = "management-endpoint"
	qMgmtSecret      = "management-secret"
	qDowntime        = "permissible-downtime"
	qOfflineGrace    = "offline-grace"
	qMaxParallel     = "max-parallel"
	qPerZone         = "per-zone"
	qHealTimeout     = "heal-timeout"
)

// unsetAnswer leaves an optional field unset even when its question
// offers a default.
const unsetAnswer = "-"

// question is one thing init asks. Its answer sets the fields under
// paths (field paths without list indices, as admission names them); an
// admission error on one of them is that question's to fix.
type question struct {
	key    string
	prompt string
	// usage is the flag's help.
	usage string
	// applies says whether the question is asked given the answers so
	// far (the mode decides most); nil means always.
	applies func(answers) bool
	paths   []string
}

// answers are the answers by question key; a missing or empty answer
// leaves its fields unset.
type answers map[string]string

func (a answers) mode() string { return a[qMode] }

func notExternal(a answers) bool { return a.mode() != string(operatorv1alpha1.ClusterModeExternal) }
func manual(a answers) bool      { return a.mode() == string(operatorv1alpha1.ClusterModeManual) }
func automatic(a answers) bool   { return a.mode() == string(operatorv1alpha1.ClusterModeAutomatic) }
func external(a answers) bool    { return !notExternal(a) }

// clusterModes are the values of spec.mode, in the order offered.
var clusterModes = []string{string(operatorv1alpha1.ClusterModeManual), string(operatorv1alpha1.ClusterModeAutomatic), string(operatorv1alpha1.ClusterModeExternal)}

// initQuestions are init's questions in the order asked. Namespace and
// name come first: every dry-run create needs them.
var initQuestions = []question{
	{key: qNamespace, prompt: "Namespace", paths: []string{"metadata.namespace"}},
	{key: qName, prompt: "Cluster name", usage: "name of the GlusterCluster", paths: []string{"metadata.name", "metadata"}},
	{key: qMode, prompt: "Mode (" + strings.Join(clusterModes, ", ") + ")", usage: "spec.mode: " + strings.Join(clusterModes, ", "), paths: []string{"spec.mode"}},
	{key: qZones, prompt: "Zones, comma-separated (one node template each)", usage: "failure zones, comma-separated: one spec.nodeTemplates entry per zone (default: the zones of the Kubernetes nodes)",
		applies: notExternal, paths: []string{"spec.nodeTemplates", "spec.nodeTemplates.name", "spec.nodeTemplates.zone"}},
	{key: qNodesPerZone, prompt: "Gluster servers per zone", usage: "spec.nodeTemplates[].nodes (manual mode)",
		applies: manual, paths: []string{"spec.nodeTemplates.nodes"}},
	{key: qMinNodesPerZone, prompt: "Fewest Gluster servers per zone", usage: "spec.nodeTemplates[].minNodes (automatic mode)",
		applies: automatic, paths: []string{"spec.nodeTemplates.minNodes"}},
	{key: qMaxNodesPerZone, prompt: "Most Gluster servers per zone", usage: "spec.nodeTemplates[].maxNodes (automatic mode; default: the Kubernetes nodes of the smallest zone)",
		applies: automatic, paths: []string{"spec.nodeTemplates.maxNodes"}},
	{key: qExternalNodes, prompt: "Addresses of the pool's servers, comma-separated", usage: "spec.external.nodes[].address, comma-separated (external mode)",
		applies: external, paths: []string{"spec.external", "spec.external.nodes", "spec.external.nodes.address"}},
	{key: qStorageClass, prompt: "StorageClass of the brick claims", usage: "spec.nodeTemplates[].storage.storageClassName (default: the cluster's default StorageClass)",
		applies: notExternal, paths: []string{"spec.nodeTemplates.storage.storageClassName"}},
	{key: qCapacity, prompt: "Capacity of each brick claim", usage: "spec.nodeTemplates[].storage.capacity, such as 500Gi",
		applies: notExternal, paths: []string{"spec.nodeTemplates.storage", "spec.nodeTemplates.storage.capacity"}},
	{key: qDeviceCount, prompt: "Brick claims per server", usage: "spec.nodeTemplates[].storage.deviceCount",
		applies: notExternal, paths: []string{"spec.nodeTemplates.storage.deviceCount"}},
	{key: qImage, prompt: "Gluster server image, empty for the pinned GD2 image", usage: "spec.gluster.image (default none: the GD2 image anthill pins, docs/install.md)",
		applies: notExternal, paths: []string{"spec.gluster", "spec.gluster.image"}},
	{key: qVersion, prompt: "Gluster version", usage: "spec.gluster.version, a semantic version", paths: []string{"spec.gluster.version"}},
	{key: qDrivers, prompt: "CSI drivers (file)", usage: "spec.drivers: file (block is not available, docs/csi.md)", paths: []string{"spec.drivers", "spec.csi"}},
	{key: qCASecret, prompt: "TLS: Secret holding the CA (tls.crt, tls.key), empty for none", usage: "spec.caSecretRef.name: the CA Secret that turns TLS on (default none)",
		paths: []string{"spec.caSecretRef", "spec.caSecretRef.name"}},
	{key: qMgmtEndpoint, prompt: "GD2 REST endpoint for an operator outside the cluster network, empty for the cluster's Service",
		usage: "spec.management.endpoint: base URL of GD2's REST API (default the cluster's management Service)", paths: []string{"spec.management", "spec.management.endpoint"}},
	{key: qMgmtSecret, prompt: "Secret holding GD2's shared secret (key secret), empty for the one the operator creates",
		usage: "spec.management.authSecretRef.name (default the Secret the operator creates)", paths: []string{"spec.management.authSecretRef", "spec.management.authSecretRef.name"}},
	{key: qDowntime, prompt: "Failure policy: downtime before a server is declared failed", usage: "spec.failurePolicy.permissibleDowntime, a duration",
		applies: notExternal, paths: []string{"spec.failurePolicy", "spec.failurePolicy.permissibleDowntime"}},
	{key: qOfflineGrace, prompt: "Failure policy: grace before an unreachable server is Offline", usage: "spec.failurePolicy.offlineGrace, a duration (default the API's, 30s)",
		applies: notExternal, paths: []string{"spec.failurePolicy.offlineGrace"}},
	{key: qMaxParallel, prompt: "Upgrade policy: servers upgraded together", usage: "spec.upgradePolicy.maxParallel",
		applies: notExternal, paths: []string{"spec.upgradePolicy", "spec.upgradePolicy.maxParallel"}},
	{key: qPerZone, prompt: "Upgrade policy: one zone at a time (true/false)", usage: "spec.upgradePolicy.perZone: true or false",
		applies: notExternal, paths: []string{"spec.upgradePolicy.perZone"}},
	{key: qHealTimeout, prompt: "Upgrade policy: heal timeout per server", usage: "spec.upgradePolicy.healTimeout, a duration",
		applies: notExternal, paths: []string{"spec.upgradePolicy.healTimeout"}},
}

// questionIndex is the position of key in initQuestions, -1 if none.
func questionIndex(key string) int {
	for i, q := range initQuestions {
		if q.key == key {
			return i
		}
	}
	return -1
}

var listIndex = regexp.MustCompile(`\[[^\]]*\]`)

// questionFor is the key of the question whose answer set the field at
// path, as admission names it ("spec.nodeTemplates[0].nodes"): the
// question with the longest of its paths that path starts with. Empty
// when no question sets it.
func questionFor(path string) string {
	path = strings.TrimPrefix(listIndex.ReplaceAllString(path, ""), ".")
	best, bestLen := "", -1
	for _, q := range initQuestions {
		for _, p := range q.paths {
			if (path == p || strings.HasPrefix(path, p+".")) && len(p) > bestLen {
				best, bestLen = q.key, len(p)
			}
		}
	}
	return best
}

// splitList splits a comma- or space-separated answer.
func splitList(s string) []string {
	return strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
}

// number is an integer answer as a JSON number, anything else as the
// string typed: admission then says what it expects.
func number(s string) any {
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n
	}
	return s
}

// boolean is a yes/no answer as a JSON boolean, anything else as typed.
func boolean(s string) any {
	switch strings.ToLower(s) {
	case "y", "yes", "true":
		return true
	case "n", "no", "false":
		return false
	}
	return s
}

// set is an answer that sets its field: not empty, not unsetAnswer.
func (a answers) set(key string) (string, bool) {
	v := a[key]
	return v, v != "" && v != unsetAnswer
}

// clusterObject is the GlusterCluster the answers describe, as the JSON
// object sent to the API server. It is untyped on purpose: an answer
// that is not of its field's type is sent as typed, and admission's
// message says what the field takes.
func clusterObject(a answers) map[string]any {
	spec := map[string]any{}
	if v, ok := a.set(qMode); ok {
		spec["mode"] = v
	}
	if notExternal(a) {
		var templates []any
		for _, zone := range splitList(a[qZones]) {
			storage := map[string]any{}
			if v, ok := a.set(qCapacity); ok {
				storage["capacity"] = v
			}
			if v, ok := a.set(qStorageClass); ok {
				storage["storageClassName"] = v
			}
			if v, ok := a.set(qDeviceCount); ok {
				storage["deviceCount"] = number(v)
			}
			t := map[string]any{"name": zone, "zone": zone, "storage": storage}
			for key, field := range map[string]string{qNodesPerZone: "nodes", qMinNodesPerZone: "minNodes", qMaxNodesPerZone: "maxNodes"} {
				if v, ok := a.set(key); ok && initQuestions[questionIndex(key)].applies(a) {
					t[field] = number(v)
				}
			}
			templates = append(templates, t)
		}
		if len(templates) > 0 {
			spec["nodeTemplates"] = templates
		}
	} else {
		var nodes []any
		for _, addr := range splitList(a[qExternalNodes]) {
			nodes = append(nodes, map[string]any{"address": addr})
		}
		if len(nodes) > 0 {
			spec["external"] = map[string]any{"nodes": nodes}
		}
	}
	gluster := map[string]any{}
	if v, ok := a.set(qImage); ok && notExternal(a) {
		gluster["image"] = v
	}
	if v, ok := a.set(qVersion); ok {
		gluster["version"] = v
	}
	if len(gluster) > 0 {
		spec["gluster"] = gluster
	}
	if v, ok := a.set(qDrivers); ok {
		var drivers []any
		for _, d := range splitList(v) {
			drivers = append(drivers, d)
		}
		spec["drivers"] = drivers
	}
	if v, ok := a.set(qCASecret); ok {
		spec["caSecretRef"] = map[string]any{"name": v}
	}
	management := map[string]any{}
	if v, ok := a.set(qMgmtEndpoint); ok {
		management["endpoint"] = v
	}
	if v, ok := a.set(qMgmtSecret); ok {
		management["authSecretRef"] = map[string]any{"name": v}
	}
	if len(management) > 0 {
		spec["management"] = management
	}
	if notExternal(a) {
		failure := map[string]any{}
		if v, ok := a.set(qDowntime); ok {
			failure["permissibleDowntime"] = v
		}
		if v, ok := a.set(qOfflineGrace); ok {
			failure["offlineGrace"] = v
		}
		if len(failure) > 0 {
			spec["failurePolicy"] = failure
		}
		upgrade := map[string]any{}
		if v, ok := a.set(qMaxParallel); ok {
			upgrade["maxParallel"] = number(v)
		}
		if v, ok := a.set(qPerZone); ok {
			upgrade["perZone"] = boolean(v)
		}
		if v, ok := a.set(qHealTimeout); ok {
			upgrade["healTimeout"] = v
		}
		if len(upgrade) > 0 {
			spec["upgradePolicy"] = upgrade
		}
	}
	meta := map[string]any{}
	if v, ok := a.set(qName); ok {
		meta["name"] = v
	}
	if v, ok := a.set(qNamespace); ok {
		meta["namespace"] = v
	}
	return map[string]any{
		"apiVersion": operatorv1alpha1.SchemeGroupVersion.String(),
		"kind":       kindGlusterCluster,
		"metadata":   meta,
		"spec":       spec,
	}
}
