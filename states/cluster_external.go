package states

import "fmt"

// decideExternal is DecideCluster for a cluster in external mode: the pool
// runs outside Kubernetes and anthill owns only the CSI drivers, the
// management Service (without a selector) and the EndpointSlices that list
// the pool's addresses. No path here creates, counts, scales or deletes GlusterNodes,
// and none acts on GD2 beyond reading it: an external pool's peers and
// volumes are the admin's, before, during and after anthill.
func decideExternal(s ClusterSnapshot) Decision {
	switch s.State {
	case ClusterPending:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted before it was provisioned.")
		}
		if s.CAProblem != "" {
			return caInvalid(s)
		}
		return fire(ClusterProvision, ReasonProvisioning, "Creating the management Service and the EndpointSlices of the external pool's addresses.")

	case ClusterProvisioning:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if !s.EndpointsInSync {
			return step(ClusterSyncEndpoints, ReasonEndpointsChanged, "Writing the management Service and EndpointSlices: "+endpointsDiff(s)+".", pollShort)
		}
		if d, ok := certificates(s); ok {
			return d
		}
		if len(s.DriversMissing) > 0 {
			return ensureDrivers(s)
		}
		if s.GD2Reachable {
			// Nothing to wait for but GD2: there are no nodes to join.
			return settle(s, ReasonProvisioning)
		}
		if s.Now.Sub(s.StateSince) >= s.ProvisionGrace {
			return fire(ClusterDegrade, ReasonProvisionSlow, fmt.Sprintf("GD2 did not answer at any of the pool's addresses within %s.", s.ProvisionGrace))
		}
		if s.GD2Untrusted != "" {
			return warn(ReasonGD2Untrusted, s.GD2Untrusted, pollShort)
		}
		return wait(ReasonGD2Unreachable, "Waiting for GD2 to answer at one of the pool's addresses.", pollShort)

	case ClusterReady, ClusterDegraded:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if !s.EndpointsInSync {
			return fire(ClusterReconfigure, ReasonEndpointsChanged, "The pool's addresses changed: "+endpointsDiff(s)+".")
		}
		if s.UpgradeActive {
			return fire(ClusterUpgrade, ReasonUpgrading, "An upgrade started.")
		}
		if d, ok := certificates(s); ok {
			return d
		}
		if len(s.DriversMissing) > 0 {
			return ensureDrivers(s)
		}
		return settle(s, ReasonSteady)

	case ClusterReconfiguring:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if !s.EndpointsInSync {
			return step(ClusterSyncEndpoints, ReasonEndpointsChanged, "Writing the management Service and EndpointSlices: "+endpointsDiff(s)+".", pollShort)
		}
		if s.healthy() {
			return fire(ClusterConverged, ReasonEndpointsUpdated, "The management Service and EndpointSlices match spec.external.nodes; the cluster is ready.")
		}
		return settle(s, ReasonEndpointsUpdated)

	case ClusterUpgrading:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if s.UpgradeActive {
			return wait(ReasonUpgrading, "The upgrade machine is running.", 0)
		}
		return settle(s, ReasonUpgrading)

	case ClusterScaling:
		// Never entered in external mode; a persisted Scaling (written by
		// hand, or by a future version) settles instead of scaling.
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		return settle(s, ReasonSteady)

	case ClusterDeleting:
		// The PersistentVolumes' hold applies as in every mode: their data
		// lives on the pool, and the CSI driver needs the Service.
		if s.GlusterPVs > 0 {
			return wait(ReasonPVsExist, pvsExistMessage(s), pollLong)
		}
		if s.InfraExists {
			return step(ClusterDeleteInfra, ReasonDeletingInfra, "Deleting the CSI drivers, the management Service and its EndpointSlices; the external pool is left as it is.", pollShort)
		}
		return fire(ClusterFinish, ReasonDeletedCleanly, "The CSI drivers, the management Service and its EndpointSlices are gone; the external pool's peers and volumes were not touched.")

	case ClusterDeleted:
		return wait(ReasonSteady, "The cluster is deleted.", 0)
	}
	return unknownState(ClusterMachine, s.State)
}

func endpointsDiff(s ClusterSnapshot) string {
	if s.EndpointsDiff == "" {
		return "they differ from spec.external.nodes"
	}
	return s.EndpointsDiff
}
