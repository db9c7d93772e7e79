package states

import (
	"fmt"
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

func TestDecideCluster(t *testing.T) {
	tests := []struct {
		name       string
		state      fsm.State
		mutate     func(*ClusterSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Event
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

		{name: "a ready cluster stays ready", state: ClusterReady, wantReason: ReasonSteady},
		{name: "a ready cluster with a failed node is degraded", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesUnhealthy = 2, 1 }, wantEvent: ClusterDegrade},
		{name: "a ready cluster with an unhealthy volume is degraded", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.VolumesUnhealthy = 1 }, wantEvent: ClusterDegrade},
		{name: "a ready cluster with a node in maintenance is still ready", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.NodesOnline, s.NodesMaintenance = 2, 1 }, wantReason: ReasonSteady},
		{name: "a ready cluster scales when nodeCount grows", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.DesiredNodes = 4 }, wantEvent: ClusterScale},
		{name: "a ready cluster starts upgrading", state: ClusterReady, mutate: func(s *ClusterSnapshot) { s.UpgradeActive = true }, wantEvent: ClusterUpgrade},
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
