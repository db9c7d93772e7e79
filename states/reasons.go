package states

// Reasons are CamelCase constants used as Decision.Reason, and from there as
// Kubernetes Event and condition reasons and as a bounded metric label. They
// are shared by all machines so that one reason means one thing everywhere.
const (
	ReasonUnknownState = "UnknownState"
	// ReasonNewerStatus: the object's status was written by an operator
	// with a newer status schema; nothing acts on it or writes it.
	ReasonNewerStatus       = "NewerStatus"
	ReasonGD2Unreachable    = "GD2Unreachable"
	ReasonPeerMissing       = "PeerMissing"
	ReasonSteady            = "Steady"
	ReasonDeletionRequested = "DeletionRequested"
	// ReasonPaused: spec.paused holds what the machine would do next.
	ReasonPaused = "Paused"

	// TLS (cluster machine).
	ReasonCAInvalid           = "CAInvalid"
	ReasonIssuingCertificates = "IssuingCertificates"
	// ReasonGD2Untrusted: GD2 presented a certificate the cluster's CA
	// does not verify.
	ReasonGD2Untrusted = "GD2Untrusted"

	// Node.
	ReasonProvisioning          = "Provisioning"
	ReasonWaitingForPod         = "WaitingForPod"
	ReasonWaitingForPoolSeed    = "WaitingForPoolSeed"
	ReasonPodReady              = "PodReady"
	ReasonWaitingForPeer        = "WaitingForPeer"
	ReasonPeerOnline            = "PeerOnline"
	ReasonPeerNotAlive          = "PeerNotAlive"
	ReasonPeerRecovered         = "PeerRecovered"
	ReasonPeerUnresponsive      = "PeerUnresponsive"
	ReasonPeerRecovering        = "PeerRecovering"
	ReasonDowntimeExceeded      = "DowntimeExceeded"
	ReasonWithinDowntime        = "WithinPermissibleDowntime"
	ReasonMaintenanceRequested  = "MaintenanceRequested"
	ReasonInMaintenance         = "InMaintenance"
	ReasonResumeRequested       = "ResumeRequested"
	ReasonDecommissionRequested = "DecommissionRequested"
	ReasonNodeFailed            = "NodeFailed"
	ReasonDrainBlocked          = "DrainBlocked"
	ReasonVolumeNodeDown        = "VolumeNodeDown"
	ReasonBricksUnmovable       = "BricksUnmovable"
	ReasonSoleHealedCopy        = "SoleHealedCopy"
	ReasonQuorumAtRisk          = "QuorumAtRisk"
	ReasonReplacementHealing    = "ReplacementHealing"
	ReasonMovingBrick           = "MovingBrick"
	ReasonHealingReplacement    = "HealingReplacement"
	ReasonDrained               = "Drained"
	ReasonDrainedPeerDead       = "DrainedPeerDead"
	ReasonAbandoned             = "Abandoned"
	ReasonDeletingPeer          = "DeletingPeer"
	ReasonPeerDeleted           = "PeerDeleted"
	ReasonLastPeer              = "LastPeer"
	ReasonBricksStillOnNode     = "BricksStillOnNode"
	ReasonDeletingWorkload      = "DeletingWorkload"
	ReasonWorkloadGone          = "WorkloadGone"
	ReasonUpgradeSelected       = "UpgradeSelected"
	ReasonUpgradeDeselected     = "UpgradeDeselected"
	ReasonSafeToStop            = "SafeToStop"
	ReasonBatchMemberFirst      = "BatchMemberFirst"
	ReasonRestarting            = "Restarting"
	ReasonRestartTimedOut       = "RestartTimedOut"
	ReasonRejoined              = "Rejoined"
	ReasonBricksOffline         = "BricksOffline"
	ReasonHealPending           = "HealPending"
	ReasonHealComplete          = "HealComplete"
	ReasonUpgradeBusy           = "UpgradeInProgress"
	ReasonEvictingLostPod       = "EvictingLostPod"
	ReasonLostPodStorageLocal   = "LostPodStorageLocal"
	ReasonLostPodGrace          = "LostPodGrace"

	// Heal.
	ReasonHealNotApplicable = "HealNotApplicable"
	ReasonVolumeNotStarted  = "VolumeNotStarted"
	ReasonHealInfoFailed    = "HealInfoUnavailable"
	ReasonSplitBrain        = "SplitBrain"
	ReasonEntriesPending    = "EntriesPending"
	ReasonBrickDown         = "BrickDown"
	ReasonHealTriggered     = "HealTriggered"
	ReasonSelfHealDisabled  = "SelfHealDisabled"
	ReasonHealProgressing   = "HealProgressing"
	ReasonHealStalled       = "HealStalled"
	ReasonHealthy           = "Healthy"
	// ReasonHealTriggerFailed: GD2 answered the heal trigger with its
	// code-2 selfheal.Heal failure (the RPC to the self-heal daemon of
	// some node failed). The daemons crawl on their own, so the heal is
	// watched in Healing as if the trigger had worked, and a stall
	// triggers it again.
	ReasonHealTriggerFailed = "HealTriggerFailed"
	// ReasonBricksNotStarted: bricks of the volume have been offline on a
	// live peer for failurePolicy.offlineGrace (GD2 started the peer
	// without mounting them), so the heal machine starts them with a
	// force-start-bricks volume start.
	ReasonBricksNotStarted = "BricksNotStarted"

	// Upgrade.
	ReasonUpgradeRequested     = "UpgradeRequested"
	ReasonNothingToUpgrade     = "NothingToUpgrade"
	ReasonUnpaused             = "Unpaused"
	ReasonUnsupportedPath      = "UnsupportedUpgradePath"
	ReasonClientNewerThanSrv   = "ClientNewerThanServer"
	ReasonNodesNotOnline       = "NodesNotOnline"
	ReasonValidated            = "Validated"
	ReasonTargetChanged        = "TargetChanged"
	ReasonStepTimedOut         = "UpgradeStepTimedOut"
	ReasonNodeUpgrading        = "NodeUpgrading"
	ReasonSelectingNode        = "SelectingNode"
	ReasonServersUpgraded      = "ServersUpgraded"
	ReasonRollingClients       = "RollingClients"
	ReasonClientsUpgraded      = "ClientsUpgraded"
	ReasonClientsPinned        = "ClientsPinnedByMounts"
	ReasonBlockCleared         = "BlockCleared"
	ReasonUpgradeComplete      = "UpgradeComplete"
	ReasonVolumesNotHealthy    = "VolumesNotHealthy"
	ReasonInvalidTargetVersion = "InvalidTargetVersion"

	// Cluster.
	ReasonInfraNotReady   = "InfrastructureNotReady"
	ReasonCreatingNodes   = "CreatingNodes"
	ReasonConverged       = "Converged"
	ReasonDegraded        = "Degraded"
	ReasonScaling         = "Scaling"
	ReasonUpgrading       = "Upgrading"
	ReasonPVsExist        = "PersistentVolumesExist"
	ReasonDeletingNodes   = "DeletingNodes"
	ReasonDeletingInfra   = "DeletingInfrastructure"
	ReasonDeletedCleanly  = "Deleted"
	ReasonProvisionSlow   = "ProvisioningSlow"
	ReasonCreatingDrivers = "CreatingCSIDrivers"
	// ReasonSnapshotAPIMissing: spec.csi.snapshots.enabled, and Kubernetes
	// does not serve the snapshot API the snapshotter needs.
	ReasonSnapshotAPIMissing = "SnapshotAPIMissing"

	// ReasonApplyingOptions: the cluster sets spec.clusterOptions in GD2.
	ReasonApplyingOptions = "ApplyingOptions"

	// ReasonNodeDisabled and ReasonNodeEnabled: an Online node follows its
	// spec.desiredState.
	ReasonNodeDisabled = "NodeDisabled"
	ReasonNodeEnabled  = "NodeEnabled"

	// Cluster, external mode.
	ReasonEndpointsChanged = "EndpointsChanged"
	ReasonEndpointsUpdated = "EndpointsUpdated"
	// ReasonClusterNotFound: a GlusterNode names a GlusterCluster that
	// does not exist; the node waits for it.
	ReasonClusterNotFound = "ClusterNotFound"
	// ReasonExternalCluster: a GlusterNode names an external cluster and
	// is left alone.
	ReasonExternalCluster = "ExternalCluster"

	// Autoscaler (automatic mode; see Autoscale). ScalingUp and
	// ScalingDown name a step; every other reason says why none is taken.
	ReasonScalingUp            = "ScalingUp"
	ReasonScalingDown          = "ScalingDown"
	ReasonWithinBand           = "WithinBand"
	ReasonAtMaxNodes           = "AtMaxNodes"
	ReasonAtMinNodes           = "AtMinNodes"
	ReasonMaxStorageReached    = "MaxStorageReached"
	ReasonCooldownActive       = "CooldownActive"
	ReasonNodesNotSettled      = "NodesNotSettled"
	ReasonScaleUpDisabled      = "ScaleUpDisabled"
	ReasonScaleDownDisabled    = "ScaleDownDisabled"
	ReasonZoneNeedsCapacity    = "ZoneNeedsCapacity"
	ReasonCapacityUnknown      = "CapacityUnknown"
	ReasonAnotherTemplateFirst = "AnotherTemplateFirst"
	ReasonClusterNotSteady     = "ClusterNotSteady"

	// Disruption.
	ReasonNoBricks           = "NoBricks"
	ReasonDisruptionBlocked  = "DisruptionBlocked"
	ReasonZoneSafe           = "ZoneSafe"
	ReasonDrainRequested     = "DrainRequested"
	ReasonZoneGone           = "ZoneGone"
	ReasonZoneDisrupted      = "ZoneDisrupted"
	ReasonDisruptedElsewhere = "DisruptedElsewhere"
	ReasonZoneHandover       = "ZoneHandover"
	ReasonZoneOpen           = "ZoneOpen"
	ReasonBudgetsDrifted     = "BudgetsDrifted"
)
