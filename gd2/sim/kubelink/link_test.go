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

func TestHostFromPodReadsGD2PeerID(t *testing.T) {
	const id = "5c1f0c3e-7d3a-4c55-9d0e-2a5e8f4b6a11"
	env := func(v string) []corev1.EnvVar {
		return []corev1.EnvVar{{Name: "OTHER", Value: "x"}, {Name: PeerIDEnv, Value: v}}
	}
	cases := []struct {
		name       string
		containers []corev1.Container
		want       string
	}{
		{"from the glusterd2 container", []corev1.Container{{Name: "sidecar", Env: env("other")}, {Name: GD2Container, Env: env(id)}}, id},
		{"glusterd2 container without it", []corev1.Container{{Name: "sidecar", Env: env(id)}, {Name: GD2Container}}, ""},
		{"first container setting it", []corev1.Container{{Name: "a"}, {Name: "gluster", Env: env(id)}}, id},
		{"unset", []corev1.Container{{Name: GD2Container}}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: tc.containers}}
			if got := HostFromPod(&p).PeerID; got != tc.want {
				t.Errorf("PeerID %q, want %q", got, tc.want)
			}
		})
	}
}

func TestHostFromPodReportsTheBuildOfItsImage(t *testing.T) {
	for _, tc := range []struct{ image, want string }{
		{"registry.example.com/gluster/glusterd2:4.1.0", "v4.1.0-0"},
		{"registry.example.com:5000/gluster/glusterd2:v4.1", "v4.1-0"},
		{"glusterd2:v5", "v5-0"},
		{"glusterd2:5", ""},
		{"docker.io/gluster/glusterd2-nightly@sha256:f964e1462b4a4a23a85c3e43d91857a1650f8dc10b08fa1deb86dcadbfcd75d2", ""},
		{"docker.io/gluster/glusterd2-nightly:20190111", ""},
		{"docker.io/gluster/glusterd2-nightly:latest", ""},
		{"registry.example.com:5000/gluster/glusterd2", ""},
		{"", ""},
	} {
		p := corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{Containers: []corev1.Container{
			{Name: "sidecar", Image: "registry.example.com/other:1.0"}, {Name: GD2Container, Image: tc.image},
		}}}
		if got := HostFromPod(&p).Version; got != tc.want {
			t.Errorf("image %q: version %q, want %q", tc.image, got, tc.want)
		}
	}
}
