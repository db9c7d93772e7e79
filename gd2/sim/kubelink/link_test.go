package kubelink

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestHostFromPod(t *testing.T) {
	ready := corev1.PodStatus{Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}}
	now := metav1.Now()
	cases := []struct {
		name      string
		pod       corev1.Pod
		wantName  string
		wantAddr  string
		wantAlive bool
	}{
		{"hostname and subdomain", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"},
			Spec: corev1.PodSpec{Hostname: "c-a-0", Subdomain: "c-nodes"}, Status: ready},
			"c-a-0", "c-a-0.c-nodes.ns.svc:24008", true},
		{"pod name fallback, not ready", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns"}},
			"p", "p:24008", false},
		{"terminating pod is down", corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", DeletionTimestamp: &now}, Status: ready},
			"p", "p:24008", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := HostFromPod(&tc.pod)
			if h.Name != tc.wantName || h.Address != tc.wantAddr || h.Alive != tc.wantAlive {
				t.Errorf("got %+v", h)
			}
		})
	}
}
