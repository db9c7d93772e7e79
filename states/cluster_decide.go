package states

import (
	"fmt"
	"strings"
)

// maxNamedPVs bounds how many PersistentVolumes a message names.
const maxNamedPVs = 10

// DecideCluster returns the one thing the cluster machine should do next,
// with the lasting changes its action makes (ClusterChanges).
func DecideCluster(s ClusterSnapshot) Decision {
	d := decideCluster(s)
	d.Changes = ClusterChanges(s, d)
	return d
}

// decideCluster is DecideCluster's decision, before the changes it makes.
func decideCluster(s ClusterSnapshot) Decision {
	if s.External {
		return decideExternal(s)
	}
	switch s.State {
	case ClusterPending:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted before it was provisioned.")
		}
		if s.CAProblem != "" {
			return caInvalid(s)
		}
		return fire(ClusterProvision, ReasonProvisioning, "Creating the auth secret, etcd and the cluster's Services.")

	case ClusterProvisioning:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if !s.InfraCreated {
			return wait(ReasonInfraNotReady, "Waiting for the auth secret, etcd and the cluster's Services to be created.", pollShort)
		}
		if d, ok := certificates(s); ok {
			return d
		}
		// Nodes are created while etcd starts: their claims bind and their
		// pods schedule meanwhile, and no node joins before GD2 answers
		// through the management Service, which needs etcd.
		if s.NodesTotal < s.DesiredNodes {
			if s.Paused {
				return heldScale(s)
			}
			return step(ClusterScaleNodes, ReasonCreatingNodes, fmt.Sprintf("Creating GlusterNodes (%d of %d exist).", s.NodesTotal, s.DesiredNodes), pollShort)
		}
		if len(s.DriversMissing) > 0 {
			return ensureDrivers(s)
		}
		if s.healthy() && s.NodesJoining == 0 {
			return fire(ClusterConverged, ReasonConverged, fmt.Sprintf("The cluster is ready with %d nodes.", s.NodesTotal))
		}
		if s.Now.Sub(s.StateSince) >= s.ProvisionGrace {
			return fire(ClusterDegrade, ReasonProvisionSlow, fmt.Sprintf("%d of %d nodes are Online after %s.", s.NodesOnline, s.NodesTotal, s.ProvisionGrace))
		}
		if !s.InfraReady {
			return wait(ReasonInfraNotReady, fmt.Sprintf("Waiting for etcd; %d of %d nodes are Online.", s.NodesOnline, s.NodesTotal), pollShort)
		}
		if s.GD2Untrusted != "" {
			return warn(ReasonGD2Untrusted, s.GD2Untrusted, pollShort)
		}
		return wait(ReasonProvisioning, fmt.Sprintf("%d of %d nodes are Online.", s.NodesOnline, s.NodesTotal), pollShort)

	case ClusterReady, ClusterDegraded:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if s.UpgradeActive {
			return fire(ClusterUpgrade, ReasonUpgrading, "An upgrade started.")
		}
		if d, ok := certificates(s); ok {
			return d
		}
		if s.NodesTotal != s.DesiredNodes {
			if s.Paused {
				return heldScale(s)
			}
			if s.AutoscaleReason != "" {
				return fire(ClusterScale, s.AutoscaleReason, fmt.Sprintf("Scaling from %d to %d nodes. %s", s.NodesTotal, s.DesiredNodes, s.AutoscaleMessage))
			}
			return fire(ClusterScale, ReasonScaling, fmt.Sprintf("Scaling from %d to %d nodes.", s.NodesTotal, s.DesiredNodes))
		}
		if len(s.DriversMissing) > 0 {
			return ensureDrivers(s)
		}
		if len(s.OptionsDiffer) > 0 && !s.External {
			setting := fmt.Sprintf("setting cluster option(s) %s in GD2", strings.Join(s.OptionsDiffer, ", "))
			if !s.Paused && !s.Off.ClusterOptions {
				return step(ClusterApplyOptions, ReasonApplyingOptions, "S"+setting[1:]+".", pollShort)
			}
			// Health still moves the phase; a steady cluster says what waits.
			if d := settle(s, ReasonPaused); !d.Waiting() {
				return d
			}
			if !s.Paused {
				return automationOff("clusterOptions", setting, pollLong)
			}
			return paused(setting, pollLong)
		}
		return settle(s, ReasonSteady)

	case ClusterScaling:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if s.Paused && (s.NodesTotal != s.DesiredNodes || s.NodesJoining > 0 || s.NodesLeaving > 0) {
			return heldScale(s)
		}
		if d, ok := certificates(s); ok {
			return d
		}
		if s.NodesTotal != s.DesiredNodes {
			return step(ClusterScaleNodes, ReasonScaling, fmt.Sprintf("Scaling from %d to %d nodes.", s.NodesTotal, s.DesiredNodes), pollShort)
		}
		if len(s.DriversMissing) > 0 {
			return ensureDrivers(s)
		}
		if s.NodesJoining > 0 || s.NodesLeaving > 0 {
			return wait(ReasonScaling, fmt.Sprintf("Waiting for %d joining and %d leaving node(s).", s.NodesJoining, s.NodesLeaving), pollShort)
		}
		return settle(s, ReasonScaling)

	case ClusterUpgrading:
		if s.Deleting {
			return fire(ClusterDelete, ReasonDeletionRequested, "The cluster was deleted.")
		}
		if s.UpgradeActive {
			return wait(ReasonUpgrading, "The upgrade machine is running.", 0)
		}
		return settle(s, ReasonUpgrading)

	case ClusterDeleting:
		if s.GlusterPVs > 0 {
			return warn(ReasonPVsExist, pvsExistMessage(s), pollLong)
		}
		if s.Paused && (s.NodesAll > 0 || s.InfraExists) {
			return wait(ReasonPaused, fmt.Sprintf("The cluster is paused (spec.paused): not deleting its %d GlusterNode(s) and shared infrastructure until it is cleared.", s.NodesAll), 0)
		}
		if s.NodesAll > 0 {
			return step(ClusterDeleteNodes, ReasonDeletingNodes, fmt.Sprintf("Deleting %d GlusterNode(s).", s.NodesAll), pollShort)
		}
		if s.InfraExists {
			return step(ClusterDeleteInfra, ReasonDeletingInfra, "Deleting the CSI drivers, the Services, etcd and the auth secret.", pollShort)
		}
		return fire(ClusterFinish, ReasonDeletedCleanly, "Everything the cluster owned is gone.")

	case ClusterDeleted:
		return wait(ReasonSteady, "The cluster is deleted.", 0)
	}
	return unknownState(ClusterMachine, s.State)
}

// snapshotAPIMissingMessage says what a cluster that asks for snapshots
// waits for: the snapshot API, which the admin installs.
func snapshotAPIMissingMessage(s ClusterSnapshot) string {
	return fmt.Sprintf("The cluster is ready, but spec.csi.snapshots.enabled asks for snapshots and Kubernetes does not serve "+
		"snapshot.storage.k8s.io/v1 %s: install the VolumeSnapshot CRDs and the snapshot-controller (docs/csi.md#snapshots); "+
		"the VolumeSnapshotClass is created once they are served.", strings.Join(s.SnapshotAPIMissing, ", "))
}

// maxNamedCertificates bounds how many certificates a message names.
const maxNamedCertificates = 5

// certificates is the TLS decision of a cluster that runs: wait, naming
// the problem, while the CA secret is unusable (nothing is issued or
// rolled, and in Provisioning no node is created); issue what is due.
func certificates(s ClusterSnapshot) (Decision, bool) {
	if s.CAProblem != "" {
		return caInvalid(s), true
	}
	if len(s.CertificatesDue) == 0 {
		return Decision{}, false
	}
	names, more := s.CertificatesDue, ""
	if len(names) > maxNamedCertificates {
		more = fmt.Sprintf(" and %d more", len(names)-maxNamedCertificates)
		names = names[:maxNamedCertificates]
	}
	return step(ClusterIssueCertificates, ReasonIssuingCertificates,
		fmt.Sprintf("Issuing %d TLS certificate(s): %s%s.", len(s.CertificatesDue), strings.Join(names, ", "), more), pollShort), true
}

func caInvalid(s ClusterSnapshot) Decision {
	return warn(ReasonCAInvalid, s.CAProblem, pollLong)
}

// heldScale is the decision while spec.paused holds scaling: no GlusterNode
// is created or asked to decommission. Missing CSI driver objects are still
// created (they change no server), and a steady phase still follows health;
// Provisioning and Scaling stay where they are, as their work is unfinished.
func heldScale(s ClusterSnapshot) Decision {
	if len(s.DriversMissing) > 0 {
		return ensureDrivers(s)
	}
	if s.State == ClusterReady || s.State == ClusterDegraded {
		if d := settle(s, ReasonPaused); !d.Waiting() {
			return d
		}
	}
	msg := fmt.Sprintf("The cluster is paused (spec.paused): not scaling from %d to %d nodes until it is cleared.", s.NodesTotal, s.DesiredNodes)
	if s.NodesTotal == s.DesiredNodes {
		msg = fmt.Sprintf("The cluster is paused (spec.paused): %d joining and %d leaving node(s) hold until it is cleared.", s.NodesJoining, s.NodesLeaving)
	}
	return wait(ReasonPaused, msg, pollLong)
}

// maxNamedDrivers bounds how many missing driver objects a message names.
const maxNamedDrivers = 4

// ensureDrivers is the step that creates missing CSI driver objects and
// makes the StorageClasses follow the spec.
func ensureDrivers(s ClusterSnapshot) Decision {
	names := s.DriversMissing
	more := ""
	if len(names) > maxNamedDrivers {
		more = fmt.Sprintf(" and %d more", len(names)-maxNamedDrivers)
		names = names[:maxNamedDrivers]
	}
	return step(ClusterEnsureDrivers, ReasonCreatingDrivers,
		fmt.Sprintf("Reconciling %d CSI driver object(s): %s%s.", len(s.DriversMissing), strings.Join(names, ", "), more), pollShort)
}

// pvsExistMessage says why deletion is held, naming the PersistentVolumes
// (at most maxNamedPVs of them) so that an admin knows what to delete.
func pvsExistMessage(s ClusterSnapshot) string {
	msg := fmt.Sprintf("%d PersistentVolume(s) still use the cluster; delete them first", s.GlusterPVs)
	names := s.GlusterPVNames
	if len(names) == 0 {
		return msg + "."
	}
	more := ""
	if len(names) > maxNamedPVs {
		more = fmt.Sprintf(" and %d more", len(names)-maxNamedPVs)
		names = names[:maxNamedPVs]
	}
	return msg + ": " + strings.Join(names, ", ") + more + "."
}

// healthy is the Ready/Degraded criterion. An external cluster has no
// nodes to count: GD2 answering, the addresses published and every volume
// Healthy is all there is.
func (s ClusterSnapshot) healthy() bool {
	if s.External {
		return s.GD2Reachable && s.InfraReady && s.EndpointsInSync && s.VolumesUnhealthy == 0
	}
	return s.GD2Reachable && s.InfraReady && s.NodesUnhealthy == 0 &&
		s.NodesOnline+s.NodesMaintenance == s.NodesTotal && s.VolumesUnhealthy == 0
}

// settle moves an activity phase (or a steady one) to Ready or Degraded
// according to health, or stays when already there.
func settle(s ClusterSnapshot, reason string) Decision {
	if s.healthy() {
		if s.State == ClusterReady && len(s.SnapshotAPIMissing) > 0 {
			return warn(ReasonSnapshotAPIMissing, snapshotAPIMissingMessage(s), pollLong)
		}
		if s.State == ClusterReady {
			return wait(ReasonSteady, "The cluster is ready.", 0)
		}
		return fire(ClusterConverged, ReasonConverged, "The cluster is ready.")
	}
	msg := fmt.Sprintf("The cluster is degraded: GD2 reachable %t, %d of %d nodes Online, %d unhealthy node(s), %d unhealthy volume(s).",
		s.GD2Reachable, s.NodesOnline, s.NodesTotal, s.NodesUnhealthy, s.VolumesUnhealthy)
	if s.External {
		msg = fmt.Sprintf("The external cluster is degraded: GD2 reachable %t, %d unhealthy volume(s).", s.GD2Reachable, s.VolumesUnhealthy)
	}
	switch {
	case !s.InfraReady && s.External:
		msg += " Its endpoint Service does not exist."
	case !s.InfraReady:
		msg += " Its etcd is not ready."
	}
	if s.GD2Untrusted != "" {
		msg += " " + s.GD2Untrusted
	}
	if s.State == ClusterDegraded {
		return wait(ReasonDegraded, msg, pollLong)
	}
	return fire(ClusterDegrade, ReasonDegraded, msg)
}
