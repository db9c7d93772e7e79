package node

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/machines/gather"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

func TestPVFactsReadWhatMakesAVolumeNodeLocal(t *testing.T) {
	hostAffinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: objects.HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"worker-3"}}},
	}}}}
	zoneAffinity := &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
		MatchExpressions: []corev1.NodeSelectorRequirement{{Key: objects.ZoneLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"zone-1"}}},
	}}}}
	cases := []struct {
		name  string
		spec  corev1.PersistentVolumeSpec
		local bool
	}{
		{name: "a local volume is node-local", local: true,
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/dev/sdb"}}, NodeAffinity: hostAffinity}},
		{name: "a host path is node-local even without affinity", local: true,
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/srv"}}}},
		{name: "a CSI volume pinned to a host is node-local", local: true,
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, NodeAffinity: hostAffinity}},
		{name: "a CSI volume pinned to a node by its name field is node-local", local: true,
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchFields: []corev1.NodeSelectorRequirement{{Key: "metadata.name", Operator: corev1.NodeSelectorOpIn, Values: []string{"worker-3"}}},
				}}}}}},
		{name: "a CSI volume pinned to a host in one term but free in another can move",
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: append(
					slices.Clone(hostAffinity.Required.NodeSelectorTerms), zoneAffinity.Required.NodeSelectorTerms...)}}}},
		{name: "a CSI volume limited to a zone can move within it",
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}, NodeAffinity: zoneAffinity}},
		{name: "a CSI volume without affinity can move anywhere",
			spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "d", VolumeHandle: "h"}}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why := pvFacts(&corev1.PersistentVolume{Spec: tc.spec}).NodeLocal()
			if (why != "") != tc.local {
				t.Errorf("NodeLocal = %q, want node-local %t", why, tc.local)
			}
		})
	}
}

// lostPodFixture brings the fixture's node Offline (offlineFixture), then
// puts its pod where Kubernetes leaves a pod evicted
// from an unreachable node: terminating, past its grace period, bound to a
// node whose Ready condition has been Unknown for three minutes. The
// pod's brick claim is bound to pv.
func lostPodFixture(t *testing.T, pv *corev1.PersistentVolume) *nodeFixture {
	t.Helper()
	f := offlineFixture(t)
	ctx := context.Background()
	now := f.clock.Now()
	claim := objects.BrickClaimName("gc-z1-a", 0)
	pod, err := f.kube.CoreV1().Pods("ns").Get(ctx, objects.NodePodName("gc-z1-a"), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pod.UID = "pod-uid-1"
	pod.Spec.NodeName = "worker-3"
	// The pod's volumes are the GD2 pod's own host interfaces (LVM's run
	// directory, the kernel's modules, which every host has) and secret,
	// with the brick claim (its state on a claim, not the host).
	obj, _, err := f.nodes.GetByKey("ns/gc-z1-a")
	if err != nil || obj == nil {
		t.Fatalf("the fixture's node: %v", err)
	}
	node := obj.(*operatorv1alpha1.GlusterNode)
	cobj, _, err := f.clusters.GetByKey("ns/" + node.Spec.Cluster)
	if err != nil || cobj == nil {
		t.Fatalf("the fixture's cluster: %v", err)
	}
	sts := objects.NodeStatefulSet(cobj.(*operatorv1alpha1.GlusterCluster), node, "")
	pod.Spec.Volumes = nil
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.HostPath == nil || objects.HostInterfaceVolume(v.Name) {
			pod.Spec.Volumes = append(pod.Spec.Volumes, v)
		}
	}
	pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: "brick-0", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	pod.DeletionTimestamp = &metav1.Time{Time: now.Add(-30 * time.Second)}
	if _, err := f.kube.CoreV1().Pods("ns").Update(ctx, pod, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := f.pods.Update(pod); err != nil {
		t.Fatal(err)
	}
	pvc, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pvc.Spec.VolumeName = pv.Name
	if _, err := f.kube.CoreV1().PersistentVolumeClaims("ns").Update(ctx, pvc, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.kube.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	kn := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "worker-3"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{
		Type: corev1.NodeReady, Status: corev1.ConditionUnknown, LastTransitionTime: metav1.Time{Time: now.Add(-3 * time.Minute)},
	}}}}
	if _, err := f.kube.CoreV1().Nodes().Create(ctx, kn, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	f.syncer.Live = f.kube
	f.kube.ClearActions()
	return f
}

func podDeletes(f *nodeFixture) []metav1.DeleteOptions {
	var out []metav1.DeleteOptions
	for _, a := range f.kube.Actions() {
		if a.GetVerb() == "delete" && a.GetResource().Resource == "pods" {
			out = append(out, a.(interface{ GetDeleteOptions() metav1.DeleteOptions }).GetDeleteOptions())
		}
	}
	return out
}

func TestNodeSyncerEvictsALostPodWhoseStorageCanMove(t *testing.T) {
	f := lostPodFixture(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-net"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{Driver: "net.example.com", VolumeHandle: "vol-1"}}}})
	// The forced delete goes on record first, and runs in the next sync.
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if l := f.node().Status.Ledger; len(l) != 1 || l[0].Action != operatorv1alpha1.LedgerActionEvictLostPod || len(podDeletes(f)) != 0 {
		t.Fatalf("ledger %+v, pod deletes %+v; want the forced delete on record before it runs", l, podDeletes(f))
	}
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	dels := podDeletes(f)
	if len(dels) != 1 || dels[0].Preconditions == nil || *dels[0].Preconditions.UID != "pod-uid-1" || *dels[0].GracePeriodSeconds != 0 {
		t.Fatalf("pod deletes %+v, want one forced delete of pod-uid-1", dels)
	}
	n := f.node()
	last := n.Status.History[len(n.Status.History)-1]
	if n.Status.State != string(states.NodeOffline) || last.Event != string(states.NodeEvictLostPod) || last.Reason != states.ReasonEvictingLostPod {
		t.Fatalf("state %s, last history entry %+v; want Offline with the evictLostPod step recorded", n.Status.State, last)
	}
	found := false
	for len(f.events.Events) > 0 {
		if e := <-f.events.Events; strings.Contains(e, states.ReasonEvictingLostPod) {
			found = true
		}
	}
	if !found {
		t.Error("no Kubernetes Event announces the forced delete")
	}
}

func TestNodeSyncerNeverEvictsAPodOnNodeLocalStorage(t *testing.T) {
	f := lostPodFixture(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "worker-3-block-0"}, Spec: corev1.PersistentVolumeSpec{
		PersistentVolumeSource: corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: "/dev/sdb"}},
		NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
			MatchExpressions: []corev1.NodeSelectorRequirement{{Key: objects.HostnameLabel, Operator: corev1.NodeSelectorOpIn, Values: []string{"worker-3"}}},
		}}}}}})
	for range 3 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if dels := podDeletes(f); len(dels) != 0 {
		t.Fatalf("a pod on node-local storage was deleted: %+v", dels)
	}
	n := f.node()
	reason := ""
	for _, c := range n.Status.Conditions {
		if c.Type == operatorv1alpha1.ConditionProgressing {
			reason = c.Reason
		}
	}
	if n.Status.State != string(states.NodeOffline) || !strings.Contains(n.Status.Message, "worker-3-block-0") {
		t.Fatalf("state %s (%s), message %q; want Offline naming the local PV", n.Status.State, reason, n.Status.Message)
	}
}

// offlineFixture brings the fixture's node Online, then kills its peer so
// that it goes Offline: the first report records the outage, and the node
// leaves Online once the offline grace has passed.
func offlineFixture(t *testing.T) *nodeFixture {
	t.Helper()
	f := newNodeFixture(t)
	for range 2 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.sim.SetPeerAlive(f.node().Status.PeerID, false); err != nil {
		t.Fatal(err)
	}
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	f.clock.Step(gather.DefaultOfflineGrace)
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if s := f.node().Status.State; s != string(states.NodeOffline) {
		t.Fatalf("peer down past the grace: state %s, want Offline", s)
	}
	return f
}
