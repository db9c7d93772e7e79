package states

// The ledger actions: the lasting changes an action makes, each put on
// record in the ledger before the action runs (the status ledger of the
// GlusterNode or GlusterCluster). The API names the same strings
// (kube/apis LedgerAction*), for the admins who read the ledger.
const (
	LedgerReplaceBrick      = "replaceBrick"
	LedgerHealReplacement   = "healReplacement"
	LedgerDeletePeer        = "deletePeer"
	LedgerDeleteWorkload    = "deleteWorkload"
	LedgerRollWorkload      = "rollWorkload"
	LedgerDisableDevices    = "disableDevices"
	LedgerEnableDevices     = "enableDevices"
	LedgerEvictLostPod      = "evictLostPod"
	LedgerCreateNodes       = "createNodes"
	LedgerDecommissionNode  = "decommissionNode"
	LedgerEnsureCSIDrivers  = "ensureCSIDrivers"
	LedgerRollCSIDrivers    = "rollCSIDrivers"
	LedgerSetClusterOptions = "setClusterOptions"
	LedgerForceStartBricks  = "forceStartBricks"
)

// Record says what goes on record before the action of an event or a
// step runs: the ledger actions its lasting changes are recorded as, or,
// for an action that goes on no record, why it needs none.
type Record struct {
	// Ledger: the ledger actions of the action's lasting changes (a
	// scale step creates nodes or asks one to decommission).
	Ledger []string
	// Unrecorded: why the action goes on no record; set exactly when
	// Ledger is empty.
	Unrecorded string
}

// recorded is a Record of lasting changes.
func recorded(actions ...string) Record { return Record{Ledger: actions} }

// unrecorded is a Record of an action that needs none, with the reason.
func unrecorded(why string) Record { return Record{Unrecorded: why} }

// Reasons an action goes on no record.
const (
	whyOwnObjects   = "creates or updates the machine's own Kubernetes objects from the spec, which says the same thing again on every sync"
	whyPoolGrows    = "adds to the pool (a peer, its devices); GD2's own lists show it, and nothing held is moved or removed"
	whyHealTrigger  = "asks GD2's self-heal daemons to crawl; it moves, removes and stops nothing"
	whyBudgets      = "rewrites the PodDisruptionBudgets from the machine's state, which status holds"
	whyDeletion     = "removes what the GlusterCluster's own deletion asked for; its deletionTimestamp is the record, and the cluster's ledger goes with it"
	whyCertificates = "issues the cluster's certificates into its Secrets, which record their own expiry and issuer"
)

// records is, per machine, how every event and step with an action is
// classified. TestEveryActionIsClassified (transitions) holds it to the
// actions registered there, both ways; TestEveryActingEventAndStepIsClassified
// to the events and steps whose doc says they act, and each lasting change
// to its row in its machine's change table (nodeChanges and its kin).
var records = map[string]map[string]Record{
	NodeMachine: {
		string(NodeProvision):        unrecorded(whyOwnObjects),
		string(NodeJoin):             unrecorded(whyPoolGrows),
		string(NodeActivate):         unrecorded(whyPoolGrows),
		string(NodeEnterMaintenance): recorded(LedgerDisableDevices),
		string(NodeDrain):            recorded(LedgerDisableDevices),
		string(NodeRestart):          recorded(LedgerDisableDevices),
		string(NodeResume):           recorded(LedgerEnableDevices),
		string(NodeDisableDevices):   recorded(LedgerDisableDevices),
		string(NodeEnableDevices):    recorded(LedgerEnableDevices),
		string(NodeRollWorkload):     recorded(LedgerRollWorkload),
		string(NodeMoveBrick):        recorded(LedgerReplaceBrick),
		string(NodeHealReplacement):  recorded(LedgerHealReplacement),
		string(NodeDeletePeer):       recorded(LedgerDeletePeer),
		string(NodeDeleteWorkload):   recorded(LedgerDeleteWorkload),
		string(NodeEvictLostPod):     recorded(LedgerEvictLostPod),
	},
	ClusterMachine: {
		string(ClusterProvision):         unrecorded(whyOwnObjects),
		string(ClusterReconfigure):       unrecorded(whyOwnObjects),
		string(ClusterSyncEndpoints):     unrecorded(whyOwnObjects),
		string(ClusterScaleNodes):        recorded(LedgerCreateNodes, LedgerDecommissionNode),
		string(ClusterEnsureDrivers):     recorded(LedgerEnsureCSIDrivers),
		string(ClusterApplyOptions):      recorded(LedgerSetClusterOptions),
		string(ClusterDeleteNodes):       unrecorded(whyDeletion),
		string(ClusterDeleteInfra):       unrecorded(whyDeletion),
		string(ClusterIssueCertificates): unrecorded(whyCertificates),
	},
	UpgradeMachine: {
		string(UpgradeRollClients): recorded(LedgerRollCSIDrivers),
	},
	HealMachine: {
		string(HealStartHeal):        unrecorded(whyHealTrigger),
		string(HealForceStartBricks): recorded(LedgerForceStartBricks),
	},
	DisruptionMachine: {
		string(DisruptionOpenZone):     unrecorded(whyBudgets),
		string(DisruptionDisrupted):    unrecorded(whyBudgets),
		string(DisruptionRecovered):    unrecorded(whyBudgets),
		string(DisruptionLock):         unrecorded(whyBudgets),
		string(DisruptionApplyBudgets): unrecorded(whyBudgets),
	},
}

// RecordOf is how machine's event or step name (an fsm.Event, or an
// fsm.Step as its string) is classified; false when it is not.
func RecordOf(machine, name string) (Record, bool) {
	r, ok := records[machine][name]
	return r, ok
}

// Classified lists, per machine, the events and steps records classifies.
func Classified() map[string][]string {
	out := map[string][]string{}
	for m, byName := range records {
		for name := range byName {
			out[m] = append(out[m], name)
		}
	}
	return out
}
