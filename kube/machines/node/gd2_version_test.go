package node

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/gluster/anthill/gd2/sim"
	operatorv1alpha1 "github.com/gluster/anthill/kube/apis/operator/v1alpha1"
	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/states"
)

// setPod gives the node's pod uid and its GD2 host the build version.
func (f *nodeFixture) setPod(uid types.UID, version string) {
	f.t.Helper()
	obj, ok, err := f.pods.GetByKey("ns/" + objects.NodePodName("gc-z1-a"))
	if err != nil || !ok {
		f.t.Fatalf("pod: %v %t", err, ok)
	}
	pod := obj.(*corev1.Pod).DeepCopy()
	pod.UID = uid
	if err := f.pods.Update(pod); err != nil {
		f.t.Fatal(err)
	}
	n := f.node()
	if err := f.sim.UpsertHost(sim.HostSpec{Name: objects.NodePodName(n.Name), Address: objects.NodeAddress(n), Alive: true, Version: version}); err != nil {
		f.t.Fatal(err)
	}
}

func versionCondition(t *testing.T, n *operatorv1alpha1.GlusterNode) *metav1.Condition {
	t.Helper()
	c := apimeta.FindStatusCondition(n.Status.Conditions, operatorv1alpha1.ConditionVersionMatches)
	if c == nil {
		t.Fatalf("no VersionMatches condition in %+v", n.Status.Conditions)
	}
	return c
}

// The node machine reads GET /version from the node's own GD2 once per
// ready pod, records it, and says in VersionMatches whether it is the
// version anthill records; a new pod on another build is read again and
// is a mismatch.
func TestNodeSyncerRecordsTheVersionGD2Reports(t *testing.T) {
	f := newNodeFixture(t)
	f.setPod("pod-1", "v4.1.0-0")
	for range 3 {
		if _, err := f.sync(); err != nil {
			t.Fatal(err)
		}
	}
	n := f.node()
	if n.Status.State != string(states.NodeOnline) || n.Status.Version != "4.1.0" {
		t.Fatalf("state %s at version %q, want Online at 4.1.0", n.Status.State, n.Status.Version)
	}
	if r := n.Status.GD2Version; r == nil || r.Reported != "v4.1.0-0" || r.Pod != "pod-1" {
		t.Fatalf("gd2Version %+v, want v4.1.0-0 read from pod-1", r)
	}
	if c := versionCondition(t, n); c.Status != metav1.ConditionTrue || c.Reason != states.ReasonVersionMatches {
		t.Fatalf("VersionMatches %s %s: %s", c.Status, c.Reason, c.Message)
	}
	reads := f.calls.Count("GET /version")
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	if got := f.calls.Count("GET /version"); got != reads {
		t.Fatalf("the same pod's GD2 was read again: %d reads, want %d", got, reads)
	}

	// The pod is replaced by one whose image runs another build: until it
	// is read, the old pod's reading says nothing; then it is a mismatch.
	f.setPod("pod-2", "v6.0-sim")
	if _, err := f.sync(); err != nil {
		t.Fatal(err)
	}
	n = f.node()
	if r := n.Status.GD2Version; r == nil || r.Reported != "v6.0-sim" || r.Pod != "pod-2" {
		t.Fatalf("gd2Version %+v, want v6.0-sim read from pod-2", r)
	}
	c := versionCondition(t, n)
	if c.Status != metav1.ConditionFalse || c.Reason != states.ReasonVersionMismatch {
		t.Fatalf("VersionMatches %s %s: %s", c.Status, c.Reason, c.Message)
	}
	t.Logf("VersionMatches False: %s", c.Message)
}

func TestRecordGD2VersionIgnoresAReadingOfAnEarlierPod(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	n := &operatorv1alpha1.GlusterNode{Status: operatorv1alpha1.GlusterNodeStatus{
		Version: "4.1.1", GD2Version: &operatorv1alpha1.GD2VersionStatus{Reported: "v4.1.0-0", Pod: "old"},
	}}
	recordGD2Version(n, gd2Version{pod: "new"}, now)
	if c := versionCondition(t, n); c.Status != metav1.ConditionUnknown || c.Reason != states.ReasonVersionNotRead {
		t.Fatalf("VersionMatches %s %s, want Unknown VersionNotRead", c.Status, c.Reason)
	}
}

func TestVersionReadDue(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	read := func(pod string, ago time.Duration) *operatorv1alpha1.GD2VersionStatus {
		return &operatorv1alpha1.GD2VersionStatus{Pod: pod, ReadTime: metav1.NewTime(now.Add(-ago))}
	}
	for _, tc := range []struct {
		name string
		last *operatorv1alpha1.GD2VersionStatus
		v    gd2Version
		want bool
	}{
		{"a pod not ready is not read", nil, gd2Version{}, false},
		{"a ready pod never read is read", nil, gd2Version{pod: "a"}, true},
		{"the pod read before is not read again", read("a", 48*time.Hour), gd2Version{pod: "a"}, false},
		{"a new pod is read", read("a", time.Minute), gd2Version{pod: "b"}, true},
		{"a server without a pod is read at first", nil, gd2Version{external: true}, true},
		{"a server without a pod is not read again within the interval", read("", time.Minute), gd2Version{external: true}, false},
		{"a server without a pod is read again after the interval", read("", ExternalVersionReadInterval), gd2Version{external: true}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := versionReadDue(tc.last, tc.v, now); got != tc.want {
				t.Fatalf("due %t, want %t", got, tc.want)
			}
		})
	}
}
