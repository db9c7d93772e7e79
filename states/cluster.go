package states

import (
	"slices"
	"time"

	"github.com/gluster/anthill/fsm"
)

// Cluster phases; full contract in ClusterDefinition.
const (
	// ClusterPending: new GlusterCluster; left by provision or delete.
	ClusterPending fsm.State = "Pending"
	// ClusterProvisioning: shared infrastructure and first nodes; left by converged, degrade, delete.
	ClusterProvisioning fsm.State = "Provisioning"
	// ClusterReady: healthy and idle; left by degrade, scale, upgrade, delete.
	ClusterReady fsm.State = "Ready"
	// ClusterDegraded: serving with reduced health; left by converged, scale, upgrade, delete.
	ClusterDegraded fsm.State = "Degraded"
	// ClusterScaling: node count changing; left by converged, degrade, delete.
	ClusterScaling fsm.State = "Scaling"
	// ClusterUpgrading: upgrade machine active; left by converged, degrade, delete.
	ClusterUpgrading fsm.State = "Upgrading"
	// ClusterReconfiguring: external mode only, the pool's addresses
	// changed; left by converged, degrade, delete.
	ClusterReconfiguring fsm.State = "Reconfiguring"
	// ClusterDeleting: finalizer teardown, refused while Gluster PVs exist; left by finish.
	ClusterDeleting fsm.State = "Deleting"
	// ClusterDeleted: terminal.
	ClusterDeleted fsm.State = "Deleted"
)

// Cluster events and steps; documented in ClusterDefinition.
const (
	ClusterProvision fsm.Event = "provision"
	ClusterConverged fsm.Event = "converged"
	ClusterDegrade   fsm.Event = "degrade"
	ClusterScale     fsm.Event = "scale"
	ClusterUpgrade   fsm.Event = "upgrade"
	ClusterDelete    fsm.Event = "delete"
	ClusterFinish    fsm.Event = "finish"
	// ClusterReconfigure is external mode only.
	ClusterReconfigure fsm.Event = "reconfigure"

	// Steps.
	ClusterScaleNodes  fsm.Step = "scaleNodes"
	ClusterDeleteNodes fsm.Step = "deleteNodes"
	ClusterDeleteInfra fsm.Step = "deleteInfra"
	// ClusterEnsureDrivers creates missing CSI driver objects.
	ClusterEnsureDrivers fsm.Step = "ensureDrivers"
	// ClusterSyncEndpoints is external mode only.
	ClusterSyncEndpoints fsm.Step = "syncEndpoints"
	// ClusterApplyOptions sets spec.clusterOptions in GD2.
	ClusterApplyOptions fsm.Step = "applyOptions"
	// ClusterIssueCertificates issues, renews or re-signs the cluster's
	// TLS certificates (spec.caSecretRef).
	ClusterIssueCertificates fsm.Step = "issueCertificates"
)

// ClusterMachine is the machine name used in logs, metrics and docs.
const ClusterMachine = "cluster"

// ClusterDefinition returns the cluster machine (a fresh copy per call).
func ClusterDefinition() *fsm.Definition {
	return &fsm.Definition{
		Machine: ClusterMachine,
		Doc: "One machine per GlusterCluster, persisted in `GlusterCluster.status.phase`. It owns what every " +
			"GD2 node needs before it starts — the cluster's one shared GD2 auth secret (GD2 would otherwise " +
			"generate a different secret on each node), the small etcd StatefulSet GD2 keeps its state in, the " +
			"headless Service that gives nodes stable names, and the management Service the operator talks " +
			"to — the CSI drivers that serve its volumes to pods (`spec.drivers`), " +
			"and the set of GlusterNodes matching `spec.nodeCount`. Ready and Degraded are the steady " +
			"phases; Scaling and Upgrading show an activity in progress, and the Degraded condition is kept " +
			"beside every phase. In external mode (`spec.mode: external`) the pool runs outside Kubernetes and " +
			"the machine owns only the management Service, without a selector, and its EndpointSlices listing " +
			"`spec.external.nodes`: no auth secret, no etcd, no headless Service, no GlusterNode and no pod is " +
			"ever created, no GD2 peer or volume is ever deleted, and Scaling is never entered; Reconfiguring " +
			"is entered instead when the addresses change. While `spec.paused` is set no GlusterNode is created, " +
			"asked to decommission or deleted: `scale`, `scaleNodes`, `deleteNodes` and `deleteInfra` are held and " +
			"the machine waits with reason `Paused`, naming the node counts it would reconcile. Health is still " +
			"followed (`converged`, `degrade`), `delete` is still entered (the teardown then holds until the " +
			"pause is cleared; clearing `spec.paused` on a GlusterCluster being deleted resumes it), `upgrade` " +
			"still shows the upgrade machine, which holds itself, and `ensureDrivers` still creates missing CSI " +
			"driver objects, which change no server. External mode is unaffected: anthill changes none of its servers.",
		Initial: ClusterPending,
		States: []fsm.StateDoc{
			{Name: ClusterPending, Doc: "Entered when the GlusterCluster is created. Left by `provision` at once, " +
				"or `delete` if it is deleted first."},
			{Name: ClusterProvisioning, Doc: "Entered by `provision`, whose action created the auth secret, the etcd " +
				"StatefulSet and the two Services. The `scaleNodes` step creates the first GlusterNodes as soon as " +
				"those objects exist, without waiting for etcd: claims bind and pods schedule while etcd starts, " +
				"and no node joins before GD2 answers (held with reason `Paused` while paused); then the `ensureDrivers` step creates the CSI drivers. With `spec.caSecretRef` the `issueCertificates` step first issues the certificates that are due (the etcd, CSI and each node's); no node is created while the CA secret is unusable. Waits for etcd to be ready, GD2 to answer and every node to be Online. Left by `converged`, by `degrade` if " +
				"the infrastructure is ready but some node is still not Online after the provisioning grace " +
				"period, or by `delete`. External mode: the `syncEndpoints` step rewrites the management Service " +
				"and its EndpointSlices while they differ from `spec.external.nodes`; no node is created; " +
				"left by `converged` or `degrade` as soon as GD2 answers at one of the addresses, or by " +
				"`degrade` if it still does not after the provisioning grace period."},
			{Name: ClusterReady, Doc: "Entered by `converged`: GD2 answers, every node is Online or in maintenance, " +
				"no node is failed or abandoned, and every volume is Healthy. Left by `degrade`, `scale` when the " +
				"node count differs from `spec.nodeCount`, `upgrade` when the upgrade machine becomes active, or " +
				"`delete`. While paused a different node count does not fire `scale`: the cluster waits with " +
				"reason `Paused` (health still moves it to Degraded). The `ensureDrivers` step recreates a missing CSI driver object, or adds the block " +
				"driver when `block` joins `spec.drivers`; it also creates, updates, recreates or deletes the cluster's " +
				"StorageClasses until they match `spec.csi.storageClasses` (see docs/csi.md), and the VolumeSnapshotClass of `spec.csi.snapshots` once Kubernetes serves the snapshot API; until it does, a steady cluster waits with a Warning, reason `SnapshotAPIMissing`, and looks again every minute. The `issueCertificates` step renews or re-signs due TLS certificates (never while Upgrading). The `applyOptions` step sets `spec.clusterOptions` " +
				"in GD2 where GD2's value differs (not while paused). External mode: GD2 answers at one of " +
				"`spec.external.nodes` and every volume is Healthy (there are no nodes to count); left by " +
				"`reconfigure` when the EndpointSlices differ from the addresses, never by `scale`."},
			{Name: ClusterDegraded, Doc: "Entered by `degrade` when a node is Offline, Failed or Abandoned, a volume " +
				"is not Healthy, or GD2 does not answer. The cluster keeps serving. Left by `converged`, `scale` " +
				"(adding nodes is how lost capacity comes back), `upgrade` (the upgrade machine's own checks will " +
				"block it if health requires), or `delete`; `scale` is held while paused, as in Ready. External mode: `reconfigure` instead of `scale`. The " +
				"`ensureDrivers` step creates missing CSI driver objects here too: a degraded cluster still serves " +
				"volumes; the `applyOptions` step sets differing `spec.clusterOptions` here too, and the `issueCertificates` step issues due certificates."},
			{Name: ClusterScaling, Doc: "Entered by `scale`. The `scaleNodes` step creates missing GlusterNodes, or " +
				"asks surplus nodes to decommission (the node machine drains them safely). Waits until the node " +
				"count matches, no node is still joining and no node is still leaving; the `ensureDrivers` step " +
				"creates missing CSI driver objects meanwhile, and the `issueCertificates` step the new nodes' certificates. While paused `scaleNodes` is held and the phase " +
				"stays (reason `Paused`) until the count matches and no node is joining or leaving. Left by `converged`, `degrade` if the cluster is " +
				"unhealthy once scaling ends, or `delete`. Never entered in external mode."},
			{Name: ClusterUpgrading, Doc: "Entered by `upgrade` while the upgrade machine is anywhere but Idle or " +
				"Complete (including Blocked and Paused, when servers may run mixed versions). Left by " +
				"`converged` or `degrade` when the upgrade machine is done, or by `delete`."},
			{Name: ClusterReconfiguring, Doc: "External mode only. Entered by `reconfigure`, whose action wrote the " +
				"management Service and its EndpointSlices from `spec.external.nodes`. The `syncEndpoints` step " +
				"writes them again while the observed slices still differ (a failed or interrupted write, or " +
				"another change meanwhile). Left by `converged` or `degrade` once they match, or by `delete`."},
			{Name: ClusterDeleting, Doc: "Entered by `delete` when the GlusterCluster is deleted (its finalizer " +
				"holds it). Refuses to tear anything down while PersistentVolumes provisioned from the cluster " +
				"exist (its conditions and a Warning Event name them), and keeps reconciling node and heal health " +
				"meanwhile. Then the `deleteNodes` step deletes the GlusterNodes one at a time (each drains and " +
				"detaches), and the `deleteInfra` step removes the CSI drivers (cluster-scoped objects included), " +
				"the Services, etcd and the secret; while paused neither step runs (reason `Paused`). Left by `finish` when all of it is gone. External mode: the " +
				"same hold on PersistentVolumes, then `deleteInfra` removes only the CSI drivers, the management " +
				"Service and its EndpointSlices; no GlusterNode is deleted and no GD2 peer or volume is touched."},
			{Name: ClusterDeleted, Doc: "Entered by `finish`. Terminal; the finalizer may be released."},
		},
		Events: []fsm.EventDoc{
			{Name: ClusterProvision, Doc: "Fires on a new GlusterCluster. Action: create the auth secret, the etcd StatefulSet and the headless and management Services, each only if absent; in external mode only the management Service, without a selector, and its EndpointSlices."},
			{Name: ClusterConverged, Doc: "Fires when nothing is in progress and the cluster is healthy. No action."},
			{Name: ClusterDegrade, Doc: "Fires when nothing is in progress and the cluster is not healthy. No action."},
			{Name: ClusterScale, Doc: "Fires when the number of GlusterNodes differs from `spec.nodeCount`. In automatic mode that count is the autoscaler's: each template's count recorded in `status.autoscaling`, within `minNodes`..`maxNodes`, which the autoscaler moves by one node at a time on the template's free capacity (see `Autoscale`); a step it takes fires with its reason, `ScalingUp` or `ScalingDown`. No action; the `scaleNodes` step does the work."},
			{Name: ClusterUpgrade, Doc: "Fires when the upgrade machine becomes active. No action."},
			{Name: ClusterDelete, Doc: "Fires when the GlusterCluster is deleted. No action."},
			{Name: ClusterFinish, Doc: "Fires when no GlusterNode and no shared infrastructure is left. No action."},
			{Name: ClusterReconfigure, Doc: "External mode: fires when the management Service or its EndpointSlices differ from `spec.external.nodes` (an address added, changed or removed, a zone changed, `spec.external.port` changed, or an object edited or deleted by hand). Action: write them from the spec — create what is missing, update what differs, delete slices of an address type no longer used; unchanged objects are not written."},
		},
		Transitions: []fsm.Transition{
			{Event: ClusterProvision, From: []fsm.State{ClusterPending}, To: ClusterProvisioning},
			{Event: ClusterConverged, From: []fsm.State{ClusterProvisioning, ClusterDegraded, ClusterScaling, ClusterUpgrading, ClusterReconfiguring}, To: ClusterReady},
			{Event: ClusterDegrade, From: []fsm.State{ClusterProvisioning, ClusterReady, ClusterScaling, ClusterUpgrading, ClusterReconfiguring}, To: ClusterDegraded},
			{Event: ClusterReconfigure, From: []fsm.State{ClusterReady, ClusterDegraded}, To: ClusterReconfiguring},
			{Event: ClusterScale, From: []fsm.State{ClusterReady, ClusterDegraded}, To: ClusterScaling},
			{Event: ClusterUpgrade, From: []fsm.State{ClusterReady, ClusterDegraded}, To: ClusterUpgrading},
			{Event: ClusterDelete, From: []fsm.State{ClusterPending, ClusterProvisioning, ClusterReady, ClusterDegraded, ClusterScaling, ClusterUpgrading, ClusterReconfiguring}, To: ClusterDeleting},
			{Event: ClusterFinish, From: []fsm.State{ClusterDeleting}, To: ClusterDeleted},
		},
		Steps: []fsm.StepDoc{
			{Name: ClusterScaleNodes, In: []fsm.State{ClusterProvisioning, ClusterScaling}, Doc: "Create the " +
				"missing GlusterNodes, or put a decommission request on the surplus ones, so that the count " +
				"matches `spec.nodeCount`. Idempotent: it works from the difference it observes, and a node " +
				"already leaving is not counted."},
			{Name: ClusterDeleteNodes, In: []fsm.State{ClusterDeleting}, Doc: "Delete the GlusterNodes of the " +
				"cluster one at a time (each leaves the management Service to be detached, so GD2 must keep a " +
				"member serving); each node machine drains and detaches its node before its finalizer is " +
				"released. GD2 cannot detach the last peer, so once the last node has drained and reached " +
				"Detaching the step deletes its pod and claims and releases its finalizer itself."},
			{Name: ClusterDeleteInfra, In: []fsm.State{ClusterDeleting}, Doc: "Delete every CSI driver object of the " +
				"cluster (controllers, node plugins, block targets, service accounts, and the cluster-scoped " +
				"CSIDriver, ClusterRole and ClusterRoleBinding, found by their cluster and namespace labels), the " +
				"management and headless Services, the etcd StatefulSet and its PVCs, and the auth secret (in " +
				"external mode: the CSI drivers, the management Service and its EndpointSlices). Objects already " +
				"gone count as deleted."},
			{Name: ClusterEnsureDrivers, In: []fsm.State{ClusterProvisioning, ClusterReady, ClusterDegraded, ClusterScaling},
				Doc: "Fires when a CSI driver object the spec asks for (`spec.drivers`, empty meaning file) is " +
					"missing, in external mode too: create each missing object (controller Deployment, node " +
					"plugin DaemonSet, CSIDriver, service accounts and RBAC, and for block the gluster-blockd " +
					"target Deployments). It only creates: an existing object, and the version it runs, is never " +
					"changed here — that is the upgrade machine's `rollClients`. A new object gets `spec.csi.version`, " +
					"else the version the cluster's node plugins already run, else `spec.gluster.version`. Not " +
					"run while Upgrading, so that no client is created newer than a server being rolled; adding " +
					"`block` then waits for the upgrade to end."},
			{Name: ClusterApplyOptions, In: []fsm.State{ClusterReady, ClusterDegraded}, Doc: "Runs when GD2 " +
				"answers and a key of `spec.clusterOptions` has another value in GD2's cluster options (the spec " +
				"changed, or someone changed the option in GD2 by hand): set those keys in GD2. Action: one " +
				"`POST /v1/cluster/options` with the differing keys; GD2 refuses an unknown key (500) or a bad " +
				"value (400), and the step then fails with that reason and is retried with backoff. Idempotent: " +
				"setting a value GD2 already has changes nothing. A key removed from the spec keeps the value GD2 " +
				"has (GD2 cannot unset an option). Not run for an external cluster, whose pool anthill does not " +
				"change, nor while the cluster is Upgrading or Scaling, paused (reason `Paused`) or " +
				"`spec.automation.clusterOptions` is false (reason `AutomationOff`)."},
			{Name: ClusterIssueCertificates, In: []fsm.State{ClusterProvisioning, ClusterReady, ClusterDegraded, ClusterScaling}, Doc: "Runs " +
				"when `spec.caSecretRef` is set and a certificate is due (see docs/security.md): the trust bundle " +
				"(`<cluster>-tls-trust`) lacks the current CA or still holds a previous one no server needs, or the " +
				"etcd, CSI or a node's certificate Secret is missing, unreadable, signed by another CA, issued for other " +
				"names or usage, or within its renewal lead time. Action: write the trust bundle first (during a CA " +
				"rotation it holds both CAs), then issue each due certificate into its Secret, owned by the cluster, " +
				"and record a node's certificate hash in its `operator.gluster.org/certificate` annotation, which is " +
				"part of the node's pod template: the new certificate reaches GD2 through the upgrade machine's " +
				"heal-gated rollout. External mode: only the trust bundle, from the CA certificate alone. Not run " +
				"while the CA secret is unusable: the machine then waits with reason `CAInvalid`, naming the Secret " +
				"and the problem (Pending does not provision)."},
			{Name: ClusterSyncEndpoints, In: []fsm.State{ClusterProvisioning, ClusterReconfiguring}, Doc: "External mode " +
				"only. Write the management Service (no selector, port 24007 named gd2) and one EndpointSlice per " +
				"address type in `spec.external.nodes` (IPv4, IPv6, FQDN for host names), each endpoint with its " +
				"zone, exactly as `reconfigure` does. Idempotent: it compares the live objects with the spec and " +
				"writes only what differs."},
		},
		Terminal: []fsm.State{ClusterDeleted},
	}
}

// ClusterSnapshot is what DecideCluster needs about one GlusterCluster.
type ClusterSnapshot struct {
	State      fsm.State
	StateSince time.Time
	Now        time.Time

	// Deleting: the GlusterCluster has a deletion timestamp.
	Deleting bool
	// Off: what spec.automation switched off (ClusterOptions is the
	// cluster machine's).
	Off AutomationOff
	// Paused: spec.paused is set; the machine then creates, decommissions
	// and deletes no GlusterNode (see ClusterDefinition).
	Paused bool
	// External: spec.mode is external; DecideCluster then takes the
	// external paths (see decideExternal).
	External bool
	// EndpointsInSync (external mode): the management Service and its
	// EndpointSlices match spec.external.nodes.
	EndpointsInSync bool
	// EndpointsDiff (external mode) says briefly how they differ, for the
	// transition message.
	EndpointsDiff string

	// InfraCreated: the auth secret, the Services and the etcd StatefulSet
	// all exist (etcd may still be starting).
	InfraCreated bool
	// InfraReady: InfraCreated, and etcd is ready (external mode: the
	// management Service exists).
	InfraReady bool
	// InfraExists: any of the shared infrastructure, CSI driver objects
	// included, still exists.
	InfraExists bool
	// GD2Reachable: the management Service answered this sync.
	GD2Reachable bool
	// GD2Untrusted: GD2 did not answer because the certificate it
	// presented is not verified by the cluster's trust bundle; a sentence
	// saying so and why (names and issuers only).
	GD2Untrusted string

	// DesiredNodes: spec.nodeCount.
	DesiredNodes int
	// AutoscaleReason and AutoscaleMessage (automatic mode) are set when
	// the autoscaler took a step this sync (Autoscale): the scale it asks
	// for fires with them.
	AutoscaleReason, AutoscaleMessage string
	// NodesTotal: GlusterNodes that count toward nodeCount (NodeCounts) —
	// every node not leaving or Deleted, not being deleted and without a
	// decommission request.
	NodesTotal int
	// NodesAll: every GlusterNode of the cluster, leaving and Deleted ones
	// included.
	NodesAll int
	// NodesOnline: counted nodes Online or being upgraded (NodeClassOnline,
	// NodeClassUpgrading). NodesMaintenance: counted nodes in Maintenance.
	NodesOnline      int
	NodesMaintenance int
	// NodesJoining: counted nodes in Pending, Provisioning or Joining.
	NodesJoining int
	// NodesLeaving: nodes in Draining, Abandoned, Detaching or Deleting
	// (NodeClassLeaving), counted or not; a Deleted node has left.
	NodesLeaving int
	// NodesUnhealthy: counted nodes in Offline or Failed.
	NodesUnhealthy int

	// VolumesUnhealthy: heal machines in anything but Healthy.
	VolumesUnhealthy int
	// GlusterPVs: PersistentVolumes provisioned from this cluster.
	GlusterPVs int
	// GlusterPVNames: the names of those PersistentVolumes, sorted, for
	// the message that holds the deletion.
	GlusterPVNames []string
	// CAProblem: spec.caSecretRef is set and its Secret cannot issue (or,
	// external mode, cannot be trusted); a sentence naming the Secret and
	// the problem.
	CAProblem string
	// CertificatesDue: the certificate Secrets to (re)issue, each with why
	// ("gc-a1b2c-tls (expiring)"), sorted.
	CertificatesDue []string
	// OptionsDiffer: the keys of spec.clusterOptions whose value GD2's
	// cluster options do not have (sorted; empty when GD2 was not read).
	OptionsDiffer []string
	// ClusterOptions: spec.clusterOptions, key to value (what an
	// applyOptions step sets and puts on record).
	ClusterOptions map[string]string
	// Scale: the plan of a scaleNodes step about to run, read live (see
	// ScaleOrder); nil until then.
	Scale *ScaleOrder
	// DriversMissing: the CSI driver objects the spec asks for that do not
	// exist, as "Kind name", and the StorageClasses that differ from the
	// spec, as "StorageClass name (what differs)", sorted; ensureDrivers
	// creates or reconciles them.
	DriversMissing []string
	// SnapshotAPIMissing: with spec.csi.snapshots.enabled, the resources
	// of snapshot.storage.k8s.io/v1 Kubernetes does not serve (read live),
	// in the order objects.SnapshotResources lists them.
	SnapshotAPIMissing []string
	// UpgradeActive: the upgrade machine is neither Idle nor Complete.
	UpgradeActive bool

	// ProvisionGrace: how long Provisioning may wait for every node before
	// the cluster reports Degraded instead.
	ProvisionGrace time.Duration
}

// OptionsDiffer returns, sorted, the keys of want whose value have does
// not hold (have is GD2's cluster options, key to current value).
func OptionsDiffer(want, have map[string]string) []string {
	var out []string
	for k, v := range want {
		if cur, ok := have[k]; !ok || cur != v {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
