package states

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

func readyCluster(state fsm.State) ClusterSnapshot {
	return ClusterSnapshot{
		State: state, StateSince: t0.Add(-time.Minute), Now: t0,
		InfraCreated: true, InfraReady: true, InfraExists: true, GD2Reachable: true,
		DesiredNodes: 3, NodesTotal: 3, NodesAll: 3, NodesOnline: 3,
		ProvisionGrace: 20 * time.Minute,
	}
}

// external turns a snapshot into an external cluster's: no nodes at all,
// and the addresses published as the spec says.
func external(s *ClusterSnapshot) {
	s.External, s.EndpointsInSync = true, true
	s.DesiredNodes, s.NodesTotal, s.NodesAll, s.NodesOnline = 0, 0, 0, 0
}

// ext applies external, then more.
func ext(more ...func(*ClusterSnapshot)) func(*ClusterSnapshot) {
	return func(s *ClusterSnapshot) {
		external(s)
		for _, m := range more {
			m(s)
		}
	}
}

func TestDecideCluster(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		mutate     func(*ClusterSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Step
		wantReason string
	}{
		{name: "a new cluster is provisioned", state: ClusterPending, mutate: func(s *ClusterSnapshot) { *s = ClusterSnapshot{State: ClusterPending, Now: t0, DesiredNodes: 3} }, wantEvent: ClusterProvision},
		{name: "a cluster deleted before provisioning goes to deleting", state: ClusterPending, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantEvent: ClusterDelete},

		{name: "provisioning waits for the infrastructure objects before creating nodes", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.InfraCreated, s.InfraReady = false, false; s.NodesTotal = 0 }, wantReason: ReasonInfraNotReady},
		{name: "provisioning creates nodes while etcd starts", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.InfraReady = false; s.NodesTotal = 0 }, wantStep: ClusterScaleNodes},
		{name: "provisioning does not converge before etcd is ready", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.InfraReady = false }, wantReason: ReasonInfraNotReady},
		{name: "provisioning creates the first nodes", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.NodesTotal, s.NodesOnline = 1, 0 }, wantStep: ClusterScaleNodes},
		{name: "provisioning waits for nodes to come online", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesJoining = 1, 2 }, wantReason: ReasonProvisioning},
		{name: "provisioning converges when every node is online", state: ClusterProvisioning, wantEvent: ClusterConverged},
		{name: "provisioning reports degraded after the grace period", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.NodesOnline, s.NodesJoining = 2, 1
			s.StateSince = t0.Add(-time.Hour)
		}, wantEvent: ClusterDegrade, wantReason: ReasonProvisionSlow},
		{name: "provisioning creates missing CSI drivers once the nodes exist", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.NodesOnline, s.NodesJoining, s.DriversMissing = 0, 3, []string{"DaemonSet c-csi-node"}
		}, wantStep: ClusterEnsureDrivers, wantReason: ReasonCreatingDrivers},
		{name: "provisioning creates nodes before CSI drivers", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.NodesTotal, s.DriversMissing = 1, []string{"DaemonSet c-csi-node"}
		}, wantStep: ClusterScaleNodes},
		{name: "provisioning stops when the cluster is deleted", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantEvent: ClusterDelete},

		{name: "a pending cluster whose CA secret is unusable does not start, and says why", state: ClusterPending, mutate: func(s *ClusterSnapshot) {
			s.CAProblem = `CA secret ns/ca has no key "tls.key".`
		}, wantReason: ReasonCAInvalid},
		{name: "provisioning issues due certificates before creating nodes", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.NodesTotal, s.CertificatesDue = 0, []string{"gc-etcd-tls (missing)"}
		}, wantStep: ClusterIssueCertificates, wantReason: ReasonIssuingCertificates},
		{name: "provisioning creates no node while the CA secret is unusable", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.NodesTotal, s.CAProblem = 0, "CA secret ns/ca: certificate is not a CA."
		}, wantReason: ReasonCAInvalid},
		{name: "a ready cluster renews an expiring certificate", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.CertificatesDue = []string{"n1-tls (expiring)"} }, wantStep: ClusterIssueCertificates},
		{name: "a degraded cluster re-signs certificates after a CA rotation", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) {
			s.VolumesUnhealthy, s.CertificatesDue = 1, []string{"a (signed by another CA)", "b", "c", "d", "e", "f"}
		}, wantStep: ClusterIssueCertificates},
		{name: "a ready cluster whose CA expired rolls nothing and says why", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.CAProblem, s.CertificatesDue = "CA secret ns/ca: CA expired.", []string{"n1-tls (expiring)"}
		}, wantReason: ReasonCAInvalid},
		{name: "scaling issues the new nodes' certificates", state: ClusterScaling, mutate: func(s *ClusterSnapshot) {
			s.NodesJoining, s.CertificatesDue = 1, []string{"n4-tls (missing)"}
		}, wantStep: ClusterIssueCertificates},
		{name: "external: the trust bundle is written while provisioning", state: ClusterProvisioning, mutate: ext(func(s *ClusterSnapshot) { s.CertificatesDue = []string{"gc-tls-trust (missing)"} }), wantStep: ClusterIssueCertificates},
		{name: "external: a pending cluster with an unusable CA does not start", state: ClusterPending, mutate: ext(func(s *ClusterSnapshot) { s.CAProblem = "x" }), wantReason: ReasonCAInvalid},
		{name: "external: a ready cluster rewrites the trust bundle", state: ClusterReady, mutate: ext(func(s *ClusterSnapshot) { s.CertificatesDue = []string{"gc-tls-trust (CA changed)"} }), wantStep: ClusterIssueCertificates},
		{name: "provisioning says when GD2's certificate is not trusted", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.GD2Reachable, s.NodesOnline, s.NodesJoining, s.GD2Untrusted = false, 0, 3, "GD2 presented a certificate the trust bundle does not verify."
		}, wantReason: ReasonGD2Untrusted},
		{name: "a ready cluster whose GD2 is untrusted degrades and says why", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.GD2Reachable, s.GD2Untrusted = false, "GD2 presented a certificate the trust bundle does not verify."
		}, wantEvent: ClusterDegrade},
		{name: "external: provisioning says when the pool's certificate is not trusted", state: ClusterProvisioning, mutate: ext(func(s *ClusterSnapshot) {
			s.GD2Reachable, s.GD2Untrusted = false, "x"
		}), wantReason: ReasonGD2Untrusted},
		{name: "a ready cluster stays ready", state: ClusterReady, wantReason: ReasonSteady},
		{name: "a ready cluster that asks for snapshots Kubernetes cannot serve stays ready and warns", state: ClusterReady,
			mutate: func(s *ClusterSnapshot) { s.SnapshotAPIMissing = []string{"volumesnapshotclasses", "volumesnapshots"} }, wantReason: ReasonSnapshotAPIMissing},
		{name: "a degraded cluster that asks for snapshots converges first", state: ClusterDegraded,
			mutate: func(s *ClusterSnapshot) { s.SnapshotAPIMissing = []string{"volumesnapshots"} }, wantEvent: ClusterConverged},
		{name: "a missing snapshot class is created like a missing driver object", state: ClusterReady,
			mutate: func(s *ClusterSnapshot) { s.DriversMissing = []string{"VolumeSnapshotClass gc-file"} }, wantStep: ClusterEnsureDrivers, wantReason: ReasonCreatingDrivers},
		{name: "a ready cluster with a failed node is degraded", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesUnhealthy = 2, 1 }, wantEvent: ClusterDegrade},
		{name: "a ready cluster with an unhealthy volume is degraded", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.VolumesUnhealthy = 1 }, wantEvent: ClusterDegrade},
		{name: "a ready cluster with a node in maintenance is still ready", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesMaintenance = 2, 1 }, wantReason: ReasonSteady},
		{name: "a ready cluster scales when nodeCount grows", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 4 }, wantEvent: ClusterScale},
		{name: "a ready cluster scales with the autoscaler's reason when it took a step", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.DesiredNodes, s.AutoscaleReason, s.AutoscaleMessage = 4, ReasonScalingUp, "Template a: free 1Gi is below freeStorageMin 2Gi: 1 to 2 nodes."
		}, wantEvent: ClusterScale, wantReason: ReasonScalingUp},
		{name: "a degraded cluster scales down with the autoscaler's reason", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) {
			s.VolumesUnhealthy, s.DesiredNodes, s.AutoscaleReason, s.AutoscaleMessage = 1, 2, ReasonScalingDown, "Template a: 2 to 1 nodes."
		}, wantEvent: ClusterScale, wantReason: ReasonScalingDown},
		{name: "a ready cluster starts upgrading", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.UpgradeActive = true }, wantEvent: ClusterUpgrade},
		{name: "a ready cluster sets cluster options GD2 does not have", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.OptionsDiffer = []string{"cluster.brick-multiplex"} }, wantStep: ClusterApplyOptions},
		{name: "a degraded cluster sets cluster options too", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) {
			s.VolumesUnhealthy = 1
			s.OptionsDiffer = []string{"cluster.brick-multiplex"}
		}, wantStep: ClusterApplyOptions},
		{name: "a paused cluster does not set options, and says so", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.Paused = true; s.OptionsDiffer = []string{"cluster.brick-multiplex"} }, wantReason: ReasonPaused},
		{name: "a paused cluster with options to set still degrades", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.VolumesUnhealthy = true, 1
			s.OptionsDiffer = []string{"cluster.brick-multiplex"}
		}, wantEvent: ClusterDegrade},
		{name: "an external cluster's options are not anthill's to set", state: ClusterReady, mutate: ext(func(s *ClusterSnapshot) { s.OptionsDiffer = []string{"cluster.brick-multiplex"} }), wantReason: ReasonSteady},
		{name: "a cluster scales before it sets options", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 4; s.OptionsDiffer = []string{"cluster.brick-multiplex"} }, wantEvent: ClusterScale},
		{name: "a ready cluster recreates a missing CSI driver object", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.DriversMissing = []string{"CSIDriver x"} }, wantStep: ClusterEnsureDrivers},
		{name: "a degraded cluster creates the block driver when block is added", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) {
			s.NodesUnhealthy, s.DriversMissing = 1, []string{"DaemonSet c-csi-block-node", "Deployment c-csi-block-controller"}
		}, wantStep: ClusterEnsureDrivers},
		{name: "scaling creates missing CSI drivers too", state: ClusterScaling, mutate: func(s *ClusterSnapshot) {
			s.NodesLeaving, s.DriversMissing = 1, []string{"CSIDriver x"}
		}, wantStep: ClusterEnsureDrivers},
		{name: "upgrading never creates CSI drivers", state: ClusterUpgrading, mutate: func(s *ClusterSnapshot) {
			s.UpgradeActive, s.DriversMissing = true, []string{"DaemonSet c-csi-block-node"}
		}, wantReason: ReasonUpgrading},
		{name: "deletion deletes CSI drivers of an external cluster", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) {
			s.Deleting, s.NodesAll, s.DriversMissing = true, 0, nil
		}, wantStep: ClusterDeleteInfra},
		{name: "a ready cluster that is deleted goes to deleting", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantEvent: ClusterDelete},

		{name: "a degraded cluster that recovered is ready", state: ClusterDegraded, wantEvent: ClusterConverged},
		{name: "a degraded cluster stays degraded while GD2 is unreachable", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) { s.GD2Reachable = false }, wantReason: ReasonDegraded},
		{name: "a degraded cluster may scale to regain capacity", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 4; s.NodesUnhealthy = 1 }, wantEvent: ClusterScale},
		{name: "a degraded cluster shows an upgrade in progress", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) { s.UpgradeActive = true; s.NodesUnhealthy = 1 }, wantEvent: ClusterUpgrade},
		{name: "a degraded cluster that is deleted goes to deleting", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantEvent: ClusterDelete},

		{name: "scaling up creates nodes", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 4 }, wantStep: ClusterScaleNodes},
		{name: "scaling down asks a surplus node to decommission", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 2 }, wantStep: ClusterScaleNodes},
		{name: "scaling waits for a leaving node", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.NodesLeaving = 1; s.NodesAll = 4 }, wantReason: ReasonScaling},
		{name: "scaling converges when counts match and the cluster is healthy", state: ClusterScaling, wantEvent: ClusterConverged},
		{name: "scaling ends degraded when the cluster is unhealthy", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.VolumesUnhealthy = 1 }, wantEvent: ClusterDegrade},
		{name: "scaling stops when the cluster is deleted", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantEvent: ClusterDelete},

		{name: "upgrading waits for the upgrade machine", state: ClusterUpgrading, mutate: func(s *ClusterSnapshot) { s.UpgradeActive = true }, wantReason: ReasonUpgrading},
		{name: "a finished upgrade converges", state: ClusterUpgrading, wantEvent: ClusterConverged},
		{name: "a finished upgrade on an unhealthy cluster is degraded", state: ClusterUpgrading, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesUnhealthy = 2, 1 }, wantEvent: ClusterDegrade},
		{name: "upgrading stops when the cluster is deleted", state: ClusterUpgrading, mutate: func(s *ClusterSnapshot) { s.UpgradeActive, s.Deleting = true, true }, wantEvent: ClusterDelete},

		{name: "deletion is refused while Gluster PVs exist", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Deleting, s.GlusterPVs = true, 2 }, wantReason: ReasonPVsExist},
		{name: "deletion deletes the nodes first", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Deleting = true }, wantStep: ClusterDeleteNodes},
		{name: "deletion removes the infrastructure once nodes are gone", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Deleting, s.NodesAll = true, 0 }, wantStep: ClusterDeleteInfra},
		{name: "deletion finishes when everything is gone", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Deleting, s.NodesAll, s.InfraExists = true, 0, false }, wantEvent: ClusterFinish},
		{name: "a deleted cluster does nothing", state: ClusterDeleted, wantReason: ReasonSteady},

		{name: "an unknown cluster phase is never acted on", state: "Exploded", wantReason: ReasonUnknownState},

		// Paused (spec.paused): no GlusterNode is created, decommissioned or deleted.
		{name: "paused: provisioning creates no node", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) { s.Paused, s.NodesTotal, s.NodesOnline = true, 1, 1 }, wantReason: ReasonPaused},
		{name: "paused: provisioning still creates missing CSI drivers", state: ClusterProvisioning, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.NodesTotal, s.DriversMissing = true, 1, []string{"CSIDriver x"}
		}, wantStep: ClusterEnsureDrivers},
		{name: "paused: a ready cluster does not scale when nodeCount grows", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.Paused, s.DesiredNodes = true, 4 }, wantReason: ReasonPaused},
		{name: "paused: a ready cluster still reports degraded health", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.DesiredNodes, s.VolumesUnhealthy = true, 4, 1
		}, wantEvent: ClusterDegrade},
		{name: "paused: a degraded cluster does not scale down", state: ClusterDegraded, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.DesiredNodes, s.VolumesUnhealthy = true, 2, 1
		}, wantReason: ReasonPaused},
		{name: "paused: a ready cluster still upgrades into Upgrading (the upgrade machine holds itself)", state: ClusterReady, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.UpgradeActive = true, true
		}, wantEvent: ClusterUpgrade},
		{name: "paused: scaling creates no node", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.Paused, s.DesiredNodes = true, 4 }, wantReason: ReasonPaused},
		{name: "paused: scaling stays while a node is leaving", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.Paused, s.NodesLeaving, s.NodesAll = true, 1, 4 }, wantReason: ReasonPaused},
		{name: "paused: scaling that is done still converges", state: ClusterScaling, mutate: func(s *ClusterSnapshot) { s.Paused = true }, wantEvent: ClusterConverged},
		{name: "paused: a deleted cluster still goes to deleting", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.Paused, s.Deleting = true, true }, wantEvent: ClusterDelete},
		{name: "paused: deletion deletes no node", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Paused, s.Deleting = true, true }, wantReason: ReasonPaused},
		{name: "paused: deletion deletes no infrastructure", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) { s.Paused, s.Deleting, s.NodesAll = true, true, 0 }, wantReason: ReasonPaused},
		{name: "paused: deletion still finishes when everything is gone", state: ClusterDeleting, mutate: func(s *ClusterSnapshot) {
			s.Paused, s.Deleting, s.NodesAll, s.InfraExists = true, true, 0, false
		}, wantEvent: ClusterFinish},

		// External mode: no nodes, no etcd; the management Service and its
		// EndpointSlices follow spec.external.nodes.
		{name: "external: a new cluster is provisioned", state: ClusterPending, mutate: ext(), wantEvent: ClusterProvision},
		{name: "external: a cluster deleted before provisioning goes to deleting", state: ClusterPending, mutate: ext(func(s *ClusterSnapshot) { s.Deleting = true }), wantEvent: ClusterDelete},
		{name: "external: provisioning writes the EndpointSlices while they differ from the spec", state: ClusterProvisioning,
			mutate: ext(func(s *ClusterSnapshot) { s.EndpointsInSync, s.EndpointsDiff = false, "add 192.0.2.1" }), wantStep: ClusterSyncEndpoints, wantReason: ReasonEndpointsChanged},
		{name: "external: provisioning creates no nodes and is ready once GD2 answers", state: ClusterProvisioning, mutate: ext(), wantEvent: ClusterConverged},
		{name: "external: provisioning ends degraded at once when a volume is unhealthy", state: ClusterProvisioning,
			mutate: ext(func(s *ClusterSnapshot) { s.VolumesUnhealthy = 1 }), wantEvent: ClusterDegrade, wantReason: ReasonDegraded},
		{name: "external: provisioning waits for GD2 to answer", state: ClusterProvisioning,
			mutate: ext(func(s *ClusterSnapshot) { s.GD2Reachable = false }), wantReason: ReasonGD2Unreachable},
		{name: "external: provisioning reports degraded when GD2 never answers", state: ClusterProvisioning,
			mutate: ext(func(s *ClusterSnapshot) { s.GD2Reachable = false; s.StateSince = t0.Add(-time.Hour) }), wantEvent: ClusterDegrade, wantReason: ReasonProvisionSlow},
		{name: "external: provisioning stops when the cluster is deleted", state: ClusterProvisioning, mutate: ext(func(s *ClusterSnapshot) { s.Deleting = true }), wantEvent: ClusterDelete},
		{name: "external: a ready cluster with GD2 answering and healthy volumes stays ready", state: ClusterReady, mutate: ext(), wantReason: ReasonSteady},
		{name: "external: a ready cluster never scales, whatever GlusterNodes exist", state: ClusterReady,
			mutate: ext(func(s *ClusterSnapshot) { s.NodesTotal, s.NodesAll, s.DesiredNodes = 2, 2, 0 }), wantReason: ReasonSteady},
		{name: "external: a changed address reconfigures a ready cluster", state: ClusterReady,
			mutate: ext(func(s *ClusterSnapshot) { s.EndpointsInSync = false }), wantEvent: ClusterReconfigure, wantReason: ReasonEndpointsChanged},
		{name: "external: a changed address reconfigures a degraded cluster", state: ClusterDegraded,
			mutate: ext(func(s *ClusterSnapshot) { s.EndpointsInSync, s.GD2Reachable = false, false }), wantEvent: ClusterReconfigure},
		{name: "external: a ready cluster whose GD2 stops answering is degraded", state: ClusterReady,
			mutate: ext(func(s *ClusterSnapshot) { s.GD2Reachable = false }), wantEvent: ClusterDegrade},
		{name: "external: a degraded cluster whose GD2 answers again is ready", state: ClusterDegraded, mutate: ext(), wantEvent: ClusterConverged},
		{name: "external: a ready cluster that is deleted goes to deleting", state: ClusterReady, mutate: ext(func(s *ClusterSnapshot) { s.Deleting = true }), wantEvent: ClusterDelete},
		{name: "external: a ready cluster shows an upgrade the upgrade machine runs", state: ClusterReady, mutate: ext(func(s *ClusterSnapshot) { s.UpgradeActive = true }), wantEvent: ClusterUpgrade},
		{name: "external: reconfiguring writes the EndpointSlices again while they differ", state: ClusterReconfiguring,
			mutate: ext(func(s *ClusterSnapshot) { s.EndpointsInSync = false }), wantStep: ClusterSyncEndpoints},
		{name: "external: reconfiguring ends ready once the EndpointSlices match", state: ClusterReconfiguring, mutate: ext(), wantEvent: ClusterConverged, wantReason: ReasonEndpointsUpdated},
		{name: "external: reconfiguring ends degraded when GD2 does not answer", state: ClusterReconfiguring,
			mutate: ext(func(s *ClusterSnapshot) { s.GD2Reachable = false }), wantEvent: ClusterDegrade},
		{name: "external: reconfiguring stops when the cluster is deleted", state: ClusterReconfiguring, mutate: ext(func(s *ClusterSnapshot) { s.Deleting = true }), wantEvent: ClusterDelete},
		{name: "external: a persisted Scaling settles instead of scaling", state: ClusterScaling, mutate: ext(), wantEvent: ClusterConverged},
		{name: "external: a finished upgrade settles", state: ClusterUpgrading, mutate: ext(), wantEvent: ClusterConverged},
		{name: "external: deletion is refused while Gluster PVs exist", state: ClusterDeleting,
			mutate: ext(func(s *ClusterSnapshot) { s.Deleting, s.GlusterPVs, s.GlusterPVNames = true, 1, []string{"pv-a"} }), wantReason: ReasonPVsExist},
		{name: "external: deletion never deletes GlusterNodes and removes only the Service and slices", state: ClusterDeleting,
			mutate: ext(func(s *ClusterSnapshot) { s.Deleting, s.NodesAll = true, 2 }), wantStep: ClusterDeleteInfra},
		{name: "external: deletion finishes once the Service and slices are gone", state: ClusterDeleting,
			mutate: ext(func(s *ClusterSnapshot) { s.Deleting, s.InfraExists, s.NodesAll = true, false, 1 }), wantEvent: ClusterFinish},
		{name: "external: a deleted cluster does nothing", state: ClusterDeleted, mutate: ext(), wantReason: ReasonSteady},
		{name: "external: an unknown phase is never acted on", state: "Exploded", mutate: ext(), wantReason: ReasonUnknownState},
	}
	def := ClusterDefinition()
	var seen []decisionCase
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := readyCluster(tc.state)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			got := DecideCluster(s)
			if got.Event != tc.wantEvent || got.Step != tc.wantStep {
				t.Fatalf("DecideCluster() = event %q step %q (%s: %s), want event %q step %q",
					got.Event, got.Step, got.Reason, got.Message, tc.wantEvent, tc.wantStep)
			}
			if tc.wantReason != "" && got.Reason != tc.wantReason {
				t.Errorf("Reason = %q, want %q (%s)", got.Reason, tc.wantReason, got.Message)
			}
			if def.HasState(tc.state) {
				checkDecisionIsAllowed(t, def, tc.state, got)
			}
			seen = append(seen, decisionCase{name: tc.name, state: tc.state, got: got})
		})
	}
	checkCoverage(t, def, seen)
}

func TestDecideClusterSaysWhatToInstallForSnapshots(t *testing.T) {
	s := readyCluster(ClusterReady)
	s.SnapshotAPIMissing = []string{"volumesnapshotclasses", "volumesnapshots", "volumesnapshotcontents"}
	d := DecideCluster(s)
	if !d.Warning || d.RequeueAfter != pollLong {
		t.Errorf("want a Warning that looks again after %v: %+v", pollLong, d)
	}
	for _, want := range []string{"spec.csi.snapshots.enabled", "volumesnapshotcontents", "snapshot-controller", "docs/csi.md#snapshots"} {
		if !strings.Contains(d.Message, want) {
			t.Errorf("message %q does not name %q", d.Message, want)
		}
	}
}

func TestDecideClusterNamesThePVsThatHoldDeletion(t *testing.T) {
	s := readyCluster(ClusterDeleting)
	s.Deleting, s.GlusterPVs, s.GlusterPVNames = true, 2, []string{"pv-a", "pv-b"}
	d := DecideCluster(s)
	if d.Reason != ReasonPVsExist || !strings.Contains(d.Message, "pv-a, pv-b") {
		t.Fatalf("decision %s: %q, want %s naming pv-a and pv-b", d.Reason, d.Message, ReasonPVsExist)
	}
	names := make([]string, 12)
	for i := range names {
		names[i] = fmt.Sprintf("pv-%02d", i)
	}
	s.GlusterPVs, s.GlusterPVNames = len(names), names
	d = DecideCluster(s)
	if !strings.Contains(d.Message, "pv-09 and 2 more.") || strings.Contains(d.Message, "pv-10") {
		t.Fatalf("message %q should name the first %d PVs and count the rest", d.Message, maxNamedPVs)
	}
}

// A cluster Degraded only because its etcd (an external cluster's: its
// endpoint Service) is not ready says so: the counts alone read healthy.
func TestDecideClusterSaysWhenItsInfrastructureHoldsItDegraded(t *testing.T) {
	for _, tc := range []struct {
		name string
		ext  bool
		want string
	}{
		{"managed", false, "Its etcd is not ready."},
		{"external", true, "Its endpoint Service does not exist."},
	} {
		s := readyCluster(ClusterReady)
		if tc.ext {
			external(&s)
		}
		s.InfraReady = false
		d := DecideCluster(s)
		if d.Event != ClusterDegrade || !strings.HasSuffix(d.Message, tc.want) {
			t.Errorf("%s: decision %s %q, want %s ending %q", tc.name, d.Event, d.Message, ClusterDegrade, tc.want)
		}
		s.InfraReady = true
		s.VolumesUnhealthy = 1
		if d := DecideCluster(s); strings.Contains(d.Message, "Its ") {
			t.Errorf("%s: with the infrastructure ready the message %q still blames it", tc.name, d.Message)
		}
	}
}

func TestOptionsDifferNamesTheKeysGD2DoesNotHave(t *testing.T) {
	want := map[string]string{"cluster.brick-multiplex": "on", "cluster.localtime-logging": "off", "cluster.max-bricks-per-process": "100"}
	have := map[string]string{"cluster.brick-multiplex": "off", "cluster.localtime-logging": "off"}
	if got := OptionsDiffer(want, have); !slices.Equal(got, []string{"cluster.brick-multiplex", "cluster.max-bricks-per-process"}) {
		t.Errorf("OptionsDiffer = %v", got)
	}
	if got := OptionsDiffer(nil, have); got != nil {
		t.Errorf("no options asked for: %v", got)
	}
}
