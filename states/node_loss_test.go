package states

import (
	"strings"
	"testing"
	"time"

	"github.com/gluster/anthill/fsm"
)

// lostPodOffline is an Offline node whose peer is dead and whose pod
// Kubernetes evicted from a Kubernetes node that stopped reporting long ago,
// with storage that can move: every condition of evictLostPod holds. Each
// case below takes one of them away.
func lostPodOffline(s *NodeSnapshot) {
	s.PeerAlive = false
	s.PodExists, s.PodReady = false, false
	s.DownSince = t0.Add(-4 * time.Minute)
	s.LostPod = LostPod{
		Terminating: true, UID: "pod-uid-1", DeleteDeadline: t0.Add(-30 * time.Second),
		KubeNode: "worker-3", NodeLost: true, NodeLostSince: t0.Add(-3 * time.Minute), Grace: time.Minute,
		StorageChecked: true, StorageMovable: true,
	}
}

func TestDecideLostPod(t *testing.T) {
	cases := []struct {
		name       string
		mutate     func(*NodeSnapshot)
		wantEvent  fsm.Event
		wantStep   fsm.Step
		wantReason string
	}{
		{name: "a pod stuck on a lost node with movable storage is force-deleted",
			wantStep: NodeEvictLostPod, wantReason: ReasonEvictingLostPod},
		{name: "a pod on node-local storage is never force-deleted; the node waits within its downtime",
			mutate: func(s *NodeSnapshot) {
				s.LostPod.StorageMovable, s.LostPod.StorageNote = false, `claim "brick-0" is on local PV "worker-3-block-0"`
			},
			wantReason: ReasonLostPodStorageLocal},
		{name: "a pod on node-local storage still lets the node fail after the permissible downtime",
			mutate: func(s *NodeSnapshot) {
				s.LostPod.StorageMovable = false
				s.DownSince = t0.Add(-31 * time.Minute)
			},
			wantEvent: NodeMarkFailed, wantReason: ReasonDowntimeExceeded},
		{name: "storage that could not be checked is treated as not movable",
			mutate:     func(s *NodeSnapshot) { s.LostPod.StorageChecked, s.LostPod.StorageMovable = false, false },
			wantReason: ReasonLostPodGrace},
		{name: "a live peer is never evicted, whatever Kubernetes says about its node",
			mutate:    func(s *NodeSnapshot) { s.PeerAlive = true },
			wantEvent: NodePeerRecovered, wantReason: ReasonPeerRecovered},
		{name: "a peer missing from GD2's list gives no proof it is dead, so nothing is forced",
			mutate:     func(s *NodeSnapshot) { s.PeerKnown = false },
			wantReason: ReasonWithinDowntime},
		{name: "nothing is forced while GD2 is unreachable",
			mutate:     func(s *NodeSnapshot) { s.GD2Reachable = false },
			wantReason: ReasonGD2Unreachable},
		{name: "a pod Kubernetes has not evicted is left to its tolerations",
			mutate:     func(s *NodeSnapshot) { s.LostPod.Terminating = false },
			wantReason: ReasonWithinDowntime},
		{name: "a terminating pod on a Ready node is left to its kubelet",
			mutate:     func(s *NodeSnapshot) { s.LostPod.NodeLost = false },
			wantReason: ReasonWithinDowntime},
		{name: "a pod still inside its termination grace waits for it",
			mutate:     func(s *NodeSnapshot) { s.LostPod.DeleteDeadline = t0.Add(10 * time.Second) },
			wantReason: ReasonLostPodGrace},
		{name: "a node lost for less than the grace waits for it",
			mutate:     func(s *NodeSnapshot) { s.LostPod.NodeLostSince = t0.Add(-20 * time.Second) },
			wantReason: ReasonLostPodGrace},
		{name: "a node that no longer exists counts as lost long enough",
			mutate:   func(s *NodeSnapshot) { s.LostPod.NodeLostSince = time.Time{} },
			wantStep: NodeEvictLostPod, wantReason: ReasonEvictingLostPod},
		{name: "a maintenance request wins over the eviction",
			mutate:    func(s *NodeSnapshot) { s.Request = RequestMaintenance },
			wantEvent: NodeEnterMaintenance, wantReason: ReasonMaintenanceRequested},
		{name: "a decommission request wins over the eviction",
			mutate:    func(s *NodeSnapshot) { s.Request = RequestDecommission },
			wantEvent: NodeDrain, wantReason: ReasonDecommissionRequested},
		{name: "a pod without a UID is not deleted blindly",
			mutate:     func(s *NodeSnapshot) { s.LostPod.UID = "" },
			wantReason: ReasonLostPodGrace},
	}
	def := NodeDefinition()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := healthyNode(NodeOffline)
			lostPodOffline(&s)
			if tc.mutate != nil {
				tc.mutate(&s)
			}
			got := DecideNode(s)
			if got.Event != tc.wantEvent || got.Step != tc.wantStep || got.Reason != tc.wantReason {
				t.Fatalf("DecideNode() = event %q step %q reason %s (%s), want event %q step %q reason %s",
					got.Event, got.Step, got.Reason, got.Message, tc.wantEvent, tc.wantStep, tc.wantReason)
			}
			checkDecisionIsAllowed(t, def, NodeOffline, got)
			if got.Waiting() && got.RequeueAfter <= 0 {
				t.Errorf("a wait on a lost pod must requeue: no watch event is guaranteed to end it")
			}
		})
	}
}

// The step is only ever decided in Offline: in every other state a pod
// stuck on a lost node is not the node machine's business (Maintenance is
// the admin's, Failed rebuilds elsewhere, the upgrade states time out to
// Offline first).
func TestEvictLostPodOnlyInOffline(t *testing.T) {
	for _, st := range NodeDefinition().States {
		s := healthyNode(st.Name)
		lostPodOffline(&s)
		if got := DecideNode(s); got.Step == NodeEvictLostPod && st.Name != NodeOffline {
			t.Errorf("state %s decided %s", st.Name, got.Step)
		}
	}
}

func TestLostPodWaitNamesWhatPinsThePod(t *testing.T) {
	s := healthyNode(NodeOffline)
	lostPodOffline(&s)
	s.LostPod.StorageMovable, s.LostPod.StorageNote = false, `claim "brick-0" is on local PV "worker-3-block-0"`
	got := DecideNode(s)
	if !strings.Contains(got.Message, "worker-3-block-0") || !strings.Contains(got.Message, "worker-3") {
		t.Errorf("message %q does not name the lost node and the pinning PV", got.Message)
	}
	if want := 26 * time.Minute; got.RequeueAfter != want {
		t.Errorf("RequeueAfter = %s, want the rest of the permissible downtime %s", got.RequeueAfter, want)
	}
}

func TestLostPodStorage(t *testing.T) {
	network := PVFacts{Name: "pv-net"}
	hostPinned := PVFacts{Name: "pv-host", HostTerms: []bool{true}}
	brick := func(pv PVFacts) PodVolumeFacts {
		return PodVolumeFacts{Name: "brick-0", Claim: "gc-z1-a-brick-0", Read: true, PV: pv}
	}
	lvm := PodVolumeFacts{Name: "lvm", HostPath: true, Path: "/run/lvm", HostInterface: true}
	secret := PodVolumeFacts{Name: "gd2-auth"}
	unread := PodVolumeFacts{Name: "state", Claim: "gc-z1-a-state"}
	cases := []struct {
		name        string
		volumes     []PodVolumeFacts
		wantChecked bool
		wantNote    string // a phrase the note holds, "" for an empty note
	}{
		{name: "a pod whose claims are all on network storage may follow a forced delete",
			volumes: []PodVolumeFacts{lvm, secret, brick(network)}, wantChecked: true},
		{name: "a pod without volumes may follow a forced delete", wantChecked: true},
		{name: "the host interfaces every host has do not pin the pod",
			volumes: []PodVolumeFacts{lvm, {Name: "modules", HostPath: true, Path: "/lib/modules", HostInterface: true}}, wantChecked: true},
		{name: "any other host path pins the pod, and is named",
			volumes: []PodVolumeFacts{lvm, {Name: "devices", HostPath: true, Path: "/dev/sdb"}}, wantChecked: true,
			wantNote: `volume "devices" is host path /dev/sdb`},
		{name: "a claim on node-local storage pins the pod, and names its claim and PV",
			volumes: []PodVolumeFacts{brick(hostPinned)}, wantChecked: true,
			wantNote: `claim "gc-z1-a-brick-0" is on PV "pv-host", whose node affinity names its host`},
		{name: "a claim that could not be read leaves the storage unchecked",
			volumes: []PodVolumeFacts{brick(network), unread}},
		{name: "a claim that could not be read after one that pins the pod changes nothing",
			volumes: []PodVolumeFacts{brick(PVFacts{Name: "pv-local", Local: true}), unread}, wantChecked: true,
			wantNote: "a local volume"},
		{name: "the first volume that pins the pod is the one named",
			volumes: []PodVolumeFacts{{Name: "srv", HostPath: true, Path: "/srv"}, brick(hostPinned)}, wantChecked: true,
			wantNote: `volume "srv"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			checked, note := LostPodStorage(tc.volumes)
			if checked != tc.wantChecked || (note == "") != (tc.wantNote == "") || !strings.Contains(note, tc.wantNote) {
				t.Fatalf("checked %t, note %q; want checked %t, a note saying %q", checked, note, tc.wantChecked, tc.wantNote)
			}
		})
	}
}

func TestPVFactsNodeLocal(t *testing.T) {
	cases := []struct {
		name string
		pv   PVFacts
		want string // "" when the volume can move
	}{
		{name: "a local volume is node-local", pv: PVFacts{Local: true, HostTerms: []bool{true}}, want: "a local volume"},
		{name: "a host path is node-local even without affinity", pv: PVFacts{HostPath: true}, want: "a host path"},
		{name: "a volume whose only affinity term names its host is node-local", pv: PVFacts{HostTerms: []bool{true}},
			want: "whose node affinity names its host"},
		{name: "a volume whose every affinity term names a host is node-local", pv: PVFacts{HostTerms: []bool{true, true}},
			want: "whose node affinity names its host"},
		{name: "a volume with one affinity term free of hosts can move within it", pv: PVFacts{HostTerms: []bool{true, false}}},
		{name: "a volume limited to a zone can move within it", pv: PVFacts{HostTerms: []bool{false}}},
		{name: "a volume without affinity can move anywhere", pv: PVFacts{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.pv.NodeLocal(); got != tc.want {
				t.Fatalf("NodeLocal = %q, want %q", got, tc.want)
			}
		})
	}
}
