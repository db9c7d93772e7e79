package effects

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/gluster/anthill/kube/objects"
	"github.com/gluster/anthill/transitions"
)

// The forced delete carries the UID it decided on: the real API server
// refuses it for a replacement pod (Conflict), which counts as done.
func TestForceDeleteLostPodSendsGraceZeroAndTheUID(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: objects.NodePodName("n1"), UID: "uid-1"}}
	cs := kubefake.NewClientset(pod)
	ops := &Kube{Client: cs}
	if err := ops.ForceDeleteLostPod(context.Background(), transitions.NodeTarget{Namespace: "ns", Name: "n1", LostPodUID: "uid-1"}); err != nil {
		t.Fatal(err)
	}
	var seen bool
	for _, a := range cs.Actions() {
		if a.GetVerb() != "delete" {
			continue
		}
		seen = true
		opts := a.(interface{ GetDeleteOptions() metav1.DeleteOptions }).GetDeleteOptions()
		if opts.GracePeriodSeconds == nil || *opts.GracePeriodSeconds != 0 {
			t.Errorf("grace period %v, want 0", opts.GracePeriodSeconds)
		}
		if opts.Preconditions == nil || opts.Preconditions.UID == nil || *opts.Preconditions.UID != "uid-1" {
			t.Errorf("preconditions %+v, want the decided UID", opts.Preconditions)
		}
	}
	if !seen {
		t.Fatal("no delete was sent")
	}
	// Gone already: success.
	if err := ops.ForceDeleteLostPod(context.Background(), transitions.NodeTarget{Namespace: "ns", Name: "n1", LostPodUID: "uid-1"}); err != nil {
		t.Errorf("deleting a pod that is gone: %v", err)
	}
}
